import { afterEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { WebSocket } from "ws";
import { loadConfig } from "../../src/config.ts";
import { postgresDatabase } from "../../src/db/client.ts";
import { RateLimiter, rateLimitKey } from "../../src/rate-limit/rate-limit.service.ts";
import { chargedDomains, operationDomains } from "../../src/graphql/rate-limit.ts";
import { globalId } from "../../src/graphql/node.ts";
import { buildServer } from "../../src/server.ts";
import { createServices } from "../../src/services.ts";
import { parse } from "graphql";
import request from "supertest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { usingPostgres } from "../helpers/db.ts";
import { countApps, countCases, countRateLimitRows, putRateLimitRow, rateLimitRows } from "../helpers/rows.ts";

/**
 * CONTRACT §1 "Rate limit: 429 with Retry-After", issue #7 part 4: requests per user and domain,
 * one budget across REST, GraphQL and WebSocket, 429 + Retry-After + the family's body shape,
 * configurable, and shared by every process on one PostgreSQL.
 */

const CASES = "/a/demo/api/case/v2/";
const LOCATIONS = "/a/demo/api/location/v2/?format=json";
const APP_STATUS = "/a/demo/apps/api/no-app/multimedia/status/dl-0/";
const ALL = ["access_api", "view_data", "edit_data", "view_locations", "edit_locations", "edit_apps"];

let app: TestApp | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.dispose();
  client = undefined;
  await app?.close();
  app = undefined;
});

/** An app with a budget of `requests` per `windowSeconds`, domains demo and other, and a member of both. */
async function limited(requests: number, windowSeconds = 30): Promise<{ app: TestApp; user: TestUser }> {
  app = await build({ rateLimitRequests: requests, rateLimitWindowSeconds: windowSeconds, workers: 0 });
  await createDomain(app, "demo");
  await createDomain(app, "other");
  const user = await createUser(app, { domain: "demo", permissions: ALL });
  await app.services.admin.setPermissions(app.root, user.username, "other", ALL);
  return { app, user };
}

const get = (a: TestApp, path: string, authorization: string) => a.http().get(path).set("Authorization", authorization);
const gqlPost = (a: TestApp, authorization: string, query: string, variables?: Record<string, unknown>) =>
  a.http().post("/graphql").set("Authorization", authorization).set("Content-Type", "application/json").send({ query, variables });

function expect429(res: { status: number; headers: Record<string, string> }, windowSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.headers["retry-after"]).toMatch(/^\d+$/);
  const wait = Number(res.headers["retry-after"]);
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(windowSeconds);
}

