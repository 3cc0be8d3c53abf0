import { importJWK, SignJWT, type JWTPayload } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { OidcTokens } from "../../src/auth/oidc.ts";
import type { OidcConfig } from "../../src/config.ts";
import { basic, build, createDomain, createUser, headerValues, type TestApp } from "../helpers/app.ts";
import { freePort } from "../helpers/process.ts";
import { connectWs, pause, type WsTestClient } from "../helpers/ws.ts";
import { newSigningKey, startIdentityProvider, type IdentityProvider, type SigningKey } from "./identity-provider.ts";

/**
 * CONTRACT §1 Authentication, Bearer: with OIDC_ISSUER, an access token (JWT) of that OpenID
 * Connect provider admits the user it names, on REST, GraphQL over HTTP and WebSocket alike; a
 * token that is expired, for another audience or issuer, unsigned, or signed with a key the
 * provider does not publish is a 401 whose Bearer challenge says why (RFC 6750 §3); the
 * provider out of reach is a 503, never a 401 or a 500. Tokens come from a real provider on
 * loopback (oidc-provider, test/auth/identity-provider.ts), crafted ones are signed with jose.
 */

const AUDIENCE = "https://gateway.example.test/api";
const PATH = "/a/demo/api/location_type/v1/";
const ME = "{ me { username } }";
/** the provider's login whose tokens name `alice` in preferred_username (its sub is this login) */
const ALICE_LOGIN = "alice-sub";

let idp: IdentityProvider;
let app: TestApp;
const sockets: WsTestClient[] = [];

function oidcSettings(issuer: string, overrides: Partial<OidcConfig> = {}): OidcConfig {
  return {
    issuer,
    audience: AUDIENCE,
    usernameClaims: ["preferred_username", "sub"],
    clientId: undefined,
    scope: "openid profile",
    jwksCooldownSeconds: 1,
    allowSuperusers: false,
    ...overrides,
  };
}

beforeAll(async () => {
  idp = await startIdentityProvider({ audience: AUDIENCE, preferredUsernames: { [ALICE_LOGIN]: "alice" } });
  app = await build({ oidc: oidcSettings(idp.issuer) });
  await createDomain(app, "demo");
  for (const username of ["alice", "bob", "carol"]) {
    await createUser(app, { username, password: `${username}-pw`, domain: "demo", permissions: ["access_api", "view_locations", "view_data"] });
  }
  await createUser(app, { username: "root", superuser: true });
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) await socket.dispose();
});
afterAll(async () => {
  await app?.close();
  await idp?.close();
});

const bearer = (token: string) => `Bearer ${token}`;

async function graphql(authorization: string, query = ME) {
  return app.http().post("/graphql").set("Authorization", authorization).send({ query });
}

async function socket(authorization: string): Promise<WsTestClient> {
  const ws = await connectWs(app, authorization);
  sockets.push(ws);
  return ws;
}

/**
 * A token signed with `key` (by default the provider's own signing key), valid as the provider
 * would make it unless `claims` say otherwise (a claim set to undefined is left out).
 */
async function craft(claims: JWTPayload, options: { key?: SigningKey; withoutKid?: boolean } = {}): Promise<string> {
  const key = options.key ?? idp.signingKey();
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = { iss: idp.issuer, aud: AUDIENCE, sub: ALICE_LOGIN, preferred_username: "alice", iat: now, exp: now + 300, ...claims };
  for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
  const header = options.withoutKid ? { alg: "RS256", typ: "at+jwt" } : { alg: "RS256", kid: key.kid, typ: "at+jwt" };
  return new SignJWT(payload).setProtectedHeader(header).sign(await importJWK(key.jwk, "RS256"));
}

