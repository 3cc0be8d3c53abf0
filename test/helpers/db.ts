import { randomUUID } from "node:crypto";
import { copyFile, mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { clientFor, openDatabase, postgresDatabase, type Database } from "../../src/db/client.ts";
import { withDatabase } from "../setup/global.ts";
import { pooledUrlOf } from "./pgbouncer.ts";

/** A fresh, migrated database for one test, on the engine this run tests (see test/setup/global.ts). */

/** The template data directory's folders and files, relative to it: listed once per test file. */
let templateTree: Promise<{ folders: string[]; files: string[] }> | undefined;

async function listTree(root: string): Promise<{ folders: string[]; files: string[] }> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const relative = (entry: (typeof entries)[number]) => path.relative(root, path.join(entry.parentPath, entry.name));
  return { folders: entries.filter((e) => e.isDirectory()).map(relative), files: entries.filter((e) => e.isFile()).map(relative) };
}

/** Copies the template's ~1,100 files at once: fs.cp walks them one by one, several times slower. */
async function copyTemplateTree(template: string, target: string): Promise<void> {
  templateTree ??= listTree(template);
  const { folders, files } = await templateTree;
  await mkdir(target);
  for (const folder of folders) await mkdir(path.join(target, folder));
  await Promise.all(files.map((file) => copyFile(path.join(template, file), path.join(target, file))));
}

/**
 * A copy of the migrated template's data directory, opened as the server opens its own
 * (openDatabase: PGlite on the directory, the default buffer cache), and removed once closed.
 */
async function embeddedCopy(): Promise<Database> {
  const template = inject("pgliteTemplate");
  const dataDir = path.join(path.dirname(template), randomUUID());
  await copyTemplateTree(template, dataDir);
  const db = await openDatabase({ dataDir, embeddedCacheMb: loadConfig({}).embeddedCacheMb });
  return {
    ...db,
    async close() {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
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

/**
 * Whether `file` (an open file's path) belongs to an embedded test database: PGlite on a data
 * directory opens and keeps its relation files as PostgreSQL does, whatever a test is counting.
 */
export function isEmbeddedDatabaseFile(file: string): boolean {
  const template = inject("pgliteTemplate");
  return template !== "" && file.startsWith(`${path.dirname(template)}${path.sep}`);
}

export async function freshDatabase(): Promise<Database> {
  const server = inject("postgresServer");
  if (server) {
    const name = `t_${randomUUID().replace(/-/g, "")}`;
    await copyTemplate(server, name);
    // npm run test:pgbouncer: requests go through the run's PgBouncer, sessions to the server
    const direct = withDatabase(server, name);
    const db = postgresDatabase(pooledUrlOf(direct) ?? direct, 5, 5000, 0, direct);
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
  return embeddedCopy();
}

/**
 * `db` with every SQL statement its client sends passed through `around(sql, run)`, by wrapping the
 * driver adapter (transactions' statements too): for tests that count or hold statements.
 */
export function aroundStatements(db: Database, around: (sql: string, run: () => Promise<unknown>) => Promise<unknown>): Database {
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value = Reflect.get(obj, prop, receiver);
        if (typeof value !== "function") return value;
        if (prop === "queryRaw" || prop === "executeRaw") {
          return (...args: unknown[]) => around((args[0] as { sql: string }).sql, () => value.apply(obj, args));
        }
        if (prop === "startTransaction") {
          return async (...args: unknown[]) => wrap(await value.apply(obj, args));
        }
        return value.bind(obj);
      },
    });
  const factory = db.adapterFactory;
  const wrapped = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => wrap(await factory.connect()),
    connectToShadowDb: async () => wrap(await factory.connectToShadowDb()),
  };
  const prisma = clientFor(wrapped);
  return {
    ...db,
    prisma,
    adapterFactory: wrapped,
    close: async () => {
      await prisma.$disconnect();
      await db.close();
    },
  };
}

/**
 * Counts the SQL statements a client sends: the proof that a GraphQL page with relations costs a
 * constant number of queries.
 */
export function countQueries(db: Database): { db: Database; count: () => number; reset: () => void } {
  let count = 0;
  return {
    db: aroundStatements(db, (_sql, run) => ((count += 1), run())),
    count: () => count,
    reset: () => void (count = 0),
  };
}