describe("429 with Retry-After and the family's body, once the budget is spent", () => {
  it("Case API: {error: Rate limit exceeded}, exactly", async () => {
    const { app, user } = await limited(3);
    for (let i = 0; i < 3; i++) expect((await get(app, CASES, user.authorization)).status).toBe(200);
    const refused = await get(app, CASES, user.authorization);
    expect429(refused, 30);
    expect(refused.text).toBe('{"error":"Rate limit exceeded"}');
    // writes are refused the same way, and change nothing
    const write = await app.http().post(CASES).set("Authorization", user.authorization).send({ case_type: "t", case_name: "n", owner_id: "o" });
    expect429(write, 30);
    expect(write.body).toEqual({ error: "Rate limit exceeded" });
    expect(await countCases(app)).toBe(0);
  });

  it("Location API (and location types): {error: Rate limit exceeded}, exactly", async () => {
    const { app, user } = await limited(2);
    expect((await get(app, LOCATIONS, user.authorization)).status).toBe(200);
    expect((await get(app, "/a/demo/api/location_type/v1/", user.authorization)).status).toBe(200);
    for (const path of [LOCATIONS, "/a/demo/api/location_type/v1/", "/a/demo/api/location/v2/some-id/"]) {
      const refused = await get(app, path, user.authorization);
      expect429(refused, 30);
      expect(refused.text, path).toBe('{"error":"Rate limit exceeded"}');
    }
  });

  it("Import App API: {success: false, error: Rate limit exceeded}, exactly", async () => {
    const { app, user } = await limited(2);
    for (let i = 0; i < 2; i++) expect((await get(app, APP_STATUS, user.authorization)).status).toBe(404);
    const refused = await get(app, APP_STATUS, user.authorization);
    expect429(refused, 30);
    expect(refused.text).toBe('{"success":false,"error":"Rate limit exceeded"}');
    const upload = await app
      .http()
      .post("/a/demo/apps/api/import_app/")
      .set("Authorization", user.authorization)
      .attach("app_file", Buffer.from("{}"), "app.json")
      .field("app_name", "A");
    expect429(upload, 30);
    expect(upload.body).toEqual({ success: false, error: "Rate limit exceeded" });
    expect(await countApps(app)).toBe(0);
  });

  it("GraphQL: HTTP 429, Retry-After, one error with extensions.code RATE_LIMITED and no data", async () => {
    const { app, user } = await limited(2, 20);
    const query = 'query { cases(domain: "demo") { totalCount } }';
    for (let i = 0; i < 2; i++) expect((await gqlPost(app, user.authorization, query)).body.data.cases.totalCount).toBe(0);
    const refused = await gqlPost(app, user.authorization, query);
    expect429(refused, 20);
    expect(refused.body).toEqual({
      errors: [{ message: "Rate limit exceeded", extensions: { code: "RATE_LIMITED", retryAfter: Number(refused.headers["retry-after"]) } }],
    });
    // a mutation is refused whole, before anything runs
    const write = await gqlPost(
      app,
      user.authorization,
      'mutation { createCase(domain: "demo", input: { caseType: "t", caseName: "n", ownerId: "o" }) { caseId } }',
    );
    expect429(write, 20);
    expect(write.body.errors[0].extensions.code).toBe("RATE_LIMITED");
    expect(await countCases(app)).toBe(0);
  });

  it("GraphQL over GET counts too (domain from the query string's variables)", async () => {
    const { app, user } = await limited(1);
    const url = `/graphql?query=${encodeURIComponent("query($d: String!) { cases(domain: $d) { totalCount } }")}&variables=${encodeURIComponent('{"d":"demo"}')}`;
    const ok = await app.http().get(url).set("Authorization", user.authorization).set("apollo-require-preflight", "1");
    expect(ok.status).toBe(200);
    const refused = await app.http().get(url).set("Authorization", user.authorization).set("apollo-require-preflight", "1");
    expect429(refused, 30);
    // the budget is the domain's: REST in demo is spent as well
    expect((await get(app, CASES, user.authorization)).status).toBe(429);
  });
});