const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** The Bearer challenge a refusal carries, and the other three challenges exactly as for any other 401. */
function expectTokenRefused(res: { status: number; body: unknown }, description: string): void {
  expect(res.status).toBe(401);
  const challenges = headerValues(res, "WWW-Authenticate");
  expect(challenges).toHaveLength(4);
  expect(challenges[0]).toMatch(/^Basic realm="field-data", charset="UTF-8"$/);
  expect(challenges[1]).toMatch(/^Digest .*algorithm=SHA-256/);
  expect(challenges[2]).toMatch(/^Digest .*algorithm=MD5/);
  expect(challenges[3]).toBe(`Bearer realm="field-data", scope="access_apis", error="invalid_token", error_description="${description}"`);
}

describe("§1 Bearer with OIDC_ISSUER: the provider's access tokens admit their users", () => {
  it("REST: a token from the provider's authorization code flow reads as its user (preferred_username)", async () => {
    const { accessToken } = await idp.tokenFor(ALICE_LOGIN);
    expect(accessToken.split(".")).toHaveLength(3);
    const res = await app.http().get(PATH).set("Authorization", bearer(accessToken));
    expect(res.status).toBe(200);
  });

  it("GraphQL over HTTP: `me` is the user the token names", async () => {
    const { accessToken } = await idp.tokenFor(ALICE_LOGIN);
    const res = await graphql(bearer(accessToken));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { me: { username: "alice" } } });
  });

  it("WebSocket: connection_init's Authorization admits the socket, as its user", async () => {
    const { accessToken } = await idp.tokenFor(ALICE_LOGIN);
    const ws = await socket(bearer(accessToken));
    expect(await ws.run(ME)).toEqual({ data: { me: { username: "alice" } } });
  });

  it("a token without preferred_username names its user by sub", async () => {
    const { accessToken } = await idp.tokenFor("bob");
    expect((await graphql(bearer(accessToken))).body).toEqual({ data: { me: { username: "bob" } } });
  });

  it("memberships and permissions stay ours: the token's user sees only its own domains", async () => {
    await createDomain(app, "elsewhere");
    const { accessToken } = await idp.tokenFor(ALICE_LOGIN);
    const res = await app.http().get("/a/elsewhere/api/location_type/v1/").set("Authorization", bearer(accessToken));
    expect(res.status).toBe(403);
  });

  it("the identity cache does not outlive the token: a cached caller's token is refused once it expires", async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await craft({ exp });
    expect((await app.http().get(PATH).set("Authorization", bearer(token))).status).toBe(200);
    await pause(exp * 1000 - Date.now() + 100);
    expectTokenRefused(await app.http().get(PATH).set("Authorization", bearer(token)), "The access token has expired.");
  });
});

