/**
 * npm run db:migrate             apply pending migrations to DATABASE_URL or the PGlite in DATA_DIR
 * npm run db:migration -- NAME   write prisma/migrations/<timestamp>_NAME from schema.prisma changes
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { MIGRATIONS_DIR, pendingSchemaSql } from "../src/db/migrate.ts";
import { migrateToCurrent } from "../src/db/migration-gate.ts";

async function deploy() {
  const config = loadConfig();
  const db = await openDatabase(config);
  // the same queue as servers that migrate at start, so running both at once is safe
  const applied = await migrateToCurrent(db);
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
  await db.close();
}

async function create(name: string | undefined) {
  if (!name || !/^[a-z0-9_]+$/.test(name)) throw new Error("usage: npm run db:migration -- <snake_case_name>");
  // The shadow database the diff needs is an in-memory PGlite: no server required.
  const sql = await pendingSchemaSql(new PrismaPGlite(new PGlite()));
  if (!sql.trim() || /^-- This is an empty migration/.test(sql.trim())) {
    console.log("schema.prisma matches the migrations: nothing to write");
    return;
  }
  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const dir = path.join(MIGRATIONS_DIR, `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "migration.sql"), sql);
  console.log(`wrote ${path.relative(process.cwd(), dir)}/migration.sql`);
}

const [command, arg] = process.argv.slice(2);
try {
  if (command === "deploy") await deploy();
  else if (command === "new") await create(arg);
  else throw new Error("usage: migrate.ts deploy | new <name>");
  // The WASM engine leaves a timer behind; leave without waiting for it.
  process.exit(0);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
