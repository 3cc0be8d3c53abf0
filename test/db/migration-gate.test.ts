import { PGlite } from "@electric-sql/pglite";
import { afterEach, describe, expect, it } from "vitest";
import { pgliteDatabase, type Database } from "../../src/db/client.ts";
import { migrateToCurrent, pendingMigrations } from "../../src/db/migration-gate.ts";
import { migrationNames } from "../../src/db/migrate.ts";
import { freshDatabase } from "../helpers/db.ts";

/**
 * CONTRACT §7.5 at the level of the rule: what "current" means (every migration of
 * prisma/migrations recorded as finished and not rolled back), and that a process finding the
 * schema current neither takes the migration lock nor starts the schema engine.
 * test/process/migrations.test.ts starts the processes.
 */

let db: Database | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

/** `db` whose migration lock and schema engine fail the moment anything reaches for them. */
function untouchable(db: Database): Database {
  const refuse = async (): Promise<never> => {
    throw new Error("the schema engine was started");
  };
  return {
    ...db,
    // a connection to this URL (the lock's) would be refused
    url: db.url && "postgresql://nobody@127.0.0.1:1/none",
    adapterFactory: { ...db.adapterFactory, connect: refuse, connectToShadowDb: refuse },
  };
}

describe("§7.5 migrations at start", () => {
  it("§7.5: a new database has every migration pending", async () => {
    db = pgliteDatabase(await PGlite.create());
    expect(await pendingMigrations(db.prisma)).toEqual(await migrationNames());
  });

  it("§7.5: a current database has none pending, and migrating it takes no lock and starts no engine", async () => {
    db = await freshDatabase();
    expect(await pendingMigrations(db.prisma)).toEqual([]);
    expect(await migrateToCurrent(untouchable(db))).toEqual([]);
  });

  it("§7.5: a migration rolled back (or never finished) is pending", async () => {
    db = await freshDatabase();
    const last = (await migrationNames()).at(-1)!;
    await db.prisma.$executeRaw`UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = ${last}`;
    expect(await pendingMigrations(db.prisma)).toEqual([last]);
  });
});
