import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { inject } from "vitest";
import { pgliteDatabase, postgresDatabase, type Database } from "../../src/db/client.ts";
import { withDatabase } from "../setup/global.ts";

/** A fresh, migrated database for one test, on the engine this run tests (see test/setup/global.ts). */

let pgliteTemplate: Promise<PGlite> | undefined;

async function loadPgliteTemplate(): Promise<PGlite> {
  const file = inject("pgliteTemplate");
  const bytes = await readFile(file);
  return PGlite.create({ loadDataDir: new Blob([bytes]) });
}

/**
 * PostgreSQL copies a template only while nobody else is connected to it, and two copies at once
 * collide ("being accessed by other users", 55006): retry those.
 */
async function copyTemplate(server: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject("postgresTemplate")}`);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== "55006" || attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
      }
    }
  } finally {
    await admin.end();
  }
}

export const usingPostgres = () => inject("postgresServer") !== "";

export async function freshDatabase(): Promise<Database> {
  const server = inject("postgresServer");
  if (server) {
    const name = `t_${randomUUID().replace(/-/g, "")}`;
    await copyTemplate(server, name);
    const db = postgresDatabase(withDatabase(server, name), 5);
    return {
      ...db,
      async close() {
        await db.close();
        const dropper = new pg.Client({ connectionString: server });
        await dropper.connect();
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await dropper.end();
      },
    };
  }
  pgliteTemplate ??= loadPgliteTemplate();
  const clone = (await (await pgliteTemplate).clone()) as PGlite;
  return pgliteDatabase(clone);
}
