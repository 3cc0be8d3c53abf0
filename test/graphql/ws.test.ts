import { afterEach, describe, expect, it, vi } from "vitest";
import { AdminService } from "../../src/admin/admin.service.ts";
import type { Authenticator } from "../../src/auth/authenticate.ts";
import type { Config } from "../../src/config.ts";
import { postgresEventBus } from "../../src/events/postgres-bus.ts";
import { basic, build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { usingPostgres } from "../helpers/db.ts";
import { connectWs, pause, until, type WsTestClient } from "../helpers/ws.ts";

/**
 * GraphQL over WebSocket (src/graphql/ws.ts, ws-sessions.ts), issue #12:
 * F2 — an open socket re-checks its credential on every operation, and is closed with 4403 when its
 *      key, token, user or membership goes away (on every process), or its OAuth token expires;
 * F6 — live subscriptions are bounded per socket and per user.
 */

const CREATE_CASE = 'mutation { createCase(domain: "demo", input: { caseType: "t", caseName: "made-on-ws", ownerId: "o" }) { case { caseId } } }';
const READ_CASES = '{ cases(domain: "demo", first: 1) { totalCount } }';
const CASE_CHANGED = 'subscription { caseChanged(domain: "demo") { caseId } }';

let app: TestApp;
let member: TestUser;
let writer: TestUser;
const clients: WsTestClient[] = [];

async function setUp(overrides: Partial<Config> = {}): Promise<void> {
  app = await build(overrides);
  await createDomain(app, "demo");
  member = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data", "edit_data"] });
  writer = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
}

afterEach(async () => {
  for (const c of clients.splice(0)) await c.dispose();
  await app?.close();
});

async function connect(authorization: string): Promise<WsTestClient> {
  const client = await connectWs(app, authorization);
  clients.push(client);
  return client;
}

/** A case written over REST by another user: what live caseChanged subscriptions of "demo" see. */
function writeCase(name = "seen"): Promise<unknown> {
  return app.http().post("/a/demo/api/case/v2/").set("Authorization", writer.authorization).send({ case_type: "t", case_name: name, owner_id: "o" });
}

const caseCount = () => app.db.prisma.case.count();
const keyIdOf = async (username: string) => (await app.db.prisma.apiKey.findFirstOrThrow({ where: { user: { username } } })).id;

describe("F2: credentials are re-checked on every subscribe message", () => {
  it("F2: a revoked API key: the next subscribe closes the socket 4403 and createCase does not run", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    expect(await ws.run(READ_CASES)).toEqual({ data: { cases: { totalCount: 0 } } });
    // revoked behind the service's back (no event): only the per-message re-check can notice
    await app.db.prisma.apiKey.update({ where: { id: await keyIdOf(member.username) }, data: { revokedAt: new Date() } });
    const before = await caseCount();
    expect(await ws.run(CREATE_CASE)).toEqual({ closed: 4403 });
    expect(await caseCount()).toBe(before);
  });

  it("F2: a deactivated user: the next subscribe closes the socket 4403 and reads nothing", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    expect(await ws.run("{ me { username isActive } }")).toEqual({ data: { me: { username: member.username, isActive: true } } });
    await app.db.prisma.user.update({ where: { username: member.username }, data: { isActive: false } });
    expect(await ws.run("{ me { username isActive } }")).toEqual({ closed: 4403 });
  });

  it("F2: a password changed since a Basic login closes the socket 4403 at the next subscribe", async () => {
    await setUp();
    const ws = await connect(basic(member.username, member.password));
    expect(await ws.run(READ_CASES)).toEqual({ data: { cases: { totalCount: 0 } } });
    await app.services.admin.createUser(app.root, { username: member.username, password: "a-new-password" });
    expect(await ws.run(READ_CASES)).toEqual({ closed: 4403 });
  });

  it("F2: a database outage during the re-check answers that operation SERVICE_UNAVAILABLE and runs nothing; the socket stays", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const authenticator = (app.services.admission as unknown as { authenticator: Authenticator }).authenticator;
    const outage = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    vi.spyOn(authenticator, "recheck").mockRejectedValueOnce(outage);
    const before = await caseCount();
    expect(await ws.run(CREATE_CASE)).toEqual({
      refused: [
        {
          message: "The service is temporarily unavailable: the database cannot be reached. Retry later.",
          extensions: { code: "SERVICE_UNAVAILABLE" },
        },
      ],
    });
    expect(await caseCount()).toBe(before);
    expect(await ws.run(READ_CASES)).toEqual({ data: { cases: { totalCount: 0 } } });
    expect(ws.closes).toEqual([]);
  });
});