describe("one budget per user and domain", () => {
  it("REST and GraphQL in one domain draw on the same budget", async () => {
    const { app, user } = await limited(4);
    expect((await get(app, CASES, user.authorization)).status).toBe(200);
    expect((await get(app, LOCATIONS, user.authorization)).status).toBe(200);
    expect((await get(app, APP_STATUS, user.authorization)).status).toBe(404);
    // the domain through a variable
    const viaVariable = await gqlPost(app, user.authorization, "query($d: String!) { locations(domain: $d) { totalCount } }", { d: "demo" });
    expect(viaVariable.status).toBe(200);
    expect((await get(app, CASES, user.authorization)).status).toBe(429);
    expect((await gqlPost(app, user.authorization, 'fragment F on Query { cases(domain: "demo") { totalCount } } query { ...F }')).status).toBe(429);
  });

  it("another user in the same domain, and the same user in another domain, are unaffected", async () => {
    const { app, user } = await limited(2);
    const second = await createUser(app, { domain: "demo", permissions: ALL });
    for (let i = 0; i < 2; i++) await get(app, CASES, user.authorization);
    expect((await get(app, CASES, user.authorization)).status).toBe(429);
    expect((await get(app, CASES, second.authorization)).status).toBe(200);
    expect((await get(app, "/a/other/api/case/v2/", user.authorization)).status).toBe(200);
    expect((await gqlPost(app, user.authorization, 'query { cases(domain: "other") { totalCount } }')).status).toBe(200);
    expect((await gqlPost(app, second.authorization, 'query { cases(domain: "demo") { totalCount } }')).status).toBe(200);
    // operations that name no domain have the user's own budget
    expect((await gqlPost(app, user.authorization, "{ me { username } }")).body.data.me.username).toBe(user.username);
  });

  it("a GraphQL request naming two domains draws on both, and is refused if either is spent", async () => {
    const { app, user } = await limited(2);
    const both = 'query { a: cases(domain: "demo") { totalCount } b: cases(domain: "other") { totalCount } }';
    expect((await gqlPost(app, user.authorization, both)).status).toBe(200);
    expect((await get(app, CASES, user.authorization)).status).toBe(200); // demo: 2 of 2
    expect((await gqlPost(app, user.authorization, both)).status).toBe(429);
    expect((await get(app, "/a/other/api/case/v2/", user.authorization)).status).toBe(429); // other: 3 of 2
  });

  it("unauthenticated requests are refused for their credentials (401), never counted or answered 429", async () => {
    const { app, user } = await limited(1);
    for (let i = 0; i < 5; i++) {
      const res = await app.http().get(CASES);
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBeDefined();
    }
    expect((await get(app, CASES, user.authorization)).status).toBe(200);
    expect((await get(app, CASES, user.authorization)).status).toBe(429);
    expect((await app.http().get(CASES)).status).toBe(401);
    expect((await gqlPost(app, "ApiKey nobody:wrong", "{ me { username } }")).status).toBe(401);
  });

  it("a caller who is not a member is limited too, the same way for a domain that exists and one that does not", async () => {
    const { app } = await limited(1);
    const outsider = await createUser(app, { domain: "other", permissions: ALL });
    for (const domain of ["demo", "nowhere"]) {
      expect((await get(app, `/a/${domain}/api/case/v2/`, outsider.authorization)).status).toBe(403);
      expect((await get(app, `/a/${domain}/api/case/v2/`, outsider.authorization)).status).toBe(429);
    }
  });
});

