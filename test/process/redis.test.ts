import { createClient, type Client } from "graphql-ws";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Database } from "../../src/db/client.ts";
import { EVENT_STREAM } from "../../src/events/redis-bus.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { freePort, startServer, type ServerProcess } from "../helpers/process.ts";
import { redisUnavailable, startRedis, type RedisServer } from "../helpers/redis.ts";

/**
 * CONTRACT §7.6 `REDIS_URL`, with two real server processes (scripts/start.sh, production
 * defaults) on one PostgreSQL database and one Debian `redis-server`: case changes reach a
 * subscriber of the other process through Redis, also across dropped connections; the request and
 * login budgets are shared by both; and while Redis is down the documented behaviour holds:
 * /readyz names `redis`, requests are served (the request budget lets them through), failed logins
 * stay bounded per process, and nothing answers 500.
 */

const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function graphql<T>(server: ServerProcess, query: string): Promise<T> {
  const res = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { Authorization: ADMIN, "Content-Type": "application/json" },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

/** Writes one case through `server`; its case id. */
async function writeCase(server: ServerProcess, name: string): Promise<string> {
  const res = await fetch(`${server.url}/a/field/api/case/v2/`, {
    method: "POST",
    headers: { Authorization: ADMIN, "Content-Type": "application/json" },
    body: JSON.stringify({ case_type: "visit", case_name: name, owner_id: "o", external_id: name }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { case: { case_id: string } }).case.case_id;
}

async function listCases(server: ServerProcess, authorization: string): Promise<Response> {
  const res = await fetch(`${server.url}/a/field/api/case/v2/`, { headers: { Authorization: authorization } });
  await res.clone().arrayBuffer();
  return res;
}

async function readyz(server: ServerProcess): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const res = await fetch(`${server.url}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
}

async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await pause(200);
  }
}

describe.skipIf(!usingPostgres() || redisUnavailable())("§7.6: REDIS_URL, two processes on one PostgreSQL and one Redis", () => {
  const servers: ServerProcess[] = [];
  const clients: Client[] = [];
  let db: Database | undefined;
  let redis: RedisServer | undefined;
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.dispose();
    for (const server of servers.splice(0)) await server.stop("SIGKILL");
    await db?.close();
    await redis?.remove();
    db = undefined;
    redis = undefined;
  });

  async function twoProcesses(extra: Record<string, string> = {}): Promise<[ServerProcess, ServerProcess]> {
    db = await freshDatabase();
    redis = await startRedis();
    const env = { DATABASE_URL: db.url!, REDIS_URL: redis.url, BOOTSTRAP_ADMIN: "admin:admin-pass", WORKERS: "0", ...extra };
    // one after the other: both migrate at start, and the second waits on the first's migration lock
    const first = await startServer(env);
    const second = await startServer(env);
    servers.push(first, second);
    await graphql(first, `mutation { createDomain(name: "field") { name } }`);
    await graphql(
      first,
      `mutation { createUser(input: { username: "mobile", password: "pw-1", domain: "field", permissions: [ACCESS_API, VIEW_DATA] }) { id } }`,
    );
    return [first, second];
  }

  /** A caseChanged subscription on `server`, live once a case written through `writer` has reached it. */
  async function subscribe(server: ServerProcess, writer: ServerProcess): Promise<string[]> {
    const events: string[] = [];
    const client = createClient({
      url: `${server.url.replace(/^http/, "ws")}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: ADMIN },
    });
    clients.push(client);
    client.subscribe(
      { query: 'subscription { caseChanged(domain: "field") { caseId } }' },
      { next: (m) => events.push((m.data as { caseChanged: { caseId: string } }).caseChanged.caseId), error: () => {}, complete: () => {} },
    );
    let warm = 0;
    await eventually(async () => {
      if (events.length > 0) return true;
      await writeCase(writer, `warm-${warm++}`);
      return false;
    });
    await pause(500); // the warm-up cases' events, all in
    events.splice(0);
    return events;
  }

  it("§7.6: a case written through one process reaches a subscriber of the other through the Redis stream; /readyz checks redis", async () => {
    const [first, second] = await twoProcesses();
    for (const server of [first, second]) {
      const { status, body } = await readyz(server);
      expect(status).toBe(200);
      expect(body.checks.redis).toBe("ok");
    }
    const events = await subscribe(second, first);
    const written: string[] = [];
    for (let i = 0; i < 10; i++) written.push(await writeCase(first, `case-${i}`));
    await eventually(async () => events.length >= written.length);
    expect(events).toEqual(written);
    // the events went through Redis, not through NOTIFY, as each process said at start
    expect(await redis!.admin().xlen(EVENT_STREAM)).toBeGreaterThan(0);
    for (const server of [first, second]) expect(server.output()).toMatch(/"eventBus":"redis".*"message":"listening"/);
  }, 180_000);

  it("§7.6: while every Redis connection of both processes is dropped (CLIENT KILL), the other process's subscriber still gets every case, in order, each once", async () => {
    const [first, second] = await twoProcesses();
    const events = await subscribe(second, first);
    const admin = redis!.admin();
    const written: string[] = [];
    for (let i = 0; i < 30; i++) {
      if (i % 5 === 0) await admin.client("KILL", "TYPE", "normal", "SKIPME", "yes");
      written.push(await writeCase(first, `case-${i}`));
    }
    await eventually(async () => events.length >= written.length);
    await pause(500);
    expect(events).toEqual(written);
  }, 180_000);

  it("§7.6: the request budget and the login-failure budget are shared by both processes, with today's answers", async () => {
    const [first, second] = await twoProcesses({ RATE_LIMIT_REQUESTS: "4", LOGIN_FAILURES_PER_ADDRESS: "3" });
    const mobile = basic("mobile", "pw-1");
    for (const server of [first, second, first, second]) expect((await listCases(server, mobile)).status).toBe(200);
    const refused = await listCases(first, mobile);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.text()).toBe('{"error":"Rate limit exceeded"}');

    // failed logins, of another user so that the request budget above is not in the way
    await graphql(
      first,
      `mutation { createUser(input: { username: "guessed", password: "right", domain: "field", permissions: [ACCESS_API, VIEW_DATA] }) { id } }`,
    );
    const wrong = basic("guessed", "wrong");
    for (const server of [first, second, first]) expect((await listCases(server, wrong)).status).toBe(401);
    const throttled = await listCases(second, basic("guessed", "right"));
    expect(throttled.status).toBe(429);
    expect(await throttled.json()).toEqual({ error: "Too many failed login attempts. Retry later." });
  }, 180_000);

  it("§7.6: Redis down: /readyz 503 naming redis, requests still served, failed logins bounded per process, the right password logs in elsewhere, never a 500; all well again once it is back", async () => {
    const [first, second] = await twoProcesses({ RATE_LIMIT_REQUESTS: "10", LOGIN_FAILURES_PER_ADDRESS: "3" });
    await redis!.down();
    const { status, body } = await readyz(first);
    expect(status).toBe(503);
    expect(body.status).toBe("unavailable");
    expect(body.checks.redis).not.toBe("ok");
    expect(body.checks.database).toBe("ok");

    // the request budget lets requests through rather than refusing the whole service
    const mobile = basic("mobile", "pw-1");
    for (let i = 0; i < 15; i++) expect((await listCases(first, mobile)).status).toBe(200);

    // the login budget falls back on each process's own counters: guessing stays bounded
    const wrong = basic("mobile", "wrong");
    for (let i = 0; i < 3; i++) expect((await listCases(first, wrong)).status).toBe(401);
    const throttled = await listCases(first, wrong);
    expect(throttled.status).toBe(429);
    expect(await throttled.json()).toEqual({ error: "Too many failed login attempts. Retry later." });
    // another process has its own: the right password logs in there
    expect((await listCases(second, mobile)).status).toBe(200);

    await redis!.up();
    await eventually(async () => (await readyz(first)).status === 200 && (await readyz(second)).status === 200);
    // the bus works again: a case written on one process reaches a subscriber of the other
    const events = await subscribe(second, first);
    const written = await writeCase(first, "after");
    await eventually(async () => events.length >= 1);
    expect(events).toEqual([written]);
    for (const server of servers) expect(server.output()).not.toMatch(/"statusCode":500/);
  }, 180_000);
});

describe("§7.6: REDIS_URL at a Redis that does not answer", () => {
  it("§7.6: the server does not start: it exits 1 saying Redis (REDIS_URL) did not answer, as it does for a PostgreSQL that does not", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-noredis-"));
    try {
      // a port nobody listens on
      const started = startServer({ DATA_DIR: dataDir, REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, 120_000);
      await expect(started).rejects.toThrow(/server exited with 1 before starting[\s\S]*Redis \(REDIS_URL\) did not answer within 5 s/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
