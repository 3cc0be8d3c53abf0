import { fork } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory, SqlQuery } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { PrismaClient } from "../generated/prisma/client.ts";
import { log } from "../log.ts";
import { wellFormed } from "../util/text.ts";

export type Prisma = PrismaClient;

/** An open database: one Prisma client per process, and the adapter factory migrations use. */
export interface Database {
  kind: "pglite" | "postgres";
  prisma: PrismaClient;
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  /** the connection string in PostgreSQL mode: requests' statements, perhaps through a transaction pooler */
  url?: string;
  /**
   * In PostgreSQL mode, a direct connection (DATABASE_DIRECT_URL, else `url`) for what needs a
   * session of its own, which a transaction-pooling PgBouncer hands to another client after every
   * transaction: the event bus's LISTEN, the migration lock (a session advisory lock) and the
   * migrations, and pg-boss (its LISTEN). What stays on `url`, because it lives within one
   * transaction: Prisma's statements and interactive transactions (adapter-pg sends unnamed
   * statements only), `pg_advisory_xact_lock` and `FOR UPDATE` inside them, the bus's NOTIFY (sent
   * at commit, one statement at a time, so in order), the blob store's chunks (BEGIN … COMMIT on
   * one checked-out client) and the rate-limit counters.
   */
  directUrl?: string;
  /** the embedded engine, in PGlite mode */
  pglite?: PGlite;
  /** the connection pool, in PostgreSQL mode (its use is a metric) */
  pool?: pg.Pool;
  close(): Promise<void>;
}

export function clientFor(adapterFactory: SqlMigrationAwareDriverAdapterFactory): PrismaClient {
  return new PrismaClient({ adapter: adapterFactory });
}

/** A query parameter with every string (also inside a list) made well-formed UTF-16. */
function wellFormedArg(arg: unknown): unknown {
  if (typeof arg === "string") return wellFormed(arg);
  return Array.isArray(arg) ? arg.map(wellFormedArg) : arg;
}

/**
 * The adapter (or a transaction of it) with its query parameters made well-formed. PGlite can
 * encode unpaired surrogates as invalid UTF-8 (always two low ones in a row), which PostgreSQL
 * refuses (22021: a 500), where node-postgres sends U+FFFD; with this, both modes see the same text, and a lookup by such a
 * string finds nothing instead of failing.
 */
function withWellFormedArgs<T extends object>(target: T): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== "function") return value;
      if (prop === "queryRaw" || prop === "executeRaw") {
        return (query: SqlQuery) => value.call(obj, { ...query, args: query.args.map(wellFormedArg) });
      }
      if (prop === "startTransaction") return async (...args: unknown[]) => withWellFormedArgs(await value.apply(obj, args));
      return value.bind(obj);
    },
  });
}

/**
 * PGlite's adapter factory, whose connections pass well-formed parameters (see above). The adapter
 * (and the PGlite module it loads) is imported on the first connection: a process on PostgreSQL
 * never loads either.
 */
function pgliteAdapterFactory(pglite: PGlite): SqlMigrationAwareDriverAdapterFactory {
  let factory: Promise<SqlMigrationAwareDriverAdapterFactory> | undefined;
  const loaded = () => (factory ??= import("pglite-prisma-adapter").then(({ PrismaPGlite }) => new PrismaPGlite(pglite)));
  return {
    // the adapter's own (it names itself by its package)
    provider: "postgres",
    adapterName: "pglite-prisma-adapter",
    connect: async () => withWellFormedArgs(await (await loaded()).connect()),
    connectToShadowDb: async () => withWellFormedArgs(await (await loaded()).connectToShadowDb()),
  };
}

/** Wraps an already-open PGlite (tests hand in a clone of a migrated template). */
export function pgliteDatabase(pglite: PGlite): Database {
  const adapterFactory = pgliteAdapterFactory(pglite);
  const prisma = clientFor(adapterFactory);
  return {
    kind: "pglite",
    prisma,
    adapterFactory,
    pglite,
    async close() {
      await prisma.$disconnect();
      await pglite.close();
    },
  };
}

/**
 * PostgreSQL through adapter-pg's pool. When the server goes away (restart, outage), pooled clients
 * that see the connection drop are reported here instead of crashing the process, and pg's pool
 * discards them (an errored client is never handed out again); new connections are made on demand
 * once the server is back. A connection attempt gives up after `connectTimeoutMs`, so that a
 * request during an outage fails (503) in bounded time instead of hanging.
 *
 * With `statementTimeoutMs`, PostgreSQL cancels any statement of the client's pool that runs longer
 * (SQLSTATE 57014, answered QUERY_TIMEOUT), so that no statement keeps a connection and the server's
 * CPU for minutes after its request gave up (security review 2026-11-26, G4). Migrations, which may
 * rightly run longer, get a small pool of their own without it; the job queue, the event bus and the
 * blob store open their own connections, without it too.
 *
 * With a `directUrl` other than `url`, `url` is a transaction pooler (PgBouncer), which refuses any
 * startup parameter it does not track ("unsupported startup parameter: statement_timeout"): the
 * timeout is then the pooler's or the role's to set (docs/operations.md, PgBouncer), and
 * migrations run on the direct connection.
 */
