import { createHash, randomBytes } from "node:crypto";
import { Agent } from "node:http";
import request from "supertest";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { loadConfig, type Config } from "../../src/config.ts";
import { postgresDatabase } from "../../src/db/client.ts";
import { verifyUserPassword } from "../../src/auth/secrets.ts";
import { addressBucket, LoginThrottle } from "../../src/rate-limit/login-throttle.service.ts";
import { buildServer } from "../../src/server.ts";
import { createServices } from "../../src/services.ts";
import { basic, build, createDomain, createUser, headerValues, type TestApp, type TestUser } from "../helpers/app.ts";
import { usingPostgres } from "../helpers/db.ts";
import { rateLimitRows } from "../helpers/rows.ts";

/**
 * Issue #12 F7: failed password logins are throttled per client address and per username, shared
 * across processes, checked before any password is hashed; 429 with Retry-After in each face's
 * shape. Requests come from chosen loopback addresses (127.0.0.x) so that "another address" is a
 * real other peer address.
 */

// every password check goes through verifyUserPassword: the spy proves a refused attempt hashes nothing
vi.mock("../../src/auth/secrets.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/auth/secrets.ts")>();
  return { ...original, verifyUserPassword: vi.fn(original.verifyUserPassword) };
});
const verifySpy = vi.mocked(verifyUserPassword);

const PATH = "/a/demo/api/location_type/v1/";
const MEMBER = ["access_api", "view_locations"];
const MESSAGE = "Too many failed login attempts. Retry later.";

let app: TestApp;
let user: TestUser;
const agents = new Map<string, Agent>();
/** the test's app listening on a port, once a WebSocket needs it */
let listening: Promise<string> | undefined;

/** An HTTP agent whose connections leave from `address` (any 127.0.0.x reaches loopback). */
function from(address: string): Agent {
  let agent = agents.get(address);
  if (!agent) agents.set(address, (agent = new Agent({ localAddress: address })));
  return agent;
}

async function setUp(overrides: Partial<Config> = {}): Promise<void> {
  app = await build({ workers: 0, ...overrides });
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: MEMBER, password: "right-password" });
  verifySpy.mockClear();
}

afterEach(async () => {
  const built = app as TestApp | undefined;
  app = undefined as unknown as TestApp; // the next test builds its own, or none
  listening = undefined;
  await built?.close();
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
});

const restAs = (authorization: string, address = "127.0.0.2", target: TestApp = app) =>
  request(target.server.app).get(PATH).agent(from(address)).set("Authorization", authorization);
const wrong = (address = "127.0.0.2") => restAs(basic(user.username, "wrong-password"), address);
const right = (address = "127.0.0.2") => restAs(basic(user.username, "right-password"), address);

async function fail(times: number, address = "127.0.0.2"): Promise<void> {
  for (let i = 0; i < times; i++) expect((await wrong(address)).status).toBe(401);
}

/**
 * A WebSocket login (connection_init with that Authorization) from `address`, optionally through a
 * proxy that names `forwardedFor`: the close code, 1000 when it was acknowledged.
 */
async function wsLogin(
  authorization: string,
  { address = "127.0.0.2", forwardedFor }: { address?: string; forwardedFor?: string } = {},
): Promise<number> {
  listening ??= app.server.listen(0, "127.0.0.1");
  return listening.then(
    (base) =>
      new Promise<number>((resolve, reject) => {
        const headers = forwardedFor === undefined ? {} : { "X-Forwarded-For": forwardedFor };
        const socket = new WebSocket(`${base.replace("http", "ws")}/graphql`, "graphql-transport-ws", { localAddress: address, headers });
        socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: authorization } })));
        socket.on("message", (data) => {
          if (JSON.parse(String(data)).type === "connection_ack") socket.close(1000);
        });
        socket.on("close", (code) => resolve(code));
        socket.on("error", reject);
      }),
  );
}