describe("§1 Bearer with OIDC_ISSUER: refused tokens are 401 invalid_token with a description (RFC 6750 §3)", () => {
  const now = () => Math.floor(Date.now() / 1000);
  const cases: [string, () => Promise<string>, string][] = [
    ["an expired token", () => craft({ exp: now() - 60 }), "The access token has expired."],
    [
      "a token for another audience",
      () => craft({ aud: "https://other.example.test/api" }),
      "The access token is not meant for this service (audience).",
    ],
    [
      "a token of another issuer",
      () => craft({ iss: "https://impostor.example.test" }),
      "The access token was not issued by the configured identity provider.",
    ],
    [
      "an unsigned token (alg: none)",
      async () => `${encode({ alg: "none", typ: "JWT" })}.${encode({ iss: idp.issuer, aud: AUDIENCE, sub: ALICE_LOGIN, exp: now() + 300 })}.`,
      "The access token's signing algorithm is not accepted.",
    ],
    [
      "a token signed with a shared secret (alg: HS256)",
      async () =>
        new SignJWT({ preferred_username: "alice" })
          .setProtectedHeader({ alg: "HS256" })
          .setIssuer(idp.issuer)
          .setAudience(AUDIENCE)
          .setExpirationTime("5m")
          .sign(new TextEncoder().encode("a secret anyone could guess, 32+ bytes long")),
      "The access token's signing algorithm is not accepted.",
    ],
    [
      "a token signed with a key the provider does not publish",
      async () => craft({}, { key: await newSigningKey() }),
      "The access token is signed with a key the identity provider does not publish.",
    ],
    [
      "a token whose claims were changed after signing",
      async () => {
        const [header, , signature] = (await craft({})).split(".");
        return `${header}.${encode({ iss: idp.issuer, aud: AUDIENCE, sub: "bob", exp: now() + 300 })}.${signature}`;
      },
      "The access token's signature does not verify.",
    ],
    ["a token without an expiry", () => craft({ exp: undefined }), "The access token has no expiry (exp)."],
    ["a token not valid yet (nbf)", () => craft({ nbf: now() + 600 }), "The access token is not valid yet."],
    [
      "a token of a user not known here",
      async () => (await idp.tokenFor("mallory")).accessToken,
      "The access token names a user who is not known here or is inactive.",
    ],
    [
      "a token a client got for itself (client credentials: sub is the client_id)",
      () => craft({ preferred_username: undefined, sub: "reporting-job", client_id: "reporting-job" }),
      "The access token was issued to a client for itself, not to a user.",
    ],
    [
      "a token naming a superuser (OIDC_ALLOW_SUPERUSERS off)",
      () => craft({ preferred_username: "root" }),
      "The access token names a superuser; superusers do not sign in through the identity provider.",
    ],
    [
      "a token naming no user",
      () => craft({ preferred_username: undefined, sub: undefined }),
      "The access token names no user (no preferred_username or sub claim).",
    ],
  ];

  it.each(cases)("REST: %s", async (_name, token, description) => {
    const res = await app
      .http()
      .get(PATH)
      .set("Authorization", bearer(await token()));
    expectTokenRefused(res, description);
    expect(res.body).toEqual({ error: description });
  });

  it.each(cases)("GraphQL over HTTP: %s", async (_name, token, description) => {
    const res = await graphql(bearer(await token()));
    expectTokenRefused(res, description);
    expect(res.body).toEqual({ errors: [{ message: description, extensions: { code: "UNAUTHENTICATED" } }] });
  });

  it.each(cases)("WebSocket: %s closes the socket 4403", async (_name, token) => {
    await expect(connectWs(app, bearer(await token()))).rejects.toThrow("closed 4403");
  });

  it("an inactive user's token is refused, and the user's open socket closes 4403", async () => {
    await createUser(app, { username: "dave", domain: "demo", permissions: ["access_api", "view_data"] });
    const { accessToken } = await idp.tokenFor("dave");
    const ws = await socket(bearer(accessToken));
    await app.services.admin.setUserActive(app.root, "dave", false);
    expect(await ws.closed()).toBe(4403);
    expectTokenRefused(
      await app.http().get(PATH).set("Authorization", bearer(accessToken)),
      "The access token names a user who is not known here or is inactive.",
    );
  });
});

describe("§1 the existing Bearer tokens and 401s stay as they were", () => {
  it("an opaque value still goes to our own token endpoint's tokens: the same 401 as without OIDC", async () => {
    const res = await app.http().get(PATH).set("Authorization", "Bearer 0123456789abcdef");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "Invalid or expired token." });
    expect(headerValues(res, "WWW-Authenticate")[3]).toBe('Bearer realm="field-data", scope="access_apis"');
  });

  it("a token of our own /oauth/token still admits its user", async () => {
    const { client, clientSecret } = await app.services.admin.createOAuthClient(app.root, { name: "legacy" });
    const token = await app
      .http()
      .post("/oauth/token")
      .type("form")
      .set("Authorization", basic(client.clientId, clientSecret))
      .send({ grant_type: "password", username: "carol", password: "carol-pw" });
    expect(token.status).toBe(200);
    expect((await graphql(bearer(token.body.access_token))).body).toEqual({ data: { me: { username: "carol" } } });
  });

  it("no credentials: the three challenges without an error (RFC 6750 §3.1: none for a request without a token)", async () => {
    const res = await app.http().get(PATH);
    expect(res.status).toBe(401);
    expect(headerValues(res, "WWW-Authenticate")[3]).toBe('Bearer realm="field-data", scope="access_apis"');
  });
});

