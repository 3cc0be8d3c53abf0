/**
 * Start time and memory of the server as production starts it (scripts/start.sh), from the
 * TypeScript sources through tsx against the compiled JavaScript under dist/ (RUN_COMPILED=true),
 * on each database: `npx tsx bench/tools/start-footprint.ts [runs] [--pglite|--postgres]`.
 * Builds dist/ first (`npm run build`). Each run starts a process on a database migrated by a
 * first start, so neither way pays for initdb or migrations; the ways alternate, run by run.
 * Measured per run: spawn to the "listening on" line; resident size 5 s after it (idle: main.ts
 * has collected the start-up's garbage by then) and the process's peak (VmHWM) at that moment.
 * Prints medians and the compiled/tsx ratios as markdown, with the machine and date.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DB_LABEL, ROOT, machine, startCluster, table, type DbKind } from "../lib/harness.ts";
import { median, ms, ratio } from "../lib/stats.ts";

const RUNS = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? 5);
const KINDS: DbKind[] = process.argv.includes("--pglite") ? ["pglite"] : process.argv.includes("--postgres") ? ["postgres"] : ["pglite", "postgres"];
const IDLE_AFTER_MS = 5000;
const WAYS = { tsx: "false", compiled: "true" } as const;
type Way = keyof typeof WAYS;

interface Sample {
  readyMs: number;
  idleMb: number;
  peakMb: number;
}

/** VmRSS and VmHWM of a process, in MB. */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s*(\\d+)`, "m").exec(status)![1]);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

async function startOnce(way: Way, env: Record<string, string>): Promise<Sample> {
  const started = performance.now();
  const child = spawn("sh", ["scripts/start.sh"], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: "0", WORKERS: "1", RUN_COMPILED: WAYS[way], NODE: process.execPath },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr.on("data", (chunk) => (output += chunk));
  const readyMs = await new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (/listening on http/.test(output)) resolve(performance.now() - started);
    });
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
  });
  await sleep(IDLE_AFTER_MS);
  const { rss, hwm } = memory(child.pid!);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  return { readyMs, idleMb: rss, peakMb: hwm };
}

async function measure(kind: DbKind): Promise<string[][]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-start-"));
  const cluster = kind === "postgres" ? await startCluster() : undefined;
  const env: Record<string, string> = { DATA_DIR: dataDir, ...(cluster ? { DATABASE_URL: cluster.url } : {}) };
  try {
    await startOnce("compiled", env); // creates and migrates the database
    const samples: Record<Way, Sample[]> = { tsx: [], compiled: [] };
    for (let run = 0; run < RUNS; run++) {
      for (const way of run % 2 ? (["compiled", "tsx"] as const) : (["tsx", "compiled"] as const)) {
        samples[way].push(await startOnce(way, env));
        process.stderr.write(".");
      }
    }
    const of = (way: Way, field: keyof Sample) => median(samples[way].map((sample) => sample[field]));
    const row = (label: string, field: keyof Sample, unit: string) => [
      `${DB_LABEL[kind]}: ${label}`,
      `${ms(of("tsx", field))} ${unit}`,
      `${ms(of("compiled", field))} ${unit}`,
      ratio(of("compiled", field) / of("tsx", field)),
    ];
    return [row("start to ready", "readyMs", "ms"), row("idle RSS", "idleMb", "MB"), row("peak RSS", "peakMb", "MB")];
  } finally {
    cluster?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: "ignore" });
const rows: string[][] = [];
for (const kind of KINDS) rows.push(...(await measure(kind)));
process.stderr.write("\n");
console.log(`${new Date().toISOString().slice(0, 10)}, ${machine()}; ${RUNS} starts each way, medians\n`);
console.log(table(["", "tsx (sources)", "compiled (dist/)", "compiled / tsx"], rows));
