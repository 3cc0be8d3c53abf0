/**
 * What every part of the benchmark shares: options, the machine, the PostgreSQL cluster, the
 * server processes under test, HTTP helpers and the shape of a part's result.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Writable } from "node:stream";
import { spawnChild, type Child } from "./rpc.ts";
import type { ServiceReady } from "./service-process.ts";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const LIB = import.meta.dirname;

export type DbKind = "pglite" | "postgres";
export const DB_LABEL: Record<DbKind, string> = { pglite: "PGlite (embedded)", postgres: "PostgreSQL 15" };

export interface Options {
  quick: boolean;
  databases: DbKind[];
  /** where the filtered list is also measured with 1,000,000 cases in the domain: PostgreSQL in a
   * full run, every database with `--million` */
  million: DbKind[];
  /** part names to run (all when empty) */
  only: Set<string>;
  out: string;
  /** where to write every part's figures as JSON too (the CI gate reads them), if anywhere */
  figures?: string;
}

export function parseOptions(argv: string[]): Options {
  const args = new Set(argv);
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  };
  const databases: DbKind[] =
    args.has("--postgres") && !args.has("--pglite")
      ? ["postgres"]
      : args.has("--pglite") && !args.has("--postgres")
        ? ["pglite"]
        : ["pglite", "postgres"];
  return {
    quick: args.has("--quick"),
    databases,
    million: args.has("--million") ? databases : args.has("--quick") ? [] : databases.filter((d) => d === "postgres"),
    only: new Set((value("--only") ?? "").split(",").filter(Boolean)),
    out: path.resolve(value("--out") ?? path.join(ROOT, "bench", "RESULTS.md")),
    figures: value("--figures") && path.resolve(value("--figures")!),
  };
}

export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** CPU model, cores and RAM, from os and /proc. */
export function machine(): string {
  let model = os.cpus()[0]?.model?.trim() ?? "unknown CPU";
  let memKb = os.totalmem() / 1024;
  try {
    const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
    model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? model;
    const meminfo = readFileSync("/proc/meminfo", "utf8");
    memKb = Number(/^MemTotal:\s*(\d+)/m.exec(meminfo)?.[1] ?? memKb);
  } catch {
    // not Linux: os is enough
  }
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  return `${model}, ${os.availableParallelism()} cores, ${(memKb / 2 ** 20).toFixed(1)} GiB RAM, ${os.platform()} ${os.release()}, Node ${process.version}; load average at start ${load}`;
}

/** A throwaway PostgreSQL cluster (scripts/pg-cluster.sh): its URL, and how to remove it. */
export async function startCluster(): Promise<{ url: string; stop: () => void }> {
  const script = path.join(ROOT, "scripts/pg-cluster.sh");
  for (let attempt = 1; ; attempt++) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "bench-pg-"));
    const port = String(45000 + Math.floor(Math.random() * 10000));
    try {
      const url = execFileSync(script, ["start", dir, port], { stdio: ["ignore", "pipe", "pipe"] })
        .toString()
        .trim();
      return { url, stop: () => execFileSync(script, ["stop", dir]) };
    } catch (error) {
      // most often the random port is taken: remove the cluster and try another
      execFileSync(script, ["stop", dir], { stdio: "ignore" });
      if (attempt === 5) throw error;
    }
  }
}

export type Service = Child<ServiceReady>;

export interface ServiceOptions {
  /** a further process on a PostgreSQL database another one seeded */
  join?: boolean;
  /** configuration (environment variables) over the benchmark's */
  config?: Record<string, string>;
  /** run the multimedia worker, as a production process does */
  workers?: boolean;
  /** start Node with --expose-gc (the `memory` call then collects first) */
  exposeGc?: boolean;
  /** LOG_LEVEL (silent by default): the lines then go to the child's stderr, a pipe for the caller to read */
  logLevel?: string;
  /** the child's stderr instead of that pipe: a pipe that another process (a log shipper's stand-in) reads */
  stderr?: Writable;
}

/**
 * scripts/start.sh's memory settings (a capped young generation, one malloc arena, glibc's trim
 * threshold fixed), given to every service process here, so that what a part measures of its memory
 * and speed is what production runs.
 */
export const START_MEMORY = {
  execArgv: ["--max-semi-space-size=8"],
  env: { MALLOC_ARENA_MAX: "1", MALLOC_TRIM_THRESHOLD_: "131072" },
};

/** Our service in its own process, on a fresh database (PGlite in memory, or the cluster's), with START_MEMORY. */
export function startService(kind: DbKind, url?: string, options: ServiceOptions = {}): Promise<Service> {
  const args = kind === "postgres" ? ["postgres", url!, ...(options.join ? ["join"] : [])] : ["pglite"];
  return spawnChild<ServiceReady>(path.join(LIB, "service-process.ts"), args, {
    env: {
      ...START_MEMORY.env,
      ...(options.config ? { BENCH_SERVICE_CONFIG: JSON.stringify(options.config) } : {}),
      ...(options.workers ? { BENCH_WORKERS: "1" } : {}),
      ...(options.logLevel ? { BENCH_LOG_LEVEL: options.logLevel } : {}),
    },
    execArgv: [...START_MEMORY.execArgv, ...(options.exposeGc ? ["--expose-gc"] : [])],
    ...(options.stderr ? { stderr: options.stderr } : options.logLevel ? { stderr: "pipe" as const } : {}),
  });
}

export type Peer = Child<{ url: string }>;

/** PostGraphile 5 (amber preset) over the same database, in its own process. */
export function startPeer(url: string): Promise<Peer> {
  return spawnChild<{ url: string }>(path.join(LIB, "peer-process.ts"), [url], { env: { GRAPHILE_ENV: "production" } });
}

/** Everything a per-database part gets. */
export interface DbContext {
  kind: DbKind;
  label: string;
  quick: boolean;
  service: Service;
  /** the PostgreSQL cluster's URL (PostgreSQL only), for parts that start servers of their own */
  databaseUrl?: string;
  /** PostGraphile on the same data; only where it applies (PostgreSQL) */
  peer?: Peer;
  /** cases seeded before the parts run */
  cases: number;
}

/** What a part returns: its section of RESULTS.md and its headline figures for the targets. */
export interface PartResult {
  markdown: string;
  figures: Record<string, number>;
}

export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export async function getJson<T = any>(url: string, authorization: string): Promise<T> {
  const res = await fetch(url, { headers: { Authorization: authorization, Accept: "application/json" } });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${(await res.text()).slice(0, 500)}`);
  return (await res.json()) as T;
}

export async function graphql<T = any>(endpoint: string, query: string, variables: Record<string, unknown>, authorization?: string): Promise<T> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", ...(authorization ? { Authorization: authorization } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
  if (res.status !== 200 || body.errors?.length || !body.data) {
    throw new Error(`GraphQL ${endpoint}: ${res.status} ${JSON.stringify(body.errors ?? body).slice(0, 800)}`);
  }
  return body.data;
}
