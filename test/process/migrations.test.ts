import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { postgresDatabase } from "../../src/db/client.ts";
import { MIGRATIONS_DIR, applyMigrations, migrationNames } from "../../src/db/migrate.ts";
import { usingPostgres } from "../helpers/db.ts";
import { pgClusterUnavailable, startPgCluster, startServer, type PgCluster, type ServerProcess } from "../helpers/process.ts";

/**
 * CONTRACT §7.5 with real server processes on one PostgreSQL: any number of processes started at
 * the same moment all come up, whether the database is new, current or a migration behind; with
 * MIGRATE_ON_START=false a process never migrates and is not ready (503, the migrations check
 * failing) until `npm run db:migrate` has run, then ready without a restart.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const PROCESSES = 5;
const run = promisify(execFile);

let cluster: PgCluster | undefined;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  if (!pgClusterUnavailable() && usingPostgres()) cluster = await startPgCluster();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop("SIGKILL")));
});
afterAll(async () => {
  await cluster?.remove();
});

/** A new, empty database on the cluster; its URL. */
async function newDatabase(): Promise<string> {
  const name = `m_${randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: cluster!.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(cluster!.url);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Applies the migrations of `dir` to the database at `url`, as an earlier release would have. */
async function migrate(url: string, dir = MIGRATIONS_DIR): Promise<void> {
  const db = postgresDatabase(url, 2);
  await applyMigrations(db.adapterFactory, dir);
  await db.close();
}

async function readyz(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: await res.json() };
}

/** `count` processes on `databaseUrl`, all started in the same moment; every one must come up. */
async function startTogether(databaseUrl: string, count: number): Promise<ServerProcess[]> {
  const starts = Array.from({ length: count }, () =>
    // LOG_LEVEL=info: the lines that say which process migrated are read below
    startServer({ DATABASE_URL: databaseUrl, WORKERS: "0", LOG_LEVEL: "info" }, 120_000).then((server) => (servers.push(server), server)),
  );
  const outcomes = await Promise.allSettled(starts);
  const failed = outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => String(outcome.reason).slice(0, 600));
  expect(failed, `${failed.length} of ${count} processes did not come up`).toEqual([]);
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<ServerProcess>).value);
}

const READY = { status: "ready", checks: { database: "ok", migrations: "ok", jobQueue: "ok", shutdown: "ok" } };
const migrated = (server: ServerProcess) => /"migrations applied"/.test(server.output());

// Its own cluster, not the suite's database: it runs once, in the PostgreSQL half of CI (npm run test:postgres).
describe.skipIf(pgClusterUnavailable() || !usingPostgres())("§7.5 processes started together on one PostgreSQL all come up", () => {
  it("§7.5: five processes started in the same second on a new database all answer /readyz 200; one of them migrated", {
    timeout: 240_000,
  }, async () => {
    const started = await startTogether(await newDatabase(), PROCESSES);
    for (const server of started) expect(await readyz(server.url)).toEqual({ status: 200, body: READY });
    expect(started.filter(migrated)).toHaveLength(1);
  });

  it("§7.5: five processes started in the same second on a current database all answer /readyz 200; none migrated", {
    timeout: 240_000,
  }, async () => {
    const url = await newDatabase();
    await migrate(url);
    const started = await startTogether(url, PROCESSES);
    for (const server of started) expect(await readyz(server.url)).toEqual({ status: 200, body: READY });
    expect(started.filter(migrated)).toHaveLength(0);
  });

  it("§7.5: five processes started in the same second on a database one migration behind all answer /readyz 200; one of them migrated", {
    timeout: 240_000,
  }, async () => {
    const names = await migrationNames();
    const previous = await mkdtemp(path.join(os.tmpdir(), "gateway-migrations-"));
    try {
      await cp(MIGRATIONS_DIR, previous, { recursive: true, filter: (source) => !source.includes(names.at(-1)!) });
      const url = await newDatabase();
      await migrate(url, previous);
      const started = await startTogether(url, PROCESSES);
      for (const server of started) expect(await readyz(server.url)).toEqual({ status: 200, body: READY });
      const appliers = started.filter(migrated);
      expect(appliers).toHaveLength(1);
      expect(appliers[0]!.output()).toContain(`"applied":["${names.at(-1)}"]`);
    } finally {
      await rm(previous, { recursive: true, force: true });
    }
  });

  it("§7.5: MIGRATE_ON_START=false on a new database: 503 with the migrations check failing, until `npm run db:migrate`; then 200 without a restart", {
    timeout: 240_000,
  }, async () => {
    const url = await newDatabase();
    const server = await startServer({ DATABASE_URL: url, WORKERS: "0", MIGRATE_ON_START: "false", BOOTSTRAP_ADMIN: "admin:admin-pass" });
    servers.push(server);

    const waiting = await readyz(server.url);
    expect(waiting).toEqual({
      status: 503,
      body: { status: "unavailable", checks: { database: "ok", migrations: "pending", jobQueue: "failed", shutdown: "ok" } },
    });
    expect(Object.keys(waiting.body)).toEqual(["status", "checks"]);
    // nothing else is served against a schema this release does not know
    const refused = await fetch(`${server.url}/a/demo/api/case/v2/`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await refused.json()).toEqual({
      error:
        "The service is not ready: the database schema is behind this release until its migrations are applied (npm run db:migrate). Retry later.",
    });
    // the server itself changed nothing
    const db = postgresDatabase(url, 1);
    const [table] = await db.prisma.$queryRaw<{ exists: boolean }[]>`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists`;
    await db.close();
    expect(table!.exists).toBe(false);

    // as the README says: DATABASE_URL=… npm run db:migrate
    const { stdout } = await run("npm", ["run", "db:migrate"], { cwd: ROOT, env: { ...process.env, DATABASE_URL: url } });
    expect(stdout).toContain("applied: ");

    const end = Date.now() + 20_000;
    let ready = await readyz(server.url);
    while (ready.status !== 200 && Date.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      ready = await readyz(server.url);
    }
    expect(ready).toEqual({ status: 200, body: READY });
    // the whole server now answers on the same port: the bootstrap superuser can sign in
    const me = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Basic ${Buffer.from("admin:admin-pass").toString("base64")}` },
      body: JSON.stringify({ query: 'mutation { createDomain(name: "demo") { name } }' }),
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ data: { createDomain: { name: "demo" } } });
  });
});