function expect429(res: { status: number; headers: Record<string, string> }, windowSeconds: number): void {
  expect(res.status).toBe(429);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.headers["retry-after"]).toMatch(/^\d+$/);
  expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers["retry-after"])).toBeLessThanOrEqual(windowSeconds);
  // a 429 is no challenge: retrying with other credentials would not help
  expect(res.headers["www-authenticate"]).toBeUndefined();
}

describe("per client address", () => {
  beforeEach(() => setUp({ loginFailuresPerAddress: 3, loginAddressWindowSeconds: 60 }));

  it("F7: after N failed Basic logins from one address, REST answers 429 + Retry-After without hashing", async () => {
    await fail(3);
    expect(verifySpy).toHaveBeenCalledTimes(3);
    for (const res of [await wrong(), await right()]) {
      expect429(res, 60);
      expect(res.text).toBe(`{"error":"${MESSAGE}"}`);
    }
    expect(verifySpy).toHaveBeenCalledTimes(3);
    // the 401s before carried the challenges as always
    const fresh = await wrong("127.0.0.3");
    expect(fresh.status).toBe(401);
    expect(headerValues(fresh, "WWW-Authenticate").map((c) => c.split(" ")[0])).toEqual(["Basic", "Digest", "Digest", "Bearer"]);
  });

  it("F7: a burst of guesses sent at once meets the budget as guesses sent one by one: at most N are hashed", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => wrong()));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(3).fill(401), ...Array(17).fill(429)]);
    expect(verifySpy).toHaveBeenCalledTimes(3);
  });

  it("F7: an address that logged in as the user is not locked out by others' failures, and its own guesses still meet a budget", async () => {
    expect((await right("127.0.0.2")).status).toBe(200);
    // a neighbour behind the same address spends its budget guessing other accounts…
    for (let i = 0; i < 3; i++) expect((await restAs(basic(`other${i}`, "guess"), "127.0.0.2")).status).toBe(401);
    expect((await restAs(basic("other9", "guess"), "127.0.0.2")).status).toBe(429);
    // …and the user who logged in from there before still gets in
    expect((await right("127.0.0.2")).status).toBe(200);
    // guesses from the trusted address itself are counted for that address and user together…
    await fail(3, "127.0.0.2");
    expect429(await wrong("127.0.0.2"), 60);
    // …and past that budget the right password still gets in while the username's lasts (#24 G5:
    // this was a 429, the lockout the finding is about)
    expect((await right("127.0.0.2")).status).toBe(200);
  });

  it("F7: the real user with the right password from another address still gets in while one address is blocked", async () => {
    await fail(3, "127.0.0.2");
    expect((await right("127.0.0.2")).status).toBe(429);
    expect((await right("127.0.0.3")).status).toBe(200);
    // an API key is no password: it is never throttled
    expect((await restAs(user.authorization, "127.0.0.2")).status).toBe(200);
  });

  it("F7: successful logins are not failures: many of them never lead to 429", async () => {
    for (let i = 0; i < 8; i++) expect((await right()).status).toBe(200);
    await fail(2);
    expect((await right()).status).toBe(200);
    await fail(1);
    // the third failure spent the budget: the next guess is refused (a right password from this
    // address, which logged in before, is not: #24 G5, below)
    expect429(await wrong(), 60);
  });

  it("F7: GraphQL over HTTP answers 429 with extensions.code RATE_LIMITED and retryAfter, without hashing", async () => {
    const gql = (authorization: string) =>
      request(app.server.app)
        .post("/graphql")
        .agent(from("127.0.0.2"))
        .set("Authorization", authorization)
        .set("Content-Type", "application/json")
        .send({ query: "{ me { username } }" });
    for (let i = 0; i < 3; i++) expect((await gql(basic(user.username, "nope"))).status).toBe(401);
    verifySpy.mockClear();
    const refused = await gql(basic(user.username, "right-password"));
    expect429(refused, 60);
    expect(refused.text).toBe(
      `{"errors":[{"message":"${MESSAGE}","extensions":{"code":"RATE_LIMITED","retryAfter":${Number(refused.headers["retry-after"])}}}]}`,
    );
    expect(verifySpy).not.toHaveBeenCalled();
  });

  it("F7: WebSocket connection_init with Basic closes 4430 once the address is over budget, without hashing", async () => {
    const closeCode = (authorization: string) => wsLogin(authorization);
    // failures over WebSocket count like any other
    for (let i = 0; i < 2; i++) expect(await closeCode(basic(user.username, "nope"))).toBe(4403);
    await fail(1);
    verifySpy.mockClear();
    expect(await closeCode(basic(user.username, "right-password"))).toBe(4430);
    expect(verifySpy).not.toHaveBeenCalled();
    expect((await right("127.0.0.2")).status).toBe(429);
  });

  it("G5: without TRUST_PROXY, X-Forwarded-For on a WebSocket upgrade is the client's own word: ignored", async () => {
    for (let i = 0; i < 3; i++) expect(await wsLogin(basic(user.username, "nope"), { forwardedFor: `198.51.100.${i}` })).toBe(4403);
    expect(await wsLogin(basic(user.username, "right-password"), { forwardedFor: "198.51.100.9" })).toBe(4430);
  });

  it("F7: a wrong Digest response is a failed login too; a 429 answers before any Digest check", async () => {
    const challenge = await request(app.server.app).get(PATH).agent(from("127.0.0.2"));
    const digest = headerValues(challenge, "WWW-Authenticate").find((c) => c.includes("algorithm=MD5"))!;
    const nonce = /nonce="([^"]+)"/.exec(digest)![1];
    const realm = /realm="([^"]+)"/.exec(digest)![1];
    const md5 = (value: string) => createHash("md5").update(value).digest("hex");
    const answer = (password: string, nc: number) => {
      const cnonce = randomBytes(8).toString("hex");
      const ncHex = nc.toString(16).padStart(8, "0");
      const response = md5(`${md5(`${user.username}:${realm}:${password}`)}:${nonce}:${ncHex}:${cnonce}:auth:${md5(`GET:${PATH}`)}`);
      return `Digest username="${user.username}", realm="${realm}", nonce="${nonce}", uri="${PATH}", algorithm=MD5, qop=auth, nc=${ncHex}, cnonce="${cnonce}", response="${response}"`;
    };
    for (let nc = 1; nc <= 3; nc++) expect((await restAs(answer("guess", nc))).status).toBe(401);
    const refused = await restAs(answer("right-password", 4));
    expect429(refused, 60);
    expect(refused.body).toEqual({ error: MESSAGE });
    // from another address the same right answer is accepted
    expect((await restAs(answer("right-password", 5), "127.0.0.3")).status).toBe(200);
  });
});