describe("§1 Bearer with OIDC_ISSUER: the token's lifetime and the provider's keys", () => {
  it("a socket opened with an OIDC token is closed 4403 when the token expires (its exp)", async () => {
    idp.setAccessTokenTtl(2);
    try {
      const { accessToken, expiresIn } = await idp.tokenFor(ALICE_LOGIN);
      expect(expiresIn).toBeLessThanOrEqual(2);
      const opened = Date.now();
      const ws = await socket(bearer(accessToken));
      ws.subscribe('subscription { caseChanged(domain: "demo") { caseId } }');
      expect(await ws.run(ME)).toEqual({ data: { me: { username: "alice" } } });
      expect(await ws.closed(4000)).toBe(4403);
      expect(Date.now() - opened).toBeLessThan(3500);
      expectTokenRefused(await app.http().get(PATH).set("Authorization", bearer(accessToken)), "The access token has expired.");
    } finally {
      idp.setAccessTokenTtl(300);
    }
  });

  it("key rotation: a token signed with the provider's new key is accepted once its keys are fetched again; the old key's tokens still are", async () => {
    const before = (await idp.tokenFor(ALICE_LOGIN)).accessToken;
    expect((await app.http().get(PATH).set("Authorization", bearer(before))).status).toBe(200);
    const next = await idp.rotateKeys({ keep: true });
    const after = (await idp.tokenFor(ALICE_LOGIN)).accessToken;
    expect(JSON.parse(Buffer.from(after.split(".")[0], "base64url").toString()).kid).toBe(next.kid);
    // the keys were fetched lately: the next fetch comes at most OIDC_JWKS_COOLDOWN_SECONDS (1 s here) after it
    await pause(1100);
    expect((await app.http().get(PATH).set("Authorization", bearer(after))).status).toBe(200);
    expect((await app.http().get(PATH).set("Authorization", bearer(before))).status).toBe(200);
  });

  it("a token without a kid, while the provider publishes several keys, is checked against each of them", async () => {
    const old = idp.signingKey();
    await idp.rotateKeys({ keep: true });
    await pause(1100);
    // a token naming a key fetches the keys again (after the 1 s cooldown): both are known from here on
    expect(
      (
        await app
          .http()
          .get(PATH)
          .set("Authorization", bearer((await idp.tokenFor(ALICE_LOGIN)).accessToken))
      ).status,
    ).toBe(200);
    for (const key of [old, idp.signingKey()]) {
      const res = await app
        .http()
        .get(PATH)
        .set("Authorization", bearer(await craft({ jti: key.kid }, { key, withoutKid: true })));
      expect([key.kid, res.status]).toEqual([key.kid, 200]);
    }
    const stranger = await craft({}, { key: await newSigningKey(), withoutKid: true });
    expectTokenRefused(await app.http().get(PATH).set("Authorization", bearer(stranger)), "The access token's signature does not verify.");
  });

  it("the provider away: tokens keep being checked with the keys fetched before", async () => {
    const { accessToken } = await idp.tokenFor(ALICE_LOGIN);
    expect((await graphql(bearer(accessToken))).status).toBe(200);
    // a token not seen before, so that no cached caller answers for it
    const unseen = (await idp.tokenFor("bob")).accessToken;
    await idp.pause();
    try {
      expect((await graphql(bearer(unseen))).body).toEqual({ data: { me: { username: "bob" } } });
      // past the cooldown, a token naming an unknown key makes the keys be fetched again
      await pause(1100);
      // a key it cannot fetch: the provider is needed, and it is away (503, not a refusal of the token)
      const res = await app
        .http()
        .get(PATH)
        .set("Authorization", bearer(await craft({}, { key: await newSigningKey() })));
      expect(res.status).toBe(503);
    } finally {
      await idp.resume();
    }
  });
});

