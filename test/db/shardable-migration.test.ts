import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgliteDatabase, type Database } from "../../src/db/client.ts";
import { applyMigrations, MIGRATIONS_DIR, migrationNames } from "../../src/db/migrate.ts";

/**
 * CONTRACT §7.6: the migration that gives form_cases and app_versions their domain_id fills it
 * from the parent row for the rows already there, and for rows a process of the previous release
 * inserts without it while the release rolls out. On the embedded database (the SQL is the same
 * on PostgreSQL; test/db/shardable.test.ts reads the result on both).
 */

const MIGRATION = "domain_ids_and_no_update_cascade";

let db: Database;
let dir: string;
const ids = {
  ours: "00000000-0000-4000-8000-000000000001",
  theirs: "00000000-0000-4000-8000-000000000002",
  form: "00000000-0000-4000-8000-000000000010",
  case: "00000000-0000-4000-8000-000000000020",
  laterForm: "00000000-0000-4000-8000-000000000011",
};

/** Every migration before `name`, in a folder of their own. */
async function migrationsBefore(name: string): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), "migrations-"));
  await cp(path.join(MIGRATIONS_DIR, "migration_lock.toml"), path.join(folder, "migration_lock.toml"));
  for (const m of (await migrationNames()).filter((m) => m < name)) {
    await cp(path.join(MIGRATIONS_DIR, m), path.join(folder, m), { recursive: true });
  }
  return folder;
}

/** The rows the previous release writes, in its own statements (no domain_id on the children). */
async function writeAsPreviousRelease(db: Database, formId: string): Promise<void> {
  await db.prisma.$executeRawUnsafe(
    `INSERT INTO forms (id, domain_id, xmlns, user_id, username, device_id, received_on, xml)
     VALUES ('${formId}', '${ids.ours}', 'x', '${ids.ours}', 'u', 'd', now(), '<x/>')`,
  );
  await db.prisma.$executeRawUnsafe(`INSERT INTO form_cases (form_id, case_id, position) VALUES ('${formId}', '${ids.case}', 0)`);
}

beforeAll(async () => {
  const [name] = (await migrationNames()).filter((m) => m.endsWith(`_${MIGRATION}`));
  expect(name).toBeDefined();
  db = pgliteDatabase(await PGlite.create());
  dir = await migrationsBefore(name!);
  await applyMigrations(db.adapterFactory, dir);
  await db.prisma.$executeRawUnsafe(`INSERT INTO domains (id, name) VALUES ('${ids.ours}', 'ours'), ('${ids.theirs}', 'theirs')`);
  await db.prisma.$executeRawUnsafe(
    `INSERT INTO apps (id, domain_id, name, doc_type, updated_at) VALUES ('a1', '${ids.ours}', 'a', 'Application', now()),
                                                                         ('a2', '${ids.theirs}', 'b', 'Application', now())`,
  );
  await db.prisma.$executeRawUnsafe(`INSERT INTO app_versions (app_id, version, name, source) VALUES ('a1', 1, 'a', '{}'), ('a2', 1, 'b', '{}')`);
  await db.prisma.$executeRawUnsafe(
    `INSERT INTO cases (id, domain_id, case_type, case_name, owner_id, date_opened, last_modified, server_last_modified, indexed_on)
     VALUES ('${ids.case}', '${ids.ours}', 't', 'n', 'o', now(), now(), now(), now())`,
  );
  await writeAsPreviousRelease(db, ids.form);
  expect(await applyMigrations(db.adapterFactory)).toContain(name);
});

afterAll(async () => {
  await db?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("§7.6 domain_id on form_cases and app_versions", () => {
  it("§7.6: the rows already there get the domain of their form or app", async () => {
    expect(await db.prisma.$queryRawUnsafe(`SELECT app_id, domain_id::text FROM app_versions ORDER BY app_id`)).toEqual([
      { app_id: "a1", domain_id: ids.ours },
      { app_id: "a2", domain_id: ids.theirs },
    ]);
    expect(await db.prisma.$queryRawUnsafe(`SELECT form_id::text, domain_id::text FROM form_cases`)).toEqual([
      { form_id: ids.form, domain_id: ids.ours },
    ]);
  });

  it("§7.6: a row the previous release inserts without domain_id gets it from its parent", async () => {
    await writeAsPreviousRelease(db, ids.laterForm);
    await db.prisma.$executeRawUnsafe(`INSERT INTO app_versions (app_id, version, name, source) VALUES ('a2', 2, 'b', '{}')`);
    expect(await db.prisma.$queryRawUnsafe(`SELECT domain_id::text FROM form_cases WHERE form_id = '${ids.laterForm}'`)).toEqual([
      { domain_id: ids.ours },
    ]);
    expect(await db.prisma.$queryRawUnsafe(`SELECT domain_id::text FROM app_versions WHERE app_id = 'a2' AND version = 2`)).toEqual([
      { domain_id: ids.theirs },
    ]);
  });

  it("§7.6: domain_id is required once filled (NOT NULL, no check constraint left behind)", async () => {
    const columns = await db.prisma.$queryRawUnsafe(
      `SELECT table_name, is_nullable FROM information_schema.columns
        WHERE column_name = 'domain_id' AND table_name IN ('form_cases', 'app_versions') ORDER BY 1`,
    );
    expect(columns).toEqual([
      { table_name: "app_versions", is_nullable: "NO" },
      { table_name: "form_cases", is_nullable: "NO" },
    ]);
    const checks = await db.prisma.$queryRawUnsafe(`SELECT conname FROM pg_constraint WHERE contype = 'c' AND conname LIKE '%domain_id_filled'`);
    expect(checks).toEqual([]);
  });
});