describe("#24 G5: a right password at the user's own address, past that address's budget", () => {
  beforeEach(() => setUp({ loginFailuresPerAddress: 3, loginFailuresPerUsername: 5, loginUsernameWindowSeconds: 900 }));

  it("G5: a neighbour's failures at the user's address do not refuse the user's right password over HTTP Basic while the username's budget lasts; guesses stay bounded by it", async () => {
    expect((await right()).status).toBe(200); // the user's address: it logged in from there
    await fail(3); // a neighbour behind the same address spends that address's budget for the user
    verifySpy.mockClear();
    const over = await wrong(); // past it a guess is checked on the username's budget, and answers 429
    expect429(over, 60);
    expect(over.text).toBe(`{"error":"${MESSAGE}"}`);
    expect(verifySpy).toHaveBeenCalledTimes(1);
    expect((await right()).status).toBe(200); // the real user still gets in
    // the guesser gets no more than the username's budget (5): four more, then nothing is checked,
    // a right guess included, so a 429 tells nothing of the password
    for (let i = 0; i < 4; i++) expect429(await wrong(), 60);
    verifySpy.mockClear();
    expect429(await wrong(), 60);
    expect429(await right(), 60);
    expect(verifySpy).not.toHaveBeenCalled();
  });

  it("G5: the same over WebSocket connection_init: the right password is acknowledged past the address's budget, until the username's is spent", async () => {
    const login = (password: string) => wsLogin(basic(user.username, password));
    expect(await login("right-password")).toBe(1000);
    for (let i = 0; i < 3; i++) expect(await login("nope")).toBe(4403);
    expect(await login("nope")).toBe(4430);
    expect(await login("right-password")).toBe(1000);
    for (let i = 0; i < 4; i++) expect(await login("nope")).toBe(4430);
    verifySpy.mockClear();
    expect(await login("right-password")).toBe(4430);
    expect(verifySpy).not.toHaveBeenCalled();
  });

  it("G5: a neighbour's failures for other accounts never touch the user's budget, and an address that never logged in as the user gets no fallback", async () => {
    expect((await right()).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await restAs(basic(`other${i}`, "guess"))).status).toBe(401);
    expect((await right()).status).toBe(200);
    // a never-seen address is refused outright once its own budget is spent, the right password too
    await fail(3, "127.0.0.3");
    verifySpy.mockClear();
    expect429(await right("127.0.0.3"), 60);
    expect(verifySpy).not.toHaveBeenCalled();
  });
});

