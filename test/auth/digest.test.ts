import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, createDomain, createUser, headerValues, type TestApp, type TestUser } from "../helpers/app.ts";
import { tableRows, userRow } from "../helpers/rows.ts";

/**
 * CONTRACT §1 Authentication: RFC 7616 Digest (MD5 and SHA-256, qop=auth). The client side of the
 * handshake is written here with node:crypto, independently of the server's implementation.
 */

const PATH = "/a/demo/api/location_type/v1/";
const MEMBER = ["access_api", "view_locations"];

type Algorithm = "MD5" | "SHA-256";
const NODE_HASH: Record<Algorithm, string> = { MD5: "md5", "SHA-256": "sha256" };

interface Challenge {
  realm: string;
  nonce: string;
  opaque?: string;
  qop?: string;
  algorithm: Algorithm;
  stale?: string;
}

/** The parameters of one `Digest …` challenge (quoted or token values). */
function parseChallenge(header: string): Challenge {
  expect(header).toMatch(/^Digest /);
  const params: Record<string, string> = {};
  for (const m of header.slice("Digest ".length).matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]*))/g)) {
    params[m[1].toLowerCase()] = m[2] ?? m[3];
  }
  return params as unknown as Challenge;
}

/** The Digest challenges of a 401, keyed by algorithm. */
function digestChallenges(res: Parameters<typeof headerValues>[0]): Record<Algorithm, Challenge> {
  const challenges = headerValues(res, "WWW-Authenticate")
    .filter((h) => h.startsWith("Digest "))
    .map(parseChallenge);
  const byAlgorithm = Object.fromEntries(challenges.map((c) => [c.algorithm, c])) as Record<Algorithm, Challenge>;
  expect(Object.keys(byAlgorithm).sort()).toEqual(["MD5", "SHA-256"]);
  return byAlgorithm;
}

const h = (algorithm: Algorithm, value: string) => createHash(NODE_HASH[algorithm]).update(value).digest("hex");

interface Answer {
  username: string;
  password: string;
  method: string;
  uri: string;
  challenge: Challenge;
  nc?: number;
  cnonce?: string;
  /** the algorithm named in the header; defaults to the challenge's */
  algorithm?: Algorithm;
  /** overrides, for tampering after the response is computed */
  nonce?: string;
  realm?: string;
}