describe("GraphQL is charged in the domains it reads (security review 2026-11-26, G6)", () => {
  /** A case of demo, created by another user (whose budget is their own), and its global id. */
  async function demoCase(app: TestApp): Promise<string> {
    const editor = await createUser(app, { domain: "demo", permissions: ALL });
    const res = await app.http().post(CASES).set("Authorization", editor.authorization).send({ case_type: "t", case_name: "n", owner_id: "o" });
    return globalId("Case", "demo", res.body.case.case_id);
  }

  it("naming a fresh made-up domain does not move a request off the budget of the domain it reads through nodes", async () => {
    const { app, user } = await limited(2);
    const id = await demoCase(app);
    const bypass = (i: number) => `query { nodes(ids: ["${id}"]) { id } x: case(domain: "zz-${i}", caseId: "x") { caseId } }`;
    for (let i = 0; i < 2; i++) {
      const res = await gqlPost(app, user.authorization, bypass(i));
      expect([res.status, res.body.data?.nodes]).toEqual([200, [{ id }]]);
    }
    expect429(await gqlPost(app, user.authorization, bypass(2)), 30);
    // demo is what was spent: REST there too
    expect((await get(app, CASES, user.authorization)).status).toBe(429);
  });

  it("nodes names no domain: it is charged in the domains of its ids (from a variable too), like a request naming them", async () => {
    const { app, user } = await limited(2);
    const id = await demoCase(app);
    expect((await gqlPost(app, user.authorization, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", { ids: [id] })).status).toBe(200);
    expect((await gqlPost(app, user.authorization, `query { node(id: "${id}") { id } }`)).status).toBe(200);
    expect((await get(app, CASES, user.authorization)).status).toBe(429);
    // the other domain and the user's own budget are untouched
    expect((await get(app, "/a/other/api/case/v2/", user.authorization)).status).toBe(200);
    expect((await gqlPost(app, user.authorization, "{ me { username } }")).status).toBe(200);
  });

  it("domains the caller is not in (made-up names, in arguments or in ids) draw on the user's own budget, whatever their number", async () => {
    const { app, user } = await limited(2);
    for (let i = 0; i < 2; i++) {
      const query = `query { a: case(domain: "made-up-${i}", caseId: "x") { caseId } b: nodes(ids: ["${globalId("Case", `made-up-id-${i}`, "k")}"]) { id } }`;
      expect((await gqlPost(app, user.authorization, query)).status).toBe(200);
    }
    expect429(await gqlPost(app, user.authorization, "{ me { username } }"), 30);
    expect429(await gqlPost(app, user.authorization, 'query { case(domain: "made-up-9", caseId: "x") { caseId } }'), 30);
    // no counter was made for any made-up name, and the member's domains are untouched
    expect((await get(app, CASES, user.authorization)).status).toBe(200);
  });

  it("over WebSocket the same: a made-up domain beside nodes is charged in the domain of the ids", async () => {
    const { app, user } = await limited(2);
    const id = await demoCase(app);
    const url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
    client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: user.authorization }, retryAttempts: 0, lazy: true });
    const run = async (query: string) => {
      const events = client!.iterate({ query });
      try {
        return (await events.next()).value;
      } catch (errors) {
        return { errors: errors as { message: string; extensions?: Record<string, unknown> }[] };
      } finally {
        await events.return?.();
      }
    };
    for (let i = 0; i < 2; i++) {
      expect(await run(`query { nodes(ids: ["${id}"]) { id } x: case(domain: "ws-zz-${i}", caseId: "x") { caseId } }`)).toEqual({
        data: { nodes: [{ id }], x: null },
        errors: [expect.objectContaining({ extensions: { code: "FORBIDDEN" } })],
      });
    }
    const refused = await run(`query { nodes(ids: ["${id}"]) { id } x: case(domain: "ws-zz-2", caseId: "x") { caseId } }`);
    expect(refused?.errors?.[0]).toMatchObject({ message: "Rate limit exceeded", extensions: { code: "RATE_LIMITED" } });
  });

  it("the budgets of an operation: named and read domains where the caller is a member, the user's own for the rest", () => {
    const id = (domain: string) => globalId("Case", domain, "k");
    const member = (domain: string) => domain === "demo" || domain === "other";
    const doc = parse(`query($ids: [ID!]!, $d: String) {
      a: nodes(ids: $ids) { id } b: node(id: "${id("other")}") { id } c: cases(domain: $d) { totalCount }
      d: nodes(ids: ["${id("nowhere")}", "not a global id", "${globalId("User", "", "u")}"]) { id }
    }`);
    expect(chargedDomains(doc, undefined, { ids: [id("demo")], d: "demo" }, member).sort()).toEqual(["demo", "other", undefined]);
    expect(chargedDomains(doc, undefined, { ids: [], d: "elsewhere" }, member).sort()).toEqual(["other", undefined]);
    expect(chargedDomains(parse("{ me { username } }"), undefined, undefined, member)).toEqual([undefined]);
    expect(chargedDomains(parse('{ nodes(ids: ["x"]) { id } }'), undefined, undefined, member)).toEqual([undefined]);
    // operationDomains (a subscription's domains) stays the named ones
    expect(operationDomains(doc, undefined, { ids: [id("demo")], d: "demo" })).toEqual(["demo"]);
  });
});