describe("F2: sockets are closed when their credentials go away", () => {
  it("F2: revokeApiKey closes the key's open socket 4403 at once, with no message from the client", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const other = await connect(writer.authorization);
    await app.services.admin.revokeApiKey(app.root, await keyIdOf(member.username));
    expect(await ws.closed()).toBe(4403);
    // another user's socket is untouched
    expect(await other.run(READ_CASES)).toEqual({ data: { cases: { totalCount: 0 } } });
    expect(other.closes).toEqual([]);
  });

  it("F2: setUserActive(false) ends the user's live subscription: socket closed 4403", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const live = ws.subscribe(CASE_CHANGED);
    await until(() => live.events.length > 0, writeCase);
    await app.services.admin.setUserActive(app.root, member.username, false);
    expect(await ws.closed()).toBe(4403);
  });

  it("F2: a live caseChanged subscriber whose membership is removed gets its socket closed 4403 and receives no further events", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const live = ws.subscribe(CASE_CHANGED);
    await until(() => live.events.length > 0, writeCase);
    await app.services.admin.removeMembership(app.root, member.username, "demo");
    expect(await ws.closed()).toBe(4403);
    const seen = live.events.length;
    await writeCase("after-removal");
    await pause(300);
    expect(live.events.length).toBe(seen);
  });

  it("F2: a permission removed in the domain of a live subscription closes the socket 4403; a change in another domain does not", async () => {
    await setUp();
    await createDomain(app, "other");
    await app.services.admin.setPermissions(app.root, member.username, "other", ["access_api", "view_data"]);
    const ws = await connect(member.authorization);
    const live = ws.subscribe(CASE_CHANGED);
    await until(() => live.events.length > 0, writeCase);
    await app.services.admin.setPermissions(app.root, member.username, "other", ["access_api"]);
    await pause(300);
    expect(ws.closes).toEqual([]);
    await app.services.admin.setPermissions(app.root, member.username, "demo", ["access_api", "edit_data"]);
    expect(await ws.closed()).toBe(4403);
  });

  /** An access token of `member` by the password grant, through a new OAuth client. */
  async function passwordGrant(): Promise<{ body: { access_token: string } }> {
    const { client, clientSecret } = await app.services.admin.createOAuthClient(app.root, { name: "mobile" });
    const token = await app
      .http()
      .post("/oauth/token")
      .type("form")
      .set("Authorization", basic(client.clientId, clientSecret))
      .send({ grant_type: "password", username: member.username, password: member.password });
    expect(token.status).toBe(200);
    return token;
  }

  it("F2: an OAuth access token's socket is closed 4403 when the token expires (ACCESS_TOKEN_TTL_SECONDS)", async () => {
    await setUp({ accessTokenTtlSeconds: 2 });
    const token = await passwordGrant();
    const opened = Date.now();
    const ws = await connect(`Bearer ${token.body.access_token}`);
    const live = ws.subscribe(CASE_CHANGED);
    expect(await ws.run(READ_CASES)).toEqual({ data: { cases: { totalCount: 0 } } });
    expect(await ws.closed(4000)).toBe(4403);
    expect(Date.now() - opened).toBeLessThan(3500);
    await until(() => live.ended, undefined, 2000);
  });

  it("F2: revokeOAuthTokens closes the token's socket 4403", async () => {
    await setUp();
    const token = await passwordGrant();
    const ws = await connect(`Bearer ${token.body.access_token}`);
    await app.services.admin.revokeOAuthTokens(app.root, member.username);
    expect(await ws.closed()).toBe(4403);
  });

  it("F2: the periodic re-check (WS_RECHECK_SECONDS) closes a socket whose key was revoked without an event", async () => {
    await setUp({ wsRecheckSeconds: 1 });
    const ws = await connect(member.authorization);
    ws.subscribe(CASE_CHANGED);
    await app.db.prisma.apiKey.update({ where: { id: await keyIdOf(member.username) }, data: { revokedAt: new Date() } });
    expect(await ws.closed(4000)).toBe(4403);
  });

  it.skipIf(!usingPostgres())("F2 (PostgreSQL): a revocation made through another process's event bus closes the socket 4403", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const live = ws.subscribe(CASE_CHANGED);
    await until(() => live.events.length > 0, writeCase);
    // another process: its own bus (LISTEN/NOTIFY) and its own admin service on the same database
    const otherBus = await postgresEventBus(app.db.url!, app.db.directUrl);
    try {
      const otherAdmin = new AdminService(app.db.prisma, app.services.config.authRealm, otherBus);
      await otherAdmin.revokeApiKey(app.root, await keyIdOf(member.username));
      expect(await ws.closed()).toBe(4403);
    } finally {
      await otherBus.close();
    }
  });
});

