/**
 * Start time and memory of the server as production starts it (scripts/start.sh): the part `start`
 * of `npm run bench`, and bench/tools/start-footprint.ts. Two ways of starting are compared run by
 * run, alternating, each on a database a first start migrated (so neither pays for initdb or
 * migrations): by default the TypeScript sources through tsx (the baseline) and the compiled
 * JavaScript under dist/ (RUN_COMPILED=true, as the container image runs it).
 * Measured per start: spawn to the "listening on" line (wall) and the CPU the process had used by
 * then (user + system, all its threads: on a loaded machine the wall time is mostly waiting for a
 * core, the CPU time much less so); resident size 5 s after it (idle: main.ts has collected the
 * start-up's garbage by then) and the process's peak (VmHWM) at that moment.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DB_LABEL, log, ROOT, startCluster, table, type DbKind, type PartResult } from "./lib/harness.ts";
import { median, ms, ratio } from "./lib/stats.ts";

const IDLE_AFTER_MS = 5000;
/** Linux's clock ticks per second (/proc's CPU times) */
const CLOCK_TICKS = 100;

/** One way of starting: which checkout, compiled or through tsx. */
export interface StartWay {
  label: string;
  root: string;
  compiled: boolean;
}

/** The sources through tsx against the compiled build, in this checkout. */
export const SOURCES_AND_COMPILED: [StartWay, StartWay] = [
  { label: "tsx (sources)", root: ROOT, compiled: false },
  { label: "compiled (dist/)", root: ROOT, compiled: true },
];

interface Sample {
  readyMs: number;
  cpuMs: number;
  idleMb: number;
  peakMb: number;
}

/** VmRSS and VmHWM of a process, in MB. */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s*(\\d+)`, "m").exec(status)![1]);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

/** User + system CPU of a process (all its threads) so far, in ms. */
function cpuMs(pid: number): number {
  // the fields after the command's closing parenthesis: utime and stime are the 12th and 13th
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

async function startOnce(way: StartWay, env: Record<string, string>): Promise<Sample> {
  const started = performance.now();
  const child = spawn("sh", ["scripts/start.sh"], {
    cwd: way.root,
    env: { ...process.env, ...env, PORT: "0", WORKERS: "1", RUN_COMPILED: String(way.compiled), NODE: process.execPath },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr.on("data", (chunk) => (output += chunk));
  const ready = await new Promise<{ readyMs: number; cpuMs: number }>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (/listening on http/.test(output)) resolve({ readyMs: performance.now() - started, cpuMs: cpuMs(child.pid!) });
    });
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  });
  await sleep(IDLE_AFTER_MS);
  const { rss, hwm } = memory(child.pid!);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  return { ...ready, idleMb: rss, peakMb: hwm };
}

/** Builds dist/ in every checkout the ways start from (`npm run build`). */
export function buildWays(ways: readonly StartWay[]): void {
  for (const root of new Set(ways.map((way) => way.root))) execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
}

/** `runs` starts each way on `kind`, alternating: the rows of the table, and the second way's medians. */
export async function measureStarts(
  kind: DbKind,
  ways: readonly [StartWay, StartWay],
  runs: number,
): Promise<{ rows: string[][]; second: Record<keyof Sample, number> }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-start-"));
  const cluster = kind === "postgres" ? await startCluster() : undefined;
  const env: Record<string, string> = { DATA_DIR: dataDir, ...(cluster ? { DATABASE_URL: cluster.url } : {}) };
  try {
    await startOnce(ways[1], env); // creates and migrates the database
    const samples: Sample[][] = [[], []];
    for (let run = 0; run < runs; run++) {
      for (const index of run % 2 ? [1, 0] : [0, 1]) samples[index]!.push(await startOnce(ways[index]!, env));
    }
    const values = (index: number, field: keyof Sample) => samples[index]!.map((sample) => sample[field]);
    const cell = (index: number, field: keyof Sample, unit: string) => {
      const all = values(index, field);
      return `${ms(median(all))} ${unit} (${ms(Math.min(...all))}–${ms(Math.max(...all))})`;
    };
    const row = (label: string, field: keyof Sample, unit: string) => [
      `${DB_LABEL[kind]}: ${label}`,
      cell(0, field, unit),
      cell(1, field, unit),
      ratio(median(values(1, field)) / median(values(0, field))),
    ];
    const fields: (keyof Sample)[] = ["readyMs", "cpuMs", "idleMb", "peakMb"];
    return {
      rows: [
        row("start to ready (wall)", "readyMs", "ms"),
        row("CPU to ready", "cpuMs", "ms"),
        row("idle RSS", "idleMb", "MB"),
        row("peak RSS", "peakMb", "MB"),
      ],
      second: Object.fromEntries(fields.map((field) => [field, median(values(1, field))])) as Record<keyof Sample, number>,
    };
  } finally {
    cluster?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The part `start`: the compiled server against the sources through tsx, on each database, with
 * the compiled figures the targets read (`readyMs`, `idleMb` by database: `pgliteReadyMs`…).
 */
export async function startFootprint(kinds: readonly DbKind[], quick: boolean): Promise<PartResult> {
  const runs = quick ? 3 : 5;
  buildWays(SOURCES_AND_COMPILED);
  const rows: string[][] = [];
  const figures: Record<string, number> = {};
  for (const kind of kinds) {
    log(`start and memory: ${DB_LABEL[kind]}, ${runs} starts each way`);
    const measured = await measureStarts(kind, SOURCES_AND_COMPILED, runs);
    rows.push(...measured.rows);
    figures[`${kind}ReadyMs`] = measured.second.readyMs;
    figures[`${kind}CpuMs`] = measured.second.cpuMs;
    figures[`${kind}IdleMb`] = measured.second.idleMb;
  }
  const markdown = [
    `### Start to ready and idle memory, on a database migrated by an earlier start (${runs} starts each way, alternating)`,
    "",
    table(["", SOURCES_AND_COMPILED[0].label, SOURCES_AND_COMPILED[1].label, "compiled ÷ tsx"], rows),
    "",
    "Medians (lowest–highest). Each start through scripts/start.sh with production defaults (one multimedia worker); idle RSS 5 s after the ready line.",
  ].join("\n");
  return { markdown, figures };
}