describe("windows and configuration", () => {
  it("the budget comes back when the window ends (Retry-After is honest)", async () => {
    const { app, user } = await limited(2, 1);
    for (let i = 0; i < 2; i++) expect((await get(app, CASES, user.authorization)).status).toBe(200);
    const refused = await get(app, CASES, user.authorization);
    expect429(refused, 1);
    await new Promise((resolve) => setTimeout(resolve, Number(refused.headers["retry-after"]) * 1000 + 150));
    expect((await get(app, CASES, user.authorization)).status).toBe(200);
    expect((await get(app, CASES, user.authorization)).status).toBe(200);
    expect((await get(app, CASES, user.authorization)).status).toBe(429);
  });

  it("RATE_LIMIT_REQUESTS=0 disables the limit", async () => {
    const { app, user } = await limited(0, 1);
    for (let i = 0; i < 30; i++) expect((await get(app, CASES, user.authorization)).status).toBe(200);
  });

  it("defaults: 1200 requests per 60 s; the variables are read and validated", () => {
    const defaults = loadConfig({});
    expect(defaults.rateLimitRequests).toBe(1200);
    expect(defaults.rateLimitWindowSeconds).toBe(60);
    const set = loadConfig({ RATE_LIMIT_REQUESTS: "0", RATE_LIMIT_WINDOW_SECONDS: "5" });
    expect(set).toMatchObject({ rateLimitRequests: 0, rateLimitWindowSeconds: 5 });
    expect(() => loadConfig({ RATE_LIMIT_REQUESTS: "-1" })).toThrow(/RATE_LIMIT_REQUESTS/);
    expect(() => loadConfig({ RATE_LIMIT_WINDOW_SECONDS: "0" })).toThrow(/RATE_LIMIT_WINDOW_SECONDS/);
  });

  it("keys: user and domain; odd or long domain names are hashed into a short printable key", () => {
    expect(rateLimitKey("u1", "demo")).toBe("u1:demo");
    expect(rateLimitKey("u1", undefined)).toBe("u1:");
    for (const odd of ["x".repeat(5000), "dé mo", "a\u0000b", "a:b"]) expect(rateLimitKey("u1", odd)).toMatch(/^u1:#[0-9a-f]{40}$/);
    expect(rateLimitKey("u1", "a\u0000b")).not.toBe(rateLimitKey("u1", "a\u0000c"));
  });

  it("the domains of a GraphQL operation: literals, variables, defaults, fragments, the chosen operation only", () => {
    const doc = parse(`
      query A($d: String = "dflt") { cases(domain: $d) { totalCount } ...F }
      query B { locations(domain: "loc") { totalCount } }
      fragment F on Query { x: cases(domain: "frag") { totalCount } }
    `);
    expect(operationDomains(doc, "A", {}).sort()).toEqual(["dflt", "frag"]);
    expect(operationDomains(doc, "A", { d: "given" }).sort()).toEqual(["frag", "given"]);
    expect(operationDomains(doc, "B", undefined)).toEqual(["loc"]);
    expect(operationDomains(doc, undefined, undefined)).toEqual([undefined]); // ambiguous: the user's own budget
    expect(operationDomains(parse("{ me { username } }"), undefined, undefined)).toEqual([undefined]);
  });
});

describe("when the counter store fails", () => {
  it("requests are let through (the outage gives them their 503 elsewhere), not refused or crashed", async () => {
    let queries = 0;
    const failing = () => {
      queries += 1;
      return Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
    };
    const db = { kind: "postgres" as const, prisma: { $queryRawUnsafe: failing, $executeRawUnsafe: failing } as never };
    const limiter = RateLimiter.create({ rateLimitRequests: 1, rateLimitWindowSeconds: 60 }, db);
    try {
      for (let i = 0; i < 5; i++) await expect(limiter.consume({ userId: "u" }, ["demo"])).resolves.toBeUndefined();
      // after a failure the store is left alone for a moment instead of being asked by every request
      expect(queries).toBe(1);
    } finally {
      limiter.close();
    }
  });
});

describe("WebSocket: each subscribe message is one request of the same budget", () => {
  it("refuses a subscribe over the budget with RATE_LIMITED, keeps the connection, and shares the budget with HTTP", async () => {
    const { app, user } = await limited(2);
    const url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
    client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: user.authorization }, retryAttempts: 0, lazy: true });
    const run = async (query: string) => {
      const events = client!.iterate<{ cases: { totalCount: number } }>({ query });
      try {
        const { value } = await events.next();
        return value;
      } catch (errors) {
        return { errors: errors as { message: string; extensions?: Record<string, unknown> }[] };
      } finally {
        await events.return?.();
      }
    };
    const query = 'query { cases(domain: "demo") { totalCount } }';
    expect((await run(query))?.data?.cases.totalCount).toBe(0);
    expect((await run(query))?.data?.cases.totalCount).toBe(0);
    const refused = await run(query);
    expect(refused?.errors?.[0]).toMatchObject({
      message: "Rate limit exceeded",
      extensions: { code: "RATE_LIMITED", retryAfter: expect.any(Number) },
    });
    // the same connection still serves another domain, and HTTP in demo is spent too
    expect((await run('query { cases(domain: "other") { totalCount } }'))?.data?.cases.totalCount).toBe(0);
    expect((await get(app, CASES, user.authorization)).status).toBe(429);
  });
});

