import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";
import { redisUnavailable, startRedis, type RedisServer } from "../helpers/redis.ts";
import { until } from "../helpers/uploads.ts";

/**
 * docs/security.md "stops working on every process", with two real server processes on one
 * PostgreSQL database: each process keeps the identities it admitted lately for a few seconds
 * (src/auth/identity.cache.ts). A change is in effect on the process that made it by the very next
 * request, and on the other as soon as the event bus brings it there (milliseconds; polled here for
 * at most 3 s, well inside the cache's 5 s), however warm either cache.
 */

const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

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

async function listCases(server: ServerProcess, authorization: string): Promise<number> {
  const res = await fetch(`${server.url}/a/field/api/case/v2/`, { headers: { Authorization: authorization } });
  await res.arrayBuffer();
  return res.status;
}

/** Several requests to each, so that whatever a process caches of the caller is surely cached. */
async function warm(servers: ServerProcess[], authorization: string): Promise<void> {
  for (const server of servers) for (let i = 0; i < 3; i++) expect(await listCases(server, authorization)).toBe(200);
}

/** The very next request on the process that made the change, and the other soon after. */
async function refusedEverywhere([changed, other]: ServerProcess[], authorization: string, status: number): Promise<void> {
  expect(await listCases(changed!, authorization)).toBe(status);
  await until(async () => (await listCases(other!, authorization)) === status, `the other process answers ${status}`, 3000);
}

/** The revocations travel on the bus: LISTEN/NOTIFY by default, a Redis stream with REDIS_URL (§7.6). */
const BUSES = [
  { bus: "PostgreSQL", skip: !usingPostgres(), withRedis: false },
  { bus: "Redis (REDIS_URL)", skip: !usingPostgres() || redisUnavailable() !== undefined, withRedis: true },
];

describe.each(BUSES)("docs/security.md: a revoked credential stops working on every process (bus: $bus)", ({ skip, withRedis }) => {
  const servers: ServerProcess[] = [];
  let db: Database | undefined;
  let redis: RedisServer | undefined;
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop("SIGKILL");
    await db?.close();
    await redis?.remove();
    redis = undefined;
  });

  async function twoProcesses(): Promise<[ServerProcess, ServerProcess]> {
    db = await freshDatabase();
    if (withRedis) redis = await startRedis();
    const env = { DATABASE_URL: db.url!, BOOTSTRAP_ADMIN: "admin:admin-pass", WORKERS: "0", ...(redis ? { REDIS_URL: redis.url } : {}) };
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

  it.skipIf(skip)(
    "a revoked API key, a deactivated user, a removed membership and a new password are refused by the process that made the change on the very next request, and by the other once the bus brings it",
    async () => {
      const [first, second] = await twoProcesses();
      const both = [first, second];

      const { createApiKey } = await graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(
        first,
        `mutation { createApiKey(username: "mobile") { key apiKey { id } } }`,
      );
      const apiKey = `ApiKey mobile:${createApiKey.key}`;
      await warm(both, apiKey);
      await graphql(first, `mutation { revokeApiKey(id: "${createApiKey.apiKey.id}") { id } }`);
      await refusedEverywhere(both, apiKey, 401);

      const password = basic("mobile", "pw-1");
      await warm(both, password);
      await graphql(first, `mutation { removeMembership(username: "mobile", domain: "field") }`);
      await refusedEverywhere(both, password, 403);

      await graphql(first, `mutation { setPermissions(username: "mobile", domain: "field", permissions: [ACCESS_API, VIEW_DATA]) { permissions } }`);
      await warm(both, password);
      await graphql(first, `mutation { setUserActive(username: "mobile", active: false) { isActive } }`);
      await refusedEverywhere(both, password, 401);

      await graphql(first, `mutation { setUserActive(username: "mobile", active: true) { isActive } }`);
      await warm(both, password);
      await graphql(first, `mutation { createUser(input: { username: "mobile", password: "pw-2" }) { id } }`);
      await refusedEverywhere(both, password, 401);
      expect(await listCases(second, basic("mobile", "pw-2"))).toBe(200);
    },
    120_000,
  );
});
