import { execFile, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { directUrlOf } from "./pgbouncer.ts";

/** The real server as a child process, for start, signal and restart tests. */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** everything the server wrote (stdout and stderr) so far */
  output(): string;
  /** the file that holds it */
  logFile: string;
  /** sends the signal (to npm alone, with `npmStart`) and resolves with the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** resolves with the exit code once the child (node, or npm) has exited */
  exited: Promise<number | null>;
}

export interface StartOptions {
  /** `npm start` as its user runs it, in a process group of its own (the child is npm) */
  npmStart?: boolean;
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const START_SCRIPT = path.join(ROOT, "scripts/start.sh");

/**
 * Starts the server as production does (scripts/start.sh, or `npm start`): with the production
 * defaults (no NODE_ENV=test, which vitest sets and under which Apollo Server installs no signal
 * handlers of its own; the default log level), changed only through the documented configuration
 * variables in `env`. What it writes goes to a file (`logFile`), never silenced.
 */
export async function startServer(env: Record<string, string>, timeoutMs = 60_000, options: StartOptions = {}): Promise<ServerProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: "0", ...env };
  // npm run test:pgbouncer: a DATABASE_URL through the run's PgBouncer comes with its direct URL
  const direct = env.DATABASE_URL && !("DATABASE_DIRECT_URL" in env) ? directUrlOf(env.DATABASE_URL) : undefined;
  if (direct) childEnv.DATABASE_DIRECT_URL = direct;
  delete childEnv.NODE_ENV;
  // the server as npm start runs it (scripts/start.sh), with this node
  if (!options.npmStart) childEnv.NODE = process.execPath;
  const [command, args] = options.npmStart ? ["npm", ["start"]] : ["sh", [START_SCRIPT]];
  const child = spawn(command, args, { cwd: ROOT, env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: options.npmStart });
  const logFile = path.join(os.tmpdir(), `gateway-server-${process.pid}-${child.pid}.log`);
  // written as it arrives, so that output() always has what the server has said so far
  writeFileSync(logFile, "");
  let stdout = "";
  child.stdout!.on("data", (chunk) => {
    stdout += chunk;
    appendFileSync(logFile, chunk);
  });
  child.stderr!.on("data", (chunk) => appendFileSync(logFile, chunk));
  const output = () => readFileSync(logFile, "utf8");
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  // the file has everything once both pipes have ended
  const flushed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${output()}`)), timeoutMs);
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on("data", check);
    void exited.then(async (code) => {
      clearTimeout(timer);
      await flushed;
      reject(new Error(`server exited with ${code} before starting:\n${output()}`));
    });
  }).catch(async (error: unknown) => {
    if (options.npmStart) await killGroup(child.pid!);
    throw error;
  });
  const done = exited.then(async (code) => (await flushed, code));
  return {
    url,
    child,
    output,
    logFile,
    exited: done,
    async stop(signal = "SIGTERM") {
      child.kill(signal);
      return done;
    },
  };
}

/** The processes of process group `pgid` still running (a zombie, dead but not yet reaped, is not). */
export async function groupProcesses(pgid: number): Promise<string[]> {
  const { stdout } = await run("ps", ["-eo", "pid=,pgid=,stat=,args="]);
  return stdout
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, group, stat]) => pid && Number(group) === pgid && !stat!.startsWith("Z"))
    .map((fields) => fields.join(" "));
}

/** SIGKILL to every process of group `pgid`, if any is left. */
export async function killGroup(pgid: number): Promise<void> {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // none left
  }
}

/** Where PostgreSQL's server binaries are (PG_BIN, or Debian's), if they are installed. */
function postgresBinaries(): string | undefined {
  const candidates = [process.env.PG_BIN, "/usr/lib/postgresql/15/bin"];
  try {
    for (const version of readdirSync("/usr/lib/postgresql")) candidates.push(`/usr/lib/postgresql/${version}/bin`);
  } catch {
    // no Debian PostgreSQL
  }
  return candidates.find((dir) => dir && existsSync(path.join(dir, "initdb")));
}

/**
 * Why a test that needs its own PostgreSQL cluster cannot run here, or undefined when it can:
 * the binaries are installed, or this is CI / a PostgreSQL run (scripts/pg-cluster.sh installs them).
 */
export function pgClusterUnavailable(): string | undefined {
  if (postgresBinaries() || process.env.CI || process.env.TEST_DATABASE_URL) return undefined;
  return "PostgreSQL server binaries (initdb, pg_ctl) are not installed and this is neither CI nor a TEST_DATABASE_URL run";
}

/** A free TCP port on loopback (free when asked; good enough for a throwaway cluster). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A throwaway PostgreSQL cluster of its own (scripts/pg-cluster.sh), which a test may stop and start. */
export interface PgCluster {
  url: string;
  port: number;
  dir: string;
  /** fast shutdown, keeping the data (every session is terminated, 57P01) */
  down(): Promise<void>;
  /** starts it again on the same port and data */
  up(): Promise<void>;
  /** stops it and removes its directory */
  remove(): Promise<void>;
}

const run = promisify(execFile);
const PG_CLUSTER = path.join(ROOT, "scripts/pg-cluster.sh");

export async function startPgCluster(): Promise<PgCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "gateway-pgc-"));
  const port = await freePort();
  const env = { ...process.env, ...(postgresBinaries() ? { PG_BIN: postgresBinaries() } : {}) };
  const script = (...args: string[]) => run("bash", [PG_CLUSTER, ...args], { env });
  try {
    const { stdout } = await script("start", dir, String(port));
    const url = stdout.trim().split("\n").pop()!;
    return {
      url,
      port,
      dir,
      down: async () => void (await script("down", dir)),
      up: async () => void (await script("up", dir, String(port))),
      remove: async () => {
        await script("stop", dir).catch(() => {});
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await script("stop", dir).catch(() => {});
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
