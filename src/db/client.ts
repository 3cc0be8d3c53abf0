import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../generated/prisma/client.ts";

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

export function postgresDatabase(url: string, poolSize = 10): Database {
  const adapterFactory = new PrismaPg({ connectionString: url, max: poolSize });
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
