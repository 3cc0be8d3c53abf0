/**
 * Start time and memory of the server as production starts it (scripts/start.sh), on each database:
 * `npx tsx bench/tools/start-footprint.ts [runs] [--pglite|--postgres] [--baseline DIR]`.
 * Without --baseline: the TypeScript sources through tsx against the compiled JavaScript under dist/
 * (RUN_COMPILED=true). With --baseline DIR (another checkout, e.g. a worktree of an older commit,
 * with its node_modules): that checkout's compiled build against this one's, so a change's
 * before/after is measured in one run. Builds dist/ first (`npm run build`, in both checkouts).
 * Each run starts a process on a database migrated by a first start, so neither way pays for initdb
 * or migrations; the ways alternate, run by run.
 * Measured per run: spawn to the "listening on" line (wall) and the CPU the process had used by then
 * (user + system, all its threads: on a loaded machine the wall time is mostly waiting for a core,
 * the CPU time much less so); resident size 5 s after it (idle: main.ts has collected the
 * start-up's garbage by then) and the process's peak (VmHWM) at that moment.
 * Prints medians with the lowest and highest run, the ratios, the machine, date and load as markdown.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DB_LABEL, ROOT, machine, startCluster, table, type DbKind } from "../lib/harness.ts";
import { median, ms, ratio } from "../lib/stats.ts";

const args = process.argv.slice(2);
const RUNS = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 5);
const KINDS: DbKind[] = args.includes("--pglite") ? ["pglite"] : args.includes("--postgres") ? ["postgres"] : ["pglite", "postgres"];
const baselineAt = args.indexOf("--baseline");
const BASELINE_ROOT = baselineAt >= 0 ? path.resolve(args[baselineAt + 1]!) : undefined;
const IDLE_AFTER_MS = 5000;
/** Linux's clock ticks per second (/proc's CPU times) */
const CLOCK_TICKS = 100;

/** One way of starting: which checkout, compiled or through tsx. */
interface Way {
  label: string;
  root: string;
  compiled: boolean;
}
const WAYS: [Way, Way] = BASELINE_ROOT
  ? [
      { label: `baseline (${path.basename(BASELINE_ROOT)}, compiled)`, root: BASELINE_ROOT, compiled: true },
      { label: "this checkout (compiled)", root: ROOT, compiled: true },
    ]
  : [
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

async function startOnce(way: Way, env: Record<string, string>): Promise<Sample> {
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

async function measure(kind: DbKind): Promise<string[][]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-start-"));
  const cluster = kind === "postgres" ? await startCluster() : undefined;
  const env: Record<string, string> = { DATA_DIR: dataDir, ...(cluster ? { DATABASE_URL: cluster.url } : {}) };
  try {
    await startOnce(WAYS[1], env); // creates and migrates the database
    const samples: Sample[][] = [[], []];
    for (let run = 0; run < RUNS; run++) {
      for (const index of run % 2 ? [1, 0] : [0, 1]) {
        samples[index]!.push(await startOnce(WAYS[index]!, env));
        process.stderr.write(".");
      }
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
    return [
      row("start to ready (wall)", "readyMs", "ms"),
      row("CPU to ready", "cpuMs", "ms"),
      row("idle RSS", "idleMb", "MB"),
      row("peak RSS", "peakMb", "MB"),
    ];
  } finally {
    cluster?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");
for (const root of new Set(WAYS.map((way) => way.root))) execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
// machine() ends with the load average as it is now: at the start
const atStart = machine();
const rows: string[][] = [];
for (const kind of KINDS) rows.push(...(await measure(kind)));
process.stderr.write("\n");
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${atStart}, ${load()} at the end; ${RUNS} starts each way, alternating: medians (lowest–highest)\n`,
);
console.log(table(["", WAYS[0].label, WAYS[1].label, "second / first"], rows));