export function postgresDatabase(url: string, poolSize = 10, connectTimeoutMs = 5000, statementTimeoutMs = 0, directUrl = url): Database {
  let lastReport = 0;
  const report = (what: string) => (error: Error) => {
    // one line per second at most: an outage drops every pooled connection at once
    if (Date.now() - lastReport < 1000) return;
    lastReport = Date.now();
    log.error(what, { error: { name: error.name, code: (error as { code?: string }).code, message: error.message } });
  };
  const pooled = directUrl !== url;
  // The pools are ours, so that their use can be read (a metric) and they are ended here, after the
  // client. Their idle clients' errors are handled here for their whole life: adapter-pg removes its
  // own handler from a pool it did not make whenever a client of the factory is disposed, and an idle
  // client's error with no handler would crash the process.
  const openPool = (connectionString: string, max: number, timeoutMs: number) => {
    const opened = new pg.Pool({
      connectionString,
      max,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      ...(timeoutMs > 0 ? { statement_timeout: timeoutMs } : {}),
    });
    opened.on("error", report("database connection lost (idle)"));
    return opened;
  };
  const factoryOf = (of: pg.Pool) => new PrismaPg(of, { onConnectionError: report("database connection lost") });
  const pool = openPool(url, poolSize, pooled ? 0 : statementTimeoutMs);
  const adapterFactory = factoryOf(pool);
  const prisma = clientFor(adapterFactory);
  // pg opens a pool's connections on first use only: this one costs nothing until migrations run
  const migrationPool = pooled ? directMigrationPool(openPool(directUrl, 2, 0)) : statementTimeoutMs > 0 ? openPool(url, 2, 0) : pool;
  return {
    kind: "postgres",
    prisma,
    adapterFactory: migrationPool === pool ? adapterFactory : factoryOf(migrationPool),
    url,
    directUrl,
    pool,
    async close() {
      await prisma.$disconnect();
      await pool.end();
      if (migrationPool !== pool) await migrationPool.end();
    },
  };
}

/**
 * Behind a pooler the statement timeout is set on the role or by the pooler, and so may reach the
 * direct connection too: migrations' sessions clear it (a session SET, which a direct connection keeps).
 */
function directMigrationPool(pool: pg.Pool): pg.Pool {
  pool.on("connect", (client) => void client.query("SET statement_timeout = 0").catch(() => {}));
  return pool;
}

/**
 * Behind a pooler, DATABASE_STATEMENT_TIMEOUT_MS cannot travel with the connection: says so at start
 * when the pooled sessions carry no timeout, which leaves a runaway statement uncancelled.
 */
async function warnOfUntimedPool(db: Database, statementTimeoutMs: number): Promise<void> {
  if (statementTimeoutMs <= 0 || db.directUrl === db.url) return;
  // a check, not a dependency: an unreachable database is the migrations' to report
  const rows = await db.prisma.$queryRawUnsafe<{ statement_timeout: string }[]>("SHOW statement_timeout").catch(() => []);
  if (rows[0]?.statement_timeout !== "0") return;
  log.warn(
    "DATABASE_URL goes through a pooler (DATABASE_DIRECT_URL is set), which cannot carry DATABASE_STATEMENT_TIMEOUT_MS, and its sessions have no statement timeout: set one on the role (ALTER ROLE … SET statement_timeout) or in PgBouncer (connect_query)",
    { databaseStatementTimeoutMs: statementTimeoutMs },
  );
}

/**
 * PGlite's own start parameters, and the buffer cache. initdb writes PostgreSQL's default of 128 MB,
 * which the embedded server, in the process's own memory, came to fill: a third of its resident
 * size at idle. The operating system's page cache still holds the data files.
 */
function pgliteStartParams(defaults: string[], cacheMb: number): string[] {
  return [...defaults, "-c", `shared_buffers=${cacheMb}MB`];
}

/** A new embedded database is made by pglite-initdb.ts in a child process (see there why). */
async function initdbApart(pgdata: string, startParams: string[]): Promise<void> {
  if (existsSync(path.join(pgdata, "PG_VERSION"))) return;
  // pglite-initdb.js beside the compiled client, pglite-initdb.ts beside the source
  const script = fileURLToPath(new URL(`./pglite-initdb${path.extname(import.meta.url)}`, import.meta.url));
  const child = fork(script, [pgdata, ...startParams], { execArgv: [], stdio: "inherit" });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`creating the embedded database in ${pgdata} failed (exit code ${code})`);
}

export async function openDatabase(options: {
  databaseUrl?: string;
  databaseDirectUrl?: string;
  dataDir: string;
  embeddedCacheMb: number;
  databaseStatementTimeoutMs?: number;
}): Promise<Database> {
  if (options.databaseUrl) {
    const timeoutMs = options.databaseStatementTimeoutMs ?? 0;
    const db = postgresDatabase(options.databaseUrl, 10, 5000, timeoutMs, options.databaseDirectUrl ?? options.databaseUrl);
    await warnOfUntimedPool(db, timeoutMs);
    return db;
  }
  // PGlite does not create parent folders of its data directory.
  await mkdir(options.dataDir, { recursive: true });
  const pgdata = path.join(options.dataDir, "pgdata");
  const { PGlite } = await import("@electric-sql/pglite");
  const startParams = pgliteStartParams(PGlite.defaultStartParams, options.embeddedCacheMb);
  await initdbApart(pgdata, startParams);
  const pglite = await PGlite.create(pgdata, { startParams });
  return pgliteDatabase(pglite);
}
