import pg from "pg";
import { log } from "../log.ts";
import type { Database, Prisma } from "./client.ts";
import { MIGRATIONS_DIR, applyMigrations, migrationNames } from "./migrate.ts";

/**
 * CONTRACT §7.5: any number of processes started together on one database all come up, whether it
 * is new, current or behind. Prisma's schema engine takes `pg_advisory_lock(72707369)` with a 10 s
 * timeout on every run, so processes that each ran it at start failed behind a slow first one. Here
 * a process that finds the schema current never runs the engine (nor takes any lock); one that
 * finds it behind queues on a lock of our own, without a timeout, and looks again once it holds it:
 * by then whoever held it before has usually done the work. The engine's own lock is then free.
 */

/**
 * Our lock, in PostgreSQL's two-key space (which never meets the engine's one-key 72707369).
 * Held on a connection of its own, so that the pool the engine and the services use stays free.
 */
const MIGRATION_LOCK = [72707369, 1] as const;

/** The migrations of `dir` that the database has not recorded as finished (and not rolled back). */
export async function pendingMigrations(prisma: Prisma, dir = MIGRATIONS_DIR): Promise<string[]> {
  const [table] = await prisma.$queryRaw<{ exists: boolean }[]>`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists`;
  const rows = table?.exists
    ? await prisma.$queryRaw<{ migration_name: string }[]>`
        SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`
    : [];
  const applied = new Set(rows.map((row) => row.migration_name));
  return (await migrationNames(dir)).filter((name) => !applied.has(name));
}

/**
 * Brings the schema up to the migrations of `dir` and returns the names this process applied (none
 * when it was current, or another process got there first). Waits, however long, for another
 * process that is migrating; a process that dies releases the lock with its session.
 */
export async function migrateToCurrent(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  if ((await pendingMigrations(db.prisma, dir)).length === 0) return [];
  return serialised(db, async () => {
    if ((await pendingMigrations(db.prisma, dir)).length === 0) return [];
    return applyMigrations(db.adapterFactory, dir);
  });
}

/**
 * Runs `work` holding our migration lock (PostgreSQL); the embedded database has one process. The
 * lock is a session's: on the direct connection, since a transaction pooler would hand the session
 * that holds it to other clients between statements (and the unlock to another session).
 */
async function serialised<T>(db: Database, work: () => Promise<T>): Promise<T> {
  const url = db.directUrl ?? db.url;
  if (!url) return work();
  const client = new pg.Client({ connectionString: url, keepAlive: true });
  // a connection lost while waiting fails the query below; this keeps it from crashing the process
  client.on("error", () => {});
  await client.connect();
  try {
    // the URL's options may carry timeouts meant for requests: this wait has none
    await client.query("SET statement_timeout = 0; SET lock_timeout = 0");
    const [{ locked }] = (await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS locked", [...MIGRATION_LOCK])).rows as [
      { locked: boolean },
    ];
    if (!locked) {
      log.info("waiting for another process to finish migrating the database");
      await client.query("SELECT pg_advisory_lock($1, $2)", [...MIGRATION_LOCK]);
    }
    return await work();
  } finally {
    // ending the session releases the lock too; unlocking first says so at once
    await client.query("SELECT pg_advisory_unlock($1, $2)", [...MIGRATION_LOCK]).catch(() => {});
    await client.end().catch(() => {});
  }
}

/**
 * With MIGRATE_ON_START=false: resolves once `npm run db:migrate` (or anything else) has brought the
 * schema current, looking every `intervalMs`; resolves false instead once `stopped()` says so.
 */
export async function whenCurrent(prisma: Prisma, options: { intervalMs: number; stopped: () => boolean }): Promise<boolean> {
  for (;;) {
    if (options.stopped()) return false;
    const pending = await pendingMigrations(prisma).catch(() => ["(database unreachable)"]);
    if (pending.length === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
  }
}