describe("behind a trusted proxy (TRUST_PROXY)", () => {
  beforeEach(() => setUp({ loginFailuresPerAddress: 3, trustProxy: true }));

  const via = (forwardedFor: string, password: string) => restAs(basic(user.username, password), "127.0.0.2").set("X-Forwarded-For", forwardedFor);

  it("F7: the address is the client the proxy saw: one client is throttled, another behind the same proxy is not", async () => {
    for (let i = 0; i < 3; i++) expect((await via("198.51.100.1", "guess")).status).toBe(401);
    expect((await via("198.51.100.1", "right-password")).status).toBe(429);
    expect((await via("198.51.100.2", "right-password")).status).toBe(200);
  });

  it("G5: a WebSocket login is counted by the client the proxy names, as over HTTP: one client over budget, another behind the same proxy gets in", async () => {
    const login = (password: string, forwardedFor: string) => wsLogin(basic(user.username, password), { forwardedFor });
    for (let i = 0; i < 3; i++) expect(await login("guess", "198.51.100.1")).toBe(4403);
    expect(await login("right-password", "198.51.100.1")).toBe(4430);
    // one client, one budget, whichever face it logs in through
    expect((await via("198.51.100.1", "right-password")).status).toBe(429);
    expect(await login("right-password", "198.51.100.2")).toBe(1000);
    // an entry the client wrote itself gives it no new budget
    expect(await login("right-password", "203.0.113.9, 198.51.100.1")).toBe(4430);
  });

  it("F7: an X-Forwarded-For entry the client wrote itself does not give it a new budget", async () => {
    for (let i = 0; i < 3; i++) expect((await via(`203.0.113.${i}, 198.51.100.1`, "guess")).status).toBe(401);
    expect((await via("203.0.113.99, 198.51.100.1", "right-password")).status).toBe(429);
  });
});