describe("§1 an identity provider that cannot be reached", () => {
  let offline: TestApp;
  let issuer: string;
  beforeAll(async () => {
    issuer = `http://127.0.0.1:${await freePort()}`;
    offline = await build({ oidc: oidcSettings(issuer, { clientId: "dashboard" }) });
    await createDomain(offline, "demo");
    await createUser(offline, { username: "alice", domain: "demo", permissions: ["access_api", "view_locations"] });
  });
  afterAll(() => offline?.close());

  async function unreachableToken(): Promise<string> {
    const key = await newSigningKey();
    return new SignJWT({ preferred_username: "alice" })
      .setProtectedHeader({ alg: "RS256", kid: key.kid })
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setExpirationTime("5m")
      .sign(await importJWK(key.jwk, "RS256"));
  }

  it("a JWT bearer is answered 503 with Retry-After (REST), never 401 or 500", async () => {
    const res = await offline
      .http()
      .get(PATH)
      .set("Authorization", bearer(await unreachableToken()));
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("5");
    // why it is out of reach (a refused connection, a host not found) is the operator's to read, in the log
    expect(res.body).toEqual({
      error: "The service is temporarily unavailable: the identity provider (OIDC_ISSUER) cannot be reached to check the token. Retry later.",
    });
  });

  it("GraphQL over HTTP: 503 SERVICE_UNAVAILABLE; WebSocket: closed 1013 (try again later)", async () => {
    const token = await unreachableToken();
    const res = await offline.http().post("/graphql").set("Authorization", bearer(token)).send({ query: ME });
    expect(res.status).toBe(503);
    expect(res.body.errors[0].extensions.code).toBe("SERVICE_UNAVAILABLE");
    await expect(connectWs(offline, bearer(token))).rejects.toThrow("closed 1013");
  });

  it("/readyz stays ready, and the other schemes keep working", async () => {
    const ready = await offline.http().get("/readyz");
    expect(ready.status).toBe(200);
    expect(Object.keys(ready.body.checks)).not.toContain("oidc");
    const key = await createUser(offline, { domain: "demo", permissions: ["access_api", "view_locations"] });
    expect((await offline.http().get(PATH).set("Authorization", key.authorization)).status).toBe(200);
  });

  it("the dashboard still loads, and its config.json says the provider's sign-in is not available (503)", async () => {
    const page = await offline.http().get("/dashboard/");
    expect(page.status).toBe(200);
    expect(page.headers["content-security-policy"]).toContain("connect-src 'self';");
    const config = await offline.http().get("/dashboard/config.json");
    expect(config.status).toBe(503);
    expect(config.body).toEqual({ error: expect.stringContaining("the identity provider (OIDC_ISSUER) cannot be reached") });
  });
});

describe("OIDC_USERNAME_CLAIM", () => {
  it("names the one claim that names the user", async () => {
    const tokens = new OidcTokens(oidcSettings(idp.issuer, { usernameClaims: ["sub"] }));
    const { accessToken } = await idp.tokenFor(ALICE_LOGIN);
    expect(await tokens.check(accessToken)).toMatchObject({ ok: true, username: ALICE_LOGIN });
    const other = new OidcTokens(oidcSettings(idp.issuer, { usernameClaims: ["email"] }));
    expect(await other.check(accessToken)).toEqual({ ok: false, description: "The access token names no user (no email claim)." });
  });
});

describe("OIDC_ALLOW_SUPERUSERS", () => {
  it("on: a token naming a superuser admits them", async () => {
    const allowing = await build({ oidc: oidcSettings(idp.issuer, { allowSuperusers: true }) });
    try {
      await createUser(allowing, { username: "root", superuser: true });
      const res = await allowing
        .http()
        .post("/graphql")
        .set("Authorization", bearer(await craft({ preferred_username: "root" })))
        .send({ query: ME });
      expect(res.body).toEqual({ data: { me: { username: "root" } } });
    } finally {
      await allowing.close();
    }
  });
});
