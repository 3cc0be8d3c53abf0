import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { loadConfig } from "../../src/config.ts";
import { openDatabase, postgresDatabase, type Database } from "../../src/db/client.ts";
import { applyMigrations } from "../../src/db/migrate.ts";
import { JobQueue } from "../../src/multimedia/job.queue.ts";

/** The template carries pg-boss's schema too, so no test pays for installing it. */
async function installJobQueue(db: Database): Promise<void> {
  const queue = await JobQueue.open(db, { jobLeaseSeconds: 60 });
  await queue.close();
}

/**
 * Migrates one template database per test run; each test then gets a copy of it
 * (PGlite: a copy of the template's data directory, opened as the server opens its own;
 * PostgreSQL: CREATE DATABASE … TEMPLATE).
 * TEST_DATABASE_URL (a PostgreSQL server URL) selects PostgreSQL; otherwise PGlite.
 */
declare module "vitest" {
  export interface ProvidedContext {
    pgliteTemplate: string;
    postgresServer: string;
    postgresTemplate: string;
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export default async function setup(project: TestProject) {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const template = `tmpl_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${template}`);
    const db = postgresDatabase(withDatabase(serverUrl, template), 2);
    await applyMigrations(db.adapterFactory);
    await installJobQueue(db);
    await db.close();
    project.provide("postgresServer", serverUrl);
    project.provide("postgresTemplate", template);
    project.provide("pgliteTemplate", "");
    return async () => {
      // Test databases copy the template, so it can only go once they are gone.
      const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 't\\_%' OR datname = $1", [
        template,
      ]);
      for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
      await admin.end();
    };
  }
  // Memory-backed when the machine has it: every test writes a fresh copy of the ~40 MB directory.
  const root = await mkdtemp(path.join(existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "gateway-test-dbs-"));
  const template = path.join(root, "template");
  const db = await openDatabase({ dataDir: template, embeddedCacheMb: loadConfig({}).embeddedCacheMb });
  await applyMigrations(db.adapterFactory);
  await installJobQueue(db);
  await db.close();
  project.provide("pgliteTemplate", template);
  project.provide("postgresServer", "");
  project.provide("postgresTemplate", "");
  return async () => {
    await rm(root, { recursive: true, force: true });
  };
}