describe("the OAuth token endpoint", () => {
  beforeEach(() => setUp({ loginFailuresPerAddress: 2 }));

  const token = (form: Record<string, string>, client: { id: string; secret: string }, address = "127.0.0.2") =>
    request(app.server.app).post("/oauth/token").agent(from(address)).type("form").set("Authorization", basic(client.id, client.secret)).send(form);

  it("F7: password grant: failed logins lead to 429 too_many_attempts in RFC 6749 JSON, without hashing", async () => {
    const { client, clientSecret } = await app.services.admin.createOAuthClient(app.root, { name: "app" });
    const c = { id: client.clientId, secret: clientSecret };
    const grant = (password: string) => token({ grant_type: "password", username: user.username, password }, c);
    for (let i = 0; i < 2; i++) expect((await grant("nope")).body.error).toBe("invalid_grant");
    verifySpy.mockClear();
    const refused = await grant("right-password");
    expect429(refused, 60);
    expect(refused.headers["cache-control"]).toBe("no-store");
    expect(refused.text).toBe(`{"error":"too_many_attempts","error_description":"${MESSAGE}"}`);
    expect(verifySpy).not.toHaveBeenCalled();
    // the same address is refused on the other faces as well; another address gets its token
    expect((await right("127.0.0.2")).status).toBe(429);
    expect((await token({ grant_type: "password", username: user.username, password: "right-password" }, c, "127.0.0.3")).status).toBe(200);
  });

  it("G5: password grant from the user's own address: past its budget a wrong password is 429 too_many_attempts, the right one gets its token", async () => {
    const { client, clientSecret } = await app.services.admin.createOAuthClient(app.root, { name: "app" });
    const c = { id: client.clientId, secret: clientSecret };
    const grant = (password: string) => token({ grant_type: "password", username: user.username, password }, c);
    expect((await grant("right-password")).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await grant("nope")).body.error).toBe("invalid_grant");
    const refused = await grant("nope");
    expect429(refused, 60);
    expect(refused.text).toBe(`{"error":"too_many_attempts","error_description":"${MESSAGE}"}`);
    expect((await grant("right-password")).status).toBe(200);
  });

  it("F7: a wrong client secret (client_credentials) counts against the address", async () => {
    const { client, clientSecret } = await app.services.admin.createOAuthClient(app.root, {
      name: "svc",
      grants: ["client_credentials"],
      username: user.username,
    });
    const grant = (secret: string) => token({ grant_type: "client_credentials" }, { id: client.clientId, secret });
    for (let i = 0; i < 2; i++) expect((await grant("guess")).status).toBe(401);
    const refused = await grant(clientSecret);
    expect429(refused, 60);
    expect(refused.body).toEqual({ error: "too_many_attempts", error_description: MESSAGE });
    expect((await token({ grant_type: "client_credentials" }, { id: client.clientId, secret: clientSecret }, "127.0.0.3")).status).toBe(200);
  });
});

describe("per username", () => {
  beforeEach(() => setUp({ loginFailuresPerAddress: 100, loginFailuresPerUsername: 4, loginUsernameWindowSeconds: 900 }));

  it("F7: the username budget holds across several addresses; the address the user logged in from is exempt", async () => {
    expect((await right("127.0.0.9")).status).toBe(200); // the real user's usual address
    for (let i = 0; i < 4; i++) expect((await wrong(`127.0.1.${i + 1}`)).status).toBe(401);
    verifySpy.mockClear();
    const refused = await wrong("127.0.1.5");
    expect429(refused, 900);
    expect(refused.body).toEqual({ error: MESSAGE });
    expect((await right("127.0.1.6")).status).toBe(429);
    expect(verifySpy).not.toHaveBeenCalled();
    // the distributed guesser cannot lock the real user out of their own address
    expect((await right("127.0.0.9")).status).toBe(200);
    // another username is untouched
    const other = await createUser(app, { domain: "demo", permissions: MEMBER, password: "pw-other" });
    expect((await restAs(basic(other.username, "pw-other"), "127.0.1.5")).status).toBe(200);
  });
});

