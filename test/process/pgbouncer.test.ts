import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import { createClient, type Client } from "graphql-ws";
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { WebSocket } from "ws";
import { withDatabase } from "../setup/global.ts";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { pgBouncerUnavailable, startPgBouncer, type PgBouncer } from "../helpers/pgbouncer.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";

/**
 * CONTRACT §7.6, connection pooling: with DATABASE_URL through Debian's PgBouncer in transaction
 * mode, what needs a session goes wrong unseen (a LISTEN hears nothing, a session advisory lock is
 * held by two clients at once), so a server without DATABASE_DIRECT_URL refuses to start, naming
 * it; with it, `npm run db:migrate` migrates an empty database and two server processes share case
 * events (a subscriber of one gets every case written through the other, in order).
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await pause(200);
  }
}

async function graphql(server: ServerProcess, query: string): Promise<void> {
  const res = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { Authorization: ADMIN, "Content-Type": "application/json" },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
}

async function writeCase(server: ServerProcess, name: string): Promise<string> {
  const res = await fetch(`${server.url}/a/field/api/case/v2/`, {
    method: "POST",
    headers: { Authorization: ADMIN, "Content-Type": "application/json" },
    body: JSON.stringify({ case_type: "visit", case_name: name, owner_id: "o", external_id: name }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { case: { case_id: string } }).case.case_id;
}

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  return client;
}

describe.skipIf(!usingPostgres() || pgBouncerUnavailable())("§7.6: DATABASE_URL through PgBouncer in transaction mode", () => {
  const servers: ServerProcess[] = [];
  const clients: Client[] = [];
  const bouncers: PgBouncer[] = [];
  const databases: string[] = [];
  const migrated: Database[] = [];
  const server = () => inject("postgresServer");

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.dispose();
    for (const running of servers.splice(0)) await running.stop("SIGKILL");
    for (const bouncer of bouncers.splice(0)) await bouncer.stop();
    for (const db of migrated.splice(0)) await db.close();
    const admin = await connected(server());
    for (const name of databases.splice(0)) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  /** `name` on the test server: its direct URL and its URL through a new PgBouncer. */
  async function throughPgBouncer(name: string, poolSize?: number): Promise<{ direct: string; pooled: string }> {
    const bouncer = await startPgBouncer({ upstreamUrl: server(), poolSize });
    bouncers.push(bouncer);
    return { direct: withDatabase(server(), name), pooled: bouncer.url(name) };
  }

  async function emptyDatabase(): Promise<{ direct: string; pooled: string }> {
    const name = `t_${randomUUID().replace(/-/g, "")}`;
    const admin = await connected(server());
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    databases.push(name);
    return throughPgBouncer(name);
  }

  /** A migrated database (a copy of the run's template), through a PgBouncer of `poolSize` server connections. */
  async function migratedDatabase(poolSize?: number): Promise<{ direct: string; pooled: string }> {
    const db = await freshDatabase();
    migrated.push(db);
    return throughPgBouncer(new URL(db.directUrl!).pathname.slice(1), poolSize);
  }

  /** The start-up failure's JSON line of a server on `env`. */
  async function failedStart(env: Record<string, string>): Promise<Record<string, unknown>> {
    const message = await startServer({ WORKERS: "0", ...env }, 120_000).then(
      (started) => (servers.push(started), "started"),
      (error: Error) => error.message,
    );
    expect(message).toMatch(/server exited with 1 before starting/);
    return JSON.parse(message.split("\n").find((l) => l.includes('"failed to start"'))!) as Record<string, unknown>;
  }

  it("§7.6: without DATABASE_DIRECT_URL, LISTEN through the pooler hears none of 20 NOTIFYs, two clients hold one session lock at once, and the server refuses to start (PgBouncer refuses the statement timeout; without one, the bus names DATABASE_DIRECT_URL)", async () => {
    const { direct, pooled } = await migratedDatabase(1);
    const heard = { pooled: 0, direct: 0 };
    const pooledListener = await connected(pooled);
    const directListener = await connected(direct);
    pooledListener.on("notification", () => heard.pooled++);
    directListener.on("notification", () => heard.direct++);
    await pooledListener.query("LISTEN probe");
    await directListener.query("LISTEN probe");
    const publisher = await connected(pooled);
    for (let i = 0; i < 20; i++) await publisher.query("SELECT pg_notify('probe', $1)", [String(i)]);
    await eventually(async () => heard.direct === 20);
    await pause(500);
    expect(heard).toEqual({ pooled: 0, direct: 20 });

    // a session lock taken through the pooler stays with the server connection, not the client:
    // the next client served by that connection "takes" it too
    const first = await connected(pooled);
    const second = await connected(pooled);
    const take = async (client: pg.Client) => (await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(42) AS locked")).rows[0]!.locked;
    expect([await take(first), await take(second)]).toEqual([true, true]);
    for (const client of [pooledListener, directListener, publisher, first, second]) await client.end();

    // the request pool's statement timeout is a startup parameter, which PgBouncer refuses
    expect(await failedStart({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: "" })).toMatchObject({
      level: "fatal",
      message: "failed to start",
      dependency: "database",
      error: { message: expect.stringMatching(/unsupported startup parameter: statement_timeout/) },
    });
    // without it, the event bus finds that its LISTEN hears nothing, and says what to set
    expect(await failedStart({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: "", DATABASE_STATEMENT_TIMEOUT_MS: "0" })).toMatchObject({
      level: "fatal",
      message: "failed to start",
      setting: "DATABASE_DIRECT_URL",
      error: {
        message: expect.stringMatching(/^DATABASE_DIRECT_URL must be set: a NOTIFY did not reach the event bus's LISTEN/),
      },
    });
  }, 180_000);

  it("§7.6: with DATABASE_DIRECT_URL, npm run db:migrate migrates an empty database, and a subscriber of one server process gets every case written through another, in order", async () => {
    const { direct, pooled } = await emptyDatabase();
    const env = { DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct };
    // as docs/operations.md says: both URLs set, then npm run db:migrate
    const { stdout } = await run("npm", ["run", "db:migrate"], { cwd: ROOT, env: { ...process.env, ...env } });
    expect(stdout).toMatch(/applied: /);

    const serverEnv = { ...env, BOOTSTRAP_ADMIN: "admin:admin-pass", WORKERS: "0", MIGRATE_ON_START: "false" };
    const [first, second] = await Promise.all([startServer(serverEnv, 120_000), startServer(serverEnv, 120_000)]);
    servers.push(first, second);
    await graphql(first, `mutation { createDomain(name: "field") { name } }`);

    const events: string[] = [];
    const client = createClient({
      url: `${second.url.replace(/^http/, "ws")}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: ADMIN },
    });
    clients.push(client);
    client.subscribe(
      { query: 'subscription { caseChanged(domain: "field") { caseId } }' },
      { next: (m) => events.push((m.data as { caseChanged: { caseId: string } }).caseChanged.caseId), error: () => {}, complete: () => {} },
    );
    let warm = 0;
    await eventually(async () => events.length > 0 || (await writeCase(first, `warm-${warm++}`), false));
    await pause(500);
    events.splice(0);

    const written: string[] = [];
    for (let i = 0; i < 20; i++) written.push(await writeCase(first, `case-${i}`));
    await eventually(async () => events.length >= written.length);
    await pause(300);
    expect(events).toEqual(written);
  }, 240_000);
});
