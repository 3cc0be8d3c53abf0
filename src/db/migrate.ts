import { readFile, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { bindMigrationAwareSqlAdapterFactory, type SqlDriverAdapter, type SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { projectRoot } from "../util/project-root.ts";

/**
 * Prisma's `migrate deploy` and `migrate diff`, driven through the WASM schema engine with a driver
 * adapter, because the native engine cannot be downloaded here. The engine keeps the standard
 * `_prisma_migrations` table, so the native CLI can take over where it is available.
 */

const ROOT = projectRoot(import.meta.dirname);
export const MIGRATIONS_DIR = path.join(ROOT, "prisma", "migrations");
const SCHEMA_PATH = path.join(ROOT, "prisma", "schema.prisma");

type EngineModule = typeof import("@prisma/schema-engine-wasm/schema_engine_bg");
type SchemaEngine = Awaited<ReturnType<EngineModule["SchemaEngine"]["new"]>>;
type MigrationList = Parameters<SchemaEngine["applyMigrations"]>[0]["migrationsList"];

let engineModule: Promise<EngineModule> | undefined;

// Node has WebAssembly; the ES lib typings this project compiles against do not describe it.
const { WebAssembly: Wasm } = globalThis as unknown as {
  WebAssembly: {
    Module: new (bytes: Uint8Array) => object;
    Instance: new (module: object, imports: object) => { exports: object };
  };
};

/** The package entry imports a .wasm file directly, which Node cannot; instantiate it by hand. */
function loadEngineModule(): Promise<EngineModule> {
  engineModule ??= (async () => {
    const bindings: EngineModule = await import("@prisma/schema-engine-wasm/schema_engine_bg");
    const entry = createRequire(import.meta.url).resolve("@prisma/schema-engine-wasm");
    const bytes = await readFile(path.join(path.dirname(entry), "schema_engine_bg.wasm"));
    const instance = new Wasm.Instance(new Wasm.Module(bytes), { "./schema_engine_bg.js": bindings });
    const exports = instance.exports as unknown as { __wbindgen_start(): void };
    (bindings as unknown as { __wbg_set_wasm(w: unknown): void }).__wbg_set_wasm(exports);
    exports.__wbindgen_start();
    return bindings;
  })();
  return engineModule;
}

async function withEngine<T>(adapterFactory: SqlMigrationAwareDriverAdapterFactory, run: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const { SchemaEngine } = await loadEngineModule();
  // The engine does not dispose the connections it opens; track them so that a migrated
  // database is left with no session (CREATE DATABASE … TEMPLATE needs that).
  const opened: SqlDriverAdapter[] = [];
  const tracked: SqlMigrationAwareDriverAdapterFactory = {
    provider: adapterFactory.provider,
    adapterName: adapterFactory.adapterName,
    connect: async () => track(await adapterFactory.connect()),
    connectToShadowDb: async () => track(await adapterFactory.connectToShadowDb()),
  };
  const track = (adapter: SqlDriverAdapter) => {
    opened.push(adapter);
    return adapter;
  };
  const engine = await SchemaEngine.new({ datamodels: undefined }, () => {}, bindMigrationAwareSqlAdapterFactory(tracked));
  try {
    return await run(engine);
  } finally {
    engine.free();
    await Promise.all(opened.map((adapter) => adapter.dispose().catch(() => {})));
  }
}

/** The migrations of `dir` (one folder each), in the order they apply. */
export async function migrationNames(dir = MIGRATIONS_DIR): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationList> {
  const names = await migrationNames(dir);
  const lockPath = path.join(dir, "migration_lock.toml");
  return {
    baseDir: dir,
    lockfile: { path: "migration_lock.toml", content: await readFile(lockPath, "utf8").catch(() => null) },
    shadowDbInitScript: "",
    migrationDirectories: await Promise.all(
      names.map(async (name) => ({
        path: name,
        migrationFile: {
          path: "migration.sql",
          content: { tag: "ok" as const, value: await readFile(path.join(dir, name, "migration.sql"), "utf8") },
        },
      })),
    ),
  };
}

const NO_FILTERS = { externalTables: [], externalEnums: [] };

/**
 * `prisma migrate deploy`: applies the migrations of `dir` the database has not seen yet. Alone, it
 * is for one process (tests, tools); servers and `npm run db:migrate` go through migration-gate.ts,
 * which lets any number of them start together.
 */
export async function applyMigrations(adapterFactory: SqlMigrationAwareDriverAdapterFactory, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrationsList = await readMigrations(dir);
  const result = await withEngine(adapterFactory, (engine) => engine.applyMigrations({ migrationsList, filters: NO_FILTERS }));
  return result.appliedMigrationNames;
}

/**
 * The SQL that brings a database migrated to the latest migration in line with schema.prisma.
 * The adapter's shadow database replays the existing migrations (PGlite: in memory).
 */
export async function pendingSchemaSql(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  const migrationsList = await readMigrations();
  const schema = await readFile(SCHEMA_PATH, "utf8");
  const result = await withEngine(adapterFactory, (engine) =>
    engine.diff({
      from: { tag: "migrations", ...migrationsList },
      to: { tag: "schemaDatamodel", files: [{ path: SCHEMA_PATH, content: schema }] },
      script: true,
      exitCode: null,
      filters: NO_FILTERS,
    }),
  );
  return result.stdout ?? "";
}