describe.skipIf(!usingPostgres())("PostgreSQL: counters shared by every process", () => {
  it("two servers on one database share each budget; the counters live in rate_limits", async () => {
    const { app, user } = await limited(3);
    // a second process: its own Prisma client, services and server over the same database
    const db2 = postgresDatabase(app.db.url!, 2, 5000, 0, app.db.directUrl);
    const services2 = await createServices(db2, app.services.config);
    const server2 = await buildServer(services2);
    try {
      const at = (which: "a" | "b") => (which === "a" ? app.http() : request(server2.app));
      expect((await at("a").get(CASES).set("Authorization", user.authorization)).status).toBe(200);
      expect((await at("b").get(CASES).set("Authorization", user.authorization)).status).toBe(200);
      expect((await at("a").get(CASES).set("Authorization", user.authorization)).status).toBe(200);
      const refusedB = await at("b").get(CASES).set("Authorization", user.authorization);
      expect429(refusedB, 30);
      expect(refusedB.body).toEqual({ error: "Rate limit exceeded" });
      expect((await at("a").get(CASES).set("Authorization", user.authorization)).status).toBe(429);
      // GraphQL on either process draws on the same row
      expect((await gqlPost(app, user.authorization, 'query { cases(domain: "demo") { totalCount } }')).status).toBe(429);
      const rows = await rateLimitRows(app);
      expect(rows.find((r) => r.key.endsWith(":demo"))?.points).toBeGreaterThanOrEqual(4);
      // another domain on the second process is untouched
      expect((await at("b").get("/a/other/api/case/v2/").set("Authorization", user.authorization)).status).toBe(200);
    } finally {
      await server2.close();
      await services2.worker.stop();
      await services2.close();
      await db2.close();
    }
  });

  it("two limiter instances on one database: concurrent requests never exceed the budget", async () => {
    const { app } = await limited(1);
    const db2 = postgresDatabase(app.db.url!, 4);
    try {
      const config = { rateLimitRequests: 25, rateLimitWindowSeconds: 30 };
      const limiters = [RateLimiter.create(config, app.db), RateLimiter.create(config, db2)];
      const principal = { userId: "00000000-0000-0000-0000-000000000001" };
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          limiters[i % 2].consume(principal, ["shared"]).then(
            () => "ok",
            (e: { code?: string }) => e.code,
          ),
        ),
      );
      expect(outcomes.filter((o) => o === "ok")).toHaveLength(25);
      expect(outcomes.filter((o) => o === "RATE_LIMITED")).toHaveLength(35);
      // counters of ended windows are purged; live ones stay
      await putRateLimitRow(app, "rl:old:demo", 3, new Date(Date.now() - 120_000));
      expect(await limiters[1].purgeExpired()).toBe(1);
      expect(await countRateLimitRows(app, "shared")).toBe(1);
      for (const l of limiters) l.close();
    } finally {
      await db2.close();
    }
  });
});
