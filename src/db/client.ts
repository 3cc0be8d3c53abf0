import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../generated/prisma/client.ts";
import { log } from "../log.ts";

export type Prisma = PrismaClient;

/** An open database: one Prisma client per process, and the adapter factory migrations use. */
export interface Database {
  kind: "pglite" | "postgres";
  prisma: PrismaClient;
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  /** the connection string in PostgreSQL mode (LISTEN/NOTIFY needs its own connection) */
  url?: string;
  /** the embedded engine, in PGlite mode */
  pglite?: PGlite;
  close(): Promise<void>;
}

export function clientFor(adapterFactory: SqlMigrationAwareDriverAdapterFactory): PrismaClient {
  return new PrismaClient({ adapter: adapterFactory });
}

/** Wraps an already-open PGlite (tests hand in a clone of a migrated template). */
export function pgliteDatabase(pglite: PGlite): Database {
  const adapterFactory = new PrismaPGlite(pglite);
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
 */
export function postgresDatabase(url: string, poolSize = 10, connectTimeoutMs = 5000): Database {
  let lastReport = 0;
  const report = (what: string) => (error: Error) => {
    // one line per second at most: an outage drops every pooled connection at once
    if (Date.now() - lastReport < 1000) return;
    lastReport = Date.now();
    log.error(what, { error: { name: error.name, code: (error as { code?: string }).code, message: error.message } });
  };
  const adapterFactory = new PrismaPg(
    { connectionString: url, max: poolSize, connectionTimeoutMillis: connectTimeoutMs, keepAlive: true },
    { onPoolError: report("database connection lost (idle)"), onConnectionError: report("database connection lost") },
  );
  const prisma = clientFor(adapterFactory);
  return {
    kind: "postgres",
    prisma,
    adapterFactory,
    url,
    async close() {
      await prisma.$disconnect();
    },
  };
}

export async function openDatabase(options: { databaseUrl?: string; dataDir: string }): Promise<Database> {
  if (options.databaseUrl) return postgresDatabase(options.databaseUrl);
  // PGlite does not create parent folders of its data directory.
  await mkdir(options.dataDir, { recursive: true });
  const pglite = await PGlite.create(`${options.dataDir}/pgdata`);
  return pgliteDatabase(pglite);
}