/** An `Authorization: Digest …` value answering a challenge (RFC 7616 §3.4, qop=auth). */
function digestAuthorization(a: Answer): string {
  const algorithm = a.algorithm ?? a.challenge.algorithm;
  const realm = a.realm ?? a.challenge.realm;
  const nonce = a.nonce ?? a.challenge.nonce;
  const nc = (a.nc ?? 1).toString(16).padStart(8, "0");
  const cnonce = a.cnonce ?? randomBytes(8).toString("hex");
  const ha1 = h(algorithm, `${a.username}:${realm}:${a.password}`);
  const ha2 = h(algorithm, `${a.method}:${a.uri}`);
  const response = h(algorithm, `${ha1}:${nonce}:${nc}:${cnonce}:auth:${ha2}`);
  const parts = [
    `username="${a.username}"`,
    `realm="${realm}"`,
    `nonce="${nonce}"`,
    `uri="${a.uri}"`,
    `algorithm=${algorithm}`,
    `qop=auth`,
    `nc=${nc}`,
    `cnonce="${cnonce}"`,
    `response="${response}"`,
  ];
  if (a.challenge.opaque !== undefined) parts.push(`opaque="${a.challenge.opaque}"`);
  return `Digest ${parts.join(", ")}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let app: TestApp;
let user: TestUser;

async function setUp(overrides: Parameters<typeof build>[0] = {}) {
  app = await build(overrides);
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: MEMBER });
}

/** The first leg of the handshake: an unauthenticated request and its Digest challenges. */
async function challenge(path = PATH): Promise<Record<Algorithm, Challenge>> {
  const res = await app.http().get(path);
  expect(res.status).toBe(401);
  return digestChallenges(res);
}

afterEach(() => app?.close());

describe("Digest", () => {
  beforeEach(() => setUp());

  it("challenges with one Digest per algorithm, SHA-256 first, qop=auth, same realm, no stale", async () => {
    const res = await app.http().get(PATH);
    expect(res.status).toBe(401);
    const digests = headerValues(res, "WWW-Authenticate").filter((v) => v.startsWith("Digest "));
    expect(digests).toHaveLength(2);
    const [first, second] = digests.map(parseChallenge);
    expect(first.algorithm).toBe("SHA-256");
    expect(second.algorithm).toBe("MD5");
    for (const c of [first, second]) {
      expect(c.realm).toBe(app.services.config.authRealm);
      expect(c.qop).toBe("auth");
      expect(c.nonce).toBeTruthy();
      expect(c.opaque).toBeTruthy();
      expect(c.stale).toBeUndefined();
    }
  });

  it.each<Algorithm>(["SHA-256", "MD5"])("a real handshake succeeds with %s", async (algorithm) => {
    const c = (await challenge())[algorithm];
    const authorization = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c });
    const res = await app.http().get(PATH).set("Authorization", authorization);
    expect(res.status).toBe(200);
  });

  it("signs the request-target including its query string", async () => {
    const uri = `${PATH}?format=json`;
    const c = (await challenge())["SHA-256"];
    const res = await app
      .http()
      .get(uri)
      .set("Authorization", digestAuthorization({ ...user, method: "GET", uri, challenge: c }));
    expect(res.status).toBe(200);
  });

  it.each<Algorithm>(["SHA-256", "MD5"])("refuses a wrong password with %s (401, fresh challenges, no stale)", async (algorithm) => {
    const c = (await challenge())[algorithm];
    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...user, password: "wrong", method: "GET", uri: PATH, challenge: c }));
    expect(res.status).toBe(401);
    expect(typeof res.body.error).toBe("string");
    const again = digestChallenges(res);
    expect(again["SHA-256"].stale).toBeUndefined();
    expect(again.MD5.stale).toBeUndefined();
  });

  it("refuses an unknown user (401)", async () => {
    const c = (await challenge())["SHA-256"];
    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ username: "ghost", password: "x", method: "GET", uri: PATH, challenge: c }));
    expect(res.status).toBe(401);
  });

  it("refuses a deactivated user with the right password (401)", async () => {
    await app.services.admin.setUserActive(app.root, user.username, false);
    const c = (await challenge())["SHA-256"];
    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c }));
    expect(res.status).toBe(401);
  });

  it("refuses a uri in the header that differs from the request's path (401)", async () => {
    const c = (await challenge())["SHA-256"];
    // A digest that is valid for another path, replayed against this one.
    const signedFor = "/a/demo/api/location/v2/";
    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...user, method: "GET", uri: signedFor, challenge: c }));
    expect(res.status).toBe(401);
    // The same path with a query string the digest does not cover is also another request-target.
    const res2 = await app
      .http()
      .get(`${PATH}?x=1`)
      .set("Authorization", digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc: 2 }));
    expect(res2.status).toBe(401);
  });

  it("refuses a digest computed for another method (401)", async () => {
    const c = (await challenge())["SHA-256"];
    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...user, method: "POST", uri: PATH, challenge: c }));
    expect(res.status).toBe(401);
  });

  it("refuses a realm other than the server's (401)", async () => {
    const c = (await challenge())["SHA-256"];
    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, realm: "elsewhere" }));
    expect(res.status).toBe(401);
  });

  it("refuses a response hashed with another algorithm than the header names (401)", async () => {
    const c = (await challenge()).MD5;
    // Hashed with MD5 but declared SHA-256: the server must check with the declared algorithm.
    const header = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c }).replace("algorithm=MD5", "algorithm=SHA-256");
    const res = await app.http().get(PATH).set("Authorization", header);
    expect(res.status).toBe(401);
  });

  it("refuses a replayed (nonce, nc) while a higher nc on the same nonce succeeds", async () => {
    const c = (await challenge())["SHA-256"];
    const first = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc: 1 });
    expect((await app.http().get(PATH).set("Authorization", first)).status).toBe(200);

    // The very same header again: a replay.
    const replay = await app.http().get(PATH).set("Authorization", first);
    expect(replay.status).toBe(401);
    // The same nc with a new cnonce is a replay of the count too.
    const sameNc = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc: 1 });
    expect((await app.http().get(PATH).set("Authorization", sameNc)).status).toBe(401);

    const next = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc: 2 });
    expect((await app.http().get(PATH).set("Authorization", next)).status).toBe(200);
    // A count may skip ahead, but never go back.
    const skip = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc: 7 });
    expect((await app.http().get(PATH).set("Authorization", skip)).status).toBe(200);
    const back = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc: 5 });
    expect((await app.http().get(PATH).set("Authorization", back)).status).toBe(401);
  });

  it("shares one nonce between the MD5 and SHA-256 challenges, and their counts with it", async () => {
    const both = await challenge();
    expect(both.MD5.nonce).toBe(both["SHA-256"].nonce);
    const sha = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: both["SHA-256"], nc: 1 });
    expect((await app.http().get(PATH).set("Authorization", sha)).status).toBe(200);
    const md5 = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: both.MD5, nc: 1 });
    expect((await app.http().get(PATH).set("Authorization", md5)).status).toBe(401);
  });

  it("refuses a tampered nonce (401 without stale)", async () => {
    const c = (await challenge())["SHA-256"];
    const [issued, random, signature] = c.nonce.split(".");
    const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
    const tampered = [
      `${issued}.${random}.${flip(signature)}`, // forged signature
      `${(parseInt(issued, 36) + 3_600_000).toString(36)}.${random}.${signature}`, // extended issue time
      `${issued}.${flip(random)}.${signature}`,
      "00000000000000000000", // not even the shape of a nonce
    ];
    for (const nonce of tampered) {
      const res = await app
        .http()
        .get(PATH)
        .set("Authorization", digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nonce }));
      expect(res.status, nonce).toBe(401);
      const again = digestChallenges(res);
      expect(again["SHA-256"].stale, nonce).toBeUndefined();
      expect(again.MD5.stale, nonce).toBeUndefined();
    }
  });

  it("refuses nc=00000000 and counts beyond 31 bits with 401, never 500", async () => {
    const c = (await challenge())["SHA-256"];
    // RFC 7616 §3.4: the first request on a nonce sends nc=00000001.
    for (const nc of [0, 0xffffffff, 0x80000000]) {
      const res = await app
        .http()
        .get(PATH)
        .set("Authorization", digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc }));
      expect(res.status, nc.toString(16)).toBe(401);
      expect(typeof res.body.error).toBe("string");
    }
    // The nonce is still usable with an ordinary count afterwards.
    const ok = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc: 1 });
    expect((await app.http().get(PATH).set("Authorization", ok)).status).toBe(200);
  });

  it.each([
    ["qop missing", (v: string) => v.replace(", qop=auth", "")],
    ["qop=auth-int", (v: string) => v.replace("qop=auth", "qop=auth-int")],
    ["cnonce missing", (v: string) => v.replace(/, cnonce="[^"]*"/, "")],
    ["nc not 8 hex digits", (v: string) => v.replace(/nc=\w+/, "nc=1")],
    ["an unknown algorithm", (v: string) => v.replace("algorithm=SHA-256", "algorithm=SHA-512-256")],
    ["an unknown parameter", (v: string) => `${v}, bogus="1"`],
    ["response missing", (v: string) => v.replace(/, response="[^"]*"/, "")],
  ])("answers 401 JSON, never 500, for a Digest header with %s", async (_name, mangle) => {
    const c = (await challenge())["SHA-256"];
    const header = mangle(digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c }));
    const res = await app.http().get(PATH).set("Authorization", header);
    expect(res.status).toBe(401);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(typeof res.body.error).toBe("string");
  });

  it("gives a non-member with correct Digest credentials 403 (authentication passes, permission fails)", async () => {
    const outsider = await createUser(app); // no domain, no permissions
    const c = (await challenge())["SHA-256"];
    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...outsider, method: "GET", uri: PATH, challenge: c }));
    expect(res.status).toBe(403);
    expect(typeof res.body.error).toBe("string");
    expect(headerValues(res, "WWW-Authenticate")).toEqual([]);
    // The same credentials with a wrong password are an authentication failure, not a 403.
    const wrong = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...outsider, password: "no", method: "GET", uri: PATH, challenge: c, nc: 2 }));
    expect(wrong.status).toBe(401);
  });

  it("stores no password: only per-realm HA1 hex hashes and a scrypt hash", async () => {
    const row = await userRow(app, user.username);
    const realm = app.services.config.authRealm;
    expect(row.digestHa1Md5).toMatch(/^[0-9a-f]{32}$/);
    expect(row.digestHa1Sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(row.digestHa1Md5).toBe(h("MD5", `${user.username}:${realm}:${user.password}`));
    expect(row.digestHa1Sha256).toBe(h("SHA-256", `${user.username}:${realm}:${user.password}`));
    expect(row.passwordHash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(JSON.stringify(row)).not.toContain(user.password);
    // Nor is it stored anywhere in the raw row under another column name.
    const raw = await (await tableRows(app, "users")).filter((row) => row.username === user.username);
    expect(raw).toHaveLength(1);
    expect(JSON.stringify(raw[0])).not.toContain(user.password);
  });

  it("keeps a new password's HA1 in step, so the old password stops working for Digest", async () => {
    const newPassword = "a-new-password";
    await app.services.admin.createUser(app.root, { username: user.username, password: newPassword, domain: "demo", permissions: MEMBER });
    const c = (await challenge())["SHA-256"];
    const old = digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c, nc: 1 });
    expect((await app.http().get(PATH).set("Authorization", old)).status).toBe(401);
    const fresh = digestAuthorization({ ...user, password: newPassword, method: "GET", uri: PATH, challenge: c, nc: 2 });
    expect((await app.http().get(PATH).set("Authorization", fresh)).status).toBe(200);
  });
});

describe("Digest nonce expiry", () => {
  beforeEach(() => setUp({ digestNonceTtlSeconds: 1 }));

  it("answers an expired nonce with right credentials 401 whose Digest challenges carry stale=true", async () => {
    const c = (await challenge())["SHA-256"];
    await sleep(1150);

    // Wrong credentials on an expired nonce: no stale (the client must re-prompt).
    const wrong = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...user, password: "wrong", method: "GET", uri: PATH, challenge: c }));
    expect(wrong.status).toBe(401);
    expect(digestChallenges(wrong)["SHA-256"].stale).toBeUndefined();

    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: c }));
    expect(res.status).toBe(401);
    expect(typeof res.body.error).toBe("string");
    const challenges = headerValues(res, "WWW-Authenticate");
    const digests = challenges.filter((v) => v.startsWith("Digest "));
    expect(digests).toHaveLength(2);
    for (const d of digests) expect(d).toMatch(/, stale=true$/);
    for (const other of challenges.filter((v) => !v.startsWith("Digest "))) expect(other).not.toMatch(/stale/);

    // The client retries with the new nonce, without re-prompting: it works.
    const renewed = digestChallenges(res)["SHA-256"];
    expect(renewed.nonce).not.toBe(c.nonce);
    const retry = await app
      .http()
      .get(PATH)
      .set("Authorization", digestAuthorization({ ...user, method: "GET", uri: PATH, challenge: renewed }));
    expect(retry.status).toBe(200);
  });
});
