import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chown, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "./process.ts";

/**
 * Debian's PgBouncer (1.18) in transaction pooling mode on loopback, in front of a PostgreSQL
 * server, for tests: every database of the server passes through (`* = host=… port=…`), so that
 * the fresh database of each test does too, and every user is let in as the server lets it in
 * (the test clusters trust loopback). As root it runs as `postgres` (PgBouncer refuses root).
 *
 *   const bouncer = await startPgBouncer({ upstreamUrl: "postgresql://postgres@127.0.0.1:5432/postgres" });
 *   bouncer.url("mydb")  // postgresql://postgres@127.0.0.1:PORT/mydb, through the pooler
 *   await bouncer.stop();
 */

export interface PgBouncer {
  port: number;
  /** the URL of `database` (and the upstream URL's user) through the pooler */
  url(database: string): string;
  /** what PgBouncer logged so far */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** the server behind it: any URL of it (its host, port and user are used) */
  upstreamUrl: string;
  /** server connections per database and user (PgBouncer's default_pool_size; default 20) */
  poolSize?: number;
  /** the pooled sessions' statement timeout, set by PgBouncer (docs/operations.md); default 15000, 0: none */
  statementTimeoutMs?: number;
}

const BINARY = "/usr/sbin/pgbouncer";

/** Why PgBouncer cannot run here, or undefined when it can (CI installs it: .ci/run). */
export function pgBouncerUnavailable(): string | undefined {
  if (existsSync(BINARY) || process.env.CI) return undefined;
  return "pgbouncer is not installed (apt-get install -y pgbouncer)";
}

function config(upstream: URL, port: number, dir: string, poolSize: number, statementTimeoutMs: number): string {
  const timeout = statementTimeoutMs > 0 ? ` connect_query='SET statement_timeout = ${statementTimeoutMs}'` : "";
  return `[databases]
* = host=${upstream.hostname} port=${upstream.port || 5432}${timeout}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/users.txt
pool_mode = transaction
default_pool_size = ${poolSize}
max_client_conn = 2000
; the tests' databases come and go: their idle server connections should not outlive them long
server_idle_timeout = 5
server_lifetime = 60
logfile = ${dir}/pgbouncer.log
pidfile = ${dir}/pgbouncer.pid
`;
}

/** Resolves once something accepts connections on `port`, or rejects after `timeoutMs`. */
async function listening(port: number, timeoutMs: number, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    if (exited() || Date.now() > deadline) throw new Error(`pgbouncer did not start on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const upstream = new URL(options.upstreamUrl);
  const user = decodeURIComponent(upstream.username || "postgres");
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), "gateway-pgbouncer-"));
  await writeFile(path.join(dir, "users.txt"), `"${user}" ""\n`);
  await writeFile(path.join(dir, "pgbouncer.ini"), config(upstream, port, dir, options.poolSize ?? 20, options.statementTimeoutMs ?? 15_000));
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? { uid: Number(execFileSync("id", ["-u", "postgres"])), gid: Number(execFileSync("id", ["-g", "postgres"])) } : {};
  if (asRoot) for (const entry of ["", "users.txt", "pgbouncer.ini"]) await chown(path.join(dir, entry), ids.uid!, ids.gid!);
  const child = spawn(BINARY, [path.join(dir, "pgbouncer.ini")], { ...ids, stdio: "ignore" });
  let exited = false;
  const gone = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  const log = () => (existsSync(path.join(dir, "pgbouncer.log")) ? readFileSync(path.join(dir, "pgbouncer.log"), "utf8") : "");
  const stop = async () => {
    if (!exited) child.kill("SIGINT");
    await gone;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await listening(port, 10_000, () => exited);
  } catch (error) {
    const said = log();
    await stop();
    throw new Error(`${(error as Error).message}\n${said}`);
  }
  return {
    port,
    url(database) {
      const url = new URL(options.upstreamUrl);
      url.port = String(port);
      url.hostname = "127.0.0.1";
      url.pathname = `/${database}`;
      return url.toString();
    },
    log,
    stop,
  };
}

/**
 * In a `npm run test:pgbouncer` run (TEST_PGBOUNCER_URL beside TEST_DATABASE_URL): the direct URL
 * of a database that `url` reaches through the run's PgBouncer, else undefined.
 */
export function directUrlOf(url: string): string | undefined {
  const bouncer = process.env.TEST_PGBOUNCER_URL;
  const server = process.env.TEST_DATABASE_URL;
  if (!bouncer || !server || !URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  if (parsed.host !== new URL(bouncer).host) return undefined;
  parsed.host = new URL(server).host;
  return parsed.toString();
}

/** In a `npm run test:pgbouncer` run, the URL of `database` through the run's PgBouncer, else undefined. */
export function pooledUrlOf(directUrl: string): string | undefined {
  const bouncer = process.env.TEST_PGBOUNCER_URL;
  if (!bouncer) return undefined;
  const parsed = new URL(directUrl);
  parsed.host = new URL(bouncer).host;
  return parsed.toString();
}