describe("F6: live subscriptions are bounded per socket and per user", () => {
  it("F6: the subscription over WS_MAX_SUBSCRIPTIONS_PER_SOCKET gets TOO_MANY_SUBSCRIPTIONS; the earlier ones still deliver and the socket stays usable", async () => {
    await setUp({ wsMaxSubscriptionsPerSocket: 3 });
    const ws = await connect(member.authorization);
    const live = [ws.subscribe(CASE_CHANGED), ws.subscribe(CASE_CHANGED), ws.subscribe(CASE_CHANGED)];
    await until(() => live.every((s) => s.events.length > 0), writeCase);
    const extra = ws.subscribe(CASE_CHANGED);
    await until(() => extra.ended);
    expect(extra.errors).toEqual([
      { message: "Too many subscriptions: at most 3 may be live on one connection.", extensions: { code: "TOO_MANY_SUBSCRIPTIONS" } },
    ]);
    const counts = live.map((s) => s.events.length);
    await until(() => live.every((s, i) => s.events.length > counts[i]!), writeCase);
    // queries and mutations hold no slot
    expect(await ws.run(READ_CASES)).toMatchObject({ data: { cases: { totalCount: expect.any(Number) } } });
    expect(ws.closes).toEqual([]);
  });

  it("F6: completing a subscription frees its slot", async () => {
    await setUp({ wsMaxSubscriptionsPerSocket: 2 });
    const ws = await connect(member.authorization);
    const first = ws.subscribe(CASE_CHANGED);
    const second = ws.subscribe(CASE_CHANGED);
    await until(() => first.events.length > 0 && second.events.length > 0, writeCase);
    first.stop();
    await pause(100);
    const third = ws.subscribe(CASE_CHANGED);
    await until(() => third.events.length > 0, writeCase);
    expect(third.errors).toEqual([]);
  });

  it("F6: a refused subscription (FORBIDDEN) frees its slot too", async () => {
    await setUp({ wsMaxSubscriptionsPerSocket: 1 });
    const ws = await connect(member.authorization);
    const refused = ws.subscribe('subscription { caseChanged(domain: "nowhere") { caseId } }');
    await until(() => refused.ended);
    expect(refused.errors.map((e) => e.extensions?.code)).toEqual(["FORBIDDEN"]);
    const live = ws.subscribe(CASE_CHANGED);
    await until(() => live.events.length > 0, writeCase);
    expect(live.errors).toEqual([]);
  });

  it("F6: WS_MAX_SUBSCRIPTIONS_PER_USER counts across the user's sockets; a closed socket frees its slots", async () => {
    await setUp({ wsMaxSubscriptionsPerSocket: 5, wsMaxSubscriptionsPerUser: 2 });
    const a = await connect(member.authorization);
    const b = await connect(member.authorization);
    const held = [a.subscribe(CASE_CHANGED), a.subscribe(CASE_CHANGED)];
    await until(() => held.every((s) => s.events.length > 0), writeCase);
    const refused = b.subscribe(CASE_CHANGED);
    await until(() => refused.ended);
    expect(refused.errors).toEqual([
      { message: "Too many subscriptions: at most 2 may be live for one user.", extensions: { code: "TOO_MANY_SUBSCRIPTIONS" } },
    ]);
    // another user has slots of their own
    const otherUser = await connect(writer.authorization);
    const theirs = otherUser.subscribe(CASE_CHANGED);
    await until(() => theirs.events.length > 0, writeCase);
    await a.dispose();
    await pause(200);
    const admitted = b.subscribe(CASE_CHANGED);
    await until(() => admitted.events.length > 0, writeCase);
    expect(admitted.errors).toEqual([]);
  });
});