describe("windows and configuration", () => {
  it("F7: once the window passes, the address may try again", async () => {
    await setUp({ loginFailuresPerAddress: 2, loginAddressWindowSeconds: 1 });
    await fail(2);
    const refused = await right();
    expect429(refused, 1);
    await new Promise((resolve) => setTimeout(resolve, Number(refused.headers["retry-after"]) * 1000 + 150));
    expect((await right()).status).toBe(200);
  });

  it("F7: a budget of 0 disables it", async () => {
    await setUp({ loginFailuresPerAddress: 0, loginFailuresPerUsername: 0 });
    await fail(15);
    expect((await right()).status).toBe(200);
  });

  it("F7: defaults 10 per address per minute, 50 per username per 15 minutes; the variables are read and validated", () => {
    expect(loadConfig({})).toMatchObject({
      loginFailuresPerAddress: 10,
      loginAddressWindowSeconds: 60,
      loginFailuresPerUsername: 50,
      loginUsernameWindowSeconds: 900,
    });
    const set = loadConfig({
      LOGIN_FAILURES_PER_ADDRESS: "0",
      LOGIN_ADDRESS_WINDOW_SECONDS: "5",
      LOGIN_FAILURES_PER_USERNAME: "7",
      LOGIN_USERNAME_WINDOW_SECONDS: "30",
    });
    expect(set).toMatchObject({
      loginFailuresPerAddress: 0,
      loginAddressWindowSeconds: 5,
      loginFailuresPerUsername: 7,
      loginUsernameWindowSeconds: 30,
    });
    expect(() => loadConfig({ LOGIN_FAILURES_PER_ADDRESS: "-1" })).toThrow(/LOGIN_FAILURES_PER_ADDRESS/);
    expect(() => loadConfig({ LOGIN_USERNAME_WINDOW_SECONDS: "0" })).toThrow(/LOGIN_USERNAME_WINDOW_SECONDS/);
  });

  it("F7: addresses: IPv4 as is (also IPv4-mapped), IPv6 by its /64", () => {
    expect(addressBucket("192.0.2.7")).toBe("192.0.2.7");
    expect(addressBucket("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(addressBucket("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressBucket("::1")).toBe("0:0:0:0::/64");
    expect(addressBucket("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });

  it("F7: when the counter store fails, attempts are let through (the login meets the outage and its 503)", async () => {
    const failing = () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
    const db = { kind: "postgres" as const, prisma: { $queryRawUnsafe: failing, $executeRawUnsafe: failing } as never };
    const throttle = LoginThrottle.create({ ...loadConfig({}), loginFailuresPerAddress: 1 }, db);
    try {
      for (let i = 0; i < 3; i++) {
        const attempt = await throttle.attempt({ address: "192.0.2.1", username: "u" });
        await expect(attempt.failed()).resolves.toBeUndefined();
      }
    } finally {
      throttle.close();
    }
  });
});

describe.skipIf(!usingPostgres())("PostgreSQL: budgets shared by every process", () => {
  it("F7: failures on one process count on another; the counters live in rate_limits", async () => {
    await setUp({ loginFailuresPerAddress: 3, loginFailuresPerUsername: 5 });
    const db2 = postgresDatabase(app.db.url!, 2, 5000, 0, app.db.directUrl);
    const services2 = await createServices(db2, app.services.config);
    const server2 = await buildServer(services2);
    const second = { ...app, server: server2 } as TestApp;
    try {
      expect((await restAs(basic(user.username, "x"), "127.0.0.2")).status).toBe(401);
      expect((await restAs(basic(user.username, "x"), "127.0.0.2", second)).status).toBe(401);
      expect((await restAs(basic(user.username, "x"), "127.0.0.2")).status).toBe(401);
      verifySpy.mockClear();
      expect429(await restAs(basic(user.username, "right-password"), "127.0.0.2", second), 60);
      expect(verifySpy).not.toHaveBeenCalled();
      // the username budget too: two more failures from other addresses, on the other process
      expect((await restAs(basic(user.username, "x"), "127.0.0.3", second)).status).toBe(401);
      expect((await restAs(basic(user.username, "x"), "127.0.0.4")).status).toBe(401);
      expect429(await restAs(basic(user.username, "x"), "127.0.0.5", second), 900);
      const keys = (await rateLimitRows(app)).map((r) => r.key).sort();
      expect(keys).toEqual(expect.arrayContaining(["login-addr:127.0.0.2", `login-user:${user.username}`]));
    } finally {
      await server2.close();
      await services2.worker.stop();
      await services2.close();
      await db2.close();
    }
  });
});
