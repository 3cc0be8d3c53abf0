import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { basic, build, createDomain, createUser, headerValues, type TestApp, type TestUser } from "../helpers/app.ts";
import { countOAuthTokens, oauthTokenOf, tableRows } from "../helpers/rows.ts";

/**
 * CONTRACT §1 Authentication: OAuth 2.0 (RFC 6749) — the token endpoint `POST /oauth/token`
 * (password, refresh_token and client_credentials grants, scope access_apis) and Bearer tokens.
 */

const PATH = "/a/demo/api/location_type/v1/";
const TOKEN = "/oauth/token";
const MEMBER = ["access_api", "view_locations"];

interface Client {
  id: string;
  secret: string;
}

let app: TestApp;
let user: TestUser;
let client: Client;

async function setUp(overrides: Parameters<typeof build>[0] = {}) {
  app = await build(overrides);
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: MEMBER });
  client = await newClient({ name: "mobile app" });
}

async function newClient(input: { name: string; grants?: string[]; username?: string }): Promise<Client> {
  const { client, clientSecret } = await app.services.admin.createOAuthClient(app.root, input);
  return { id: client.clientId, secret: clientSecret };
}

/** A form-encoded token request, the client authenticated with HTTP Basic (RFC 6749 §2.3.1). */
function tokenRequest(form: Record<string, string>, as: Client | null = client) {
  const req = app.http().post(TOKEN).type("form");
  if (as) req.set("Authorization", basic(as.id, as.secret));
  return req.send(form);
}

const passwordGrant = (overrides: Record<string, string> = {}, as: Client | null = client) =>
  tokenRequest({ grant_type: "password", username: user.username, password: user.password, ...overrides }, as);

const bearerGet = (token: string) => app.http().get(PATH).set("Authorization", `Bearer ${token}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** RFC 6749 §5.2: a JSON error body with a registered code, never cached. */
function expectOAuthError(res: { status: number; body: Record<string, unknown>; headers: Record<string, string> }, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.body.error).toBe(error);
  expect(typeof res.body.error_description).toBe("string");
  expect(res.body.access_token).toBeUndefined();
}

afterEach(() => app?.close());

describe("OAuth token endpoint", () => {
  beforeEach(() => setUp());

  it("password grant (client by HTTP Basic) returns 200 with a Bearer token pair and scope access_apis", async () => {
    const res = await passwordGrant();
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.headers.pragma).toBe("no-cache");
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: "Bearer",
      expires_in: expect.any(Number),
      refresh_token: expect.any(String),
      scope: "access_apis",
    });
    // The configured lifetime (3600 s), not the library's floored 3599.
    expect(res.body.expires_in).toBe(app.services.config.accessTokenTtlSeconds);
    expect(res.body.access_token.length).toBeGreaterThanOrEqual(32);
    expect(res.body.refresh_token).not.toBe(res.body.access_token);
  });

  it("accepts an explicitly requested scope access_apis", async () => {
    const res = await passwordGrant({ scope: "access_apis" });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe("access_apis");
  });

  it("accepts client credentials in the form body as well as by Basic", async () => {
    const res = await passwordGrant({ client_id: client.id, client_secret: client.secret }, null);
    expect(res.status).toBe(200);
    expect((await bearerGet(res.body.access_token)).status).toBe(200);
  });

  it("the access token works as Authorization: Bearer on a protected path (scheme name in any case)", async () => {
    const { access_token } = (await passwordGrant()).body;
    expect((await bearerGet(access_token)).status).toBe(200);
    const lower = await app.http().get(PATH).set("Authorization", `bearer ${access_token}`);
    expect(lower.status).toBe(200);
  });

  it("refuses a wrong or unknown bearer token with 401 and a Bearer challenge", async () => {
    const { access_token } = (await passwordGrant()).body;
    for (const token of ["not-a-token", `${access_token}x`, access_token.slice(1)]) {
      const res = await bearerGet(token);
      expect(res.status, token).toBe(401);
      expect(typeof res.body.error).toBe("string");
      expect(headerValues(res, "WWW-Authenticate").some((v) => v.startsWith("Bearer "))).toBe(true);
    }
  });

  it("does not accept a refresh token as an access token", async () => {
    const { refresh_token } = (await passwordGrant()).body;
    expect((await bearerGet(refresh_token)).status).toBe(401);
  });

  it("a wrong user password → 400 invalid_grant", async () => {
    expectOAuthError(await passwordGrant({ password: "wrong" }), 400, "invalid_grant");
    expectOAuthError(await passwordGrant({ username: "ghost" }), 400, "invalid_grant");
  });

  it("a deactivated user cannot get a token, and the tokens they hold stop working", async () => {
    const { access_token, refresh_token } = (await passwordGrant()).body;
    await app.services.admin.setUserActive(app.root, user.username, false);
    expectOAuthError(await passwordGrant(), 400, "invalid_grant");
    expect((await bearerGet(access_token)).status).toBe(401);
    expectOAuthError(await tokenRequest({ grant_type: "refresh_token", refresh_token }), 400, "invalid_grant");
  });

  it("a wrong client secret → 401 invalid_client with a WWW-Authenticate challenge", async () => {
    const res = await passwordGrant({}, { id: client.id, secret: "wrong" });
    expectOAuthError(res, 401, "invalid_client");
    expect(res.headers["www-authenticate"]).toMatch(/^Basic /);
    expectOAuthError(await passwordGrant({}, { id: "no-such-client", secret: client.secret }), 401, "invalid_client");
  });

  it("a wrong client secret in the body → 400 invalid_client (RFC 6749 §5.2: 401 only for header auth)", async () => {
    const res = await passwordGrant({ client_id: client.id, client_secret: "wrong" }, null);
    expectOAuthError(res, 400, "invalid_client");
  });

  it("no client credentials at all → 400", async () => {
    const res = await passwordGrant({}, null);
    expect(res.status).toBe(400);
    expect(typeof res.body.error).toBe("string");
  });

  it("an unsupported grant → 400 unsupported_grant_type", async () => {
    for (const grant_type of ["implicit", "urn:example:custom"]) {
      expectOAuthError(await tokenRequest({ grant_type }), 400, "unsupported_grant_type");
    }
  });

  it("a grant the client is not registered for → 400 unauthorized_client", async () => {
    // authorization_code is a grant RFC 6749 defines, but no client here may use it.
    expectOAuthError(await tokenRequest({ grant_type: "authorization_code", code: "x", redirect_uri: "https://x" }), 400, "unauthorized_client");
    // The default client (password, refresh_token) may not use client_credentials.
    expectOAuthError(await tokenRequest({ grant_type: "client_credentials" }), 400, "unauthorized_client");
  });

  it("a missing grant_type → 400 invalid_request", async () => {
    expectOAuthError(await tokenRequest({ username: user.username, password: user.password }), 400, "invalid_request");
  });

  it("a requested scope other than access_apis → 400 invalid_scope", async () => {
    for (const scope of ["admin", "access_apis admin", "read write"]) {
      expectOAuthError(await passwordGrant({ scope }), 400, "invalid_scope");
    }
  });

  it("a body that is not form-encoded → 400 invalid_request, never 500", async () => {
    const res = await app
      .http()
      .post(TOKEN)
      .set("Authorization", basic(client.id, client.secret))
      .set("Content-Type", "application/json")
      .send(JSON.stringify({ grant_type: "password", username: user.username, password: user.password }));
    expectOAuthError(res, 400, "invalid_request");
  });

  it("F9: a repeated form key answers 400 invalid_request, never 500, and issues nothing", async () => {
    const { body: issued } = await passwordGrant();
    const valid: Record<string, string> = {
      grant_type: "password",
      client_id: client.id,
      client_secret: client.secret,
      username: user.username,
      password: user.password,
      scope: "access_apis",
      refresh_token: issued.refresh_token,
    };
    const tokensBefore = await countOAuthTokens(app);
    for (const repeated of Object.keys(valid)) {
      const form = new URLSearchParams(valid);
      form.append(repeated, repeated === "client_id" ? "another-client" : "another-value");
      const res = await app.http().post(TOKEN).type("form").send(form.toString());
      expect(res.status, repeated).toBe(400);
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.text, repeated).toBe(
        `{"error":"invalid_request","error_description":"Invalid parameter: \`${repeated}\` must be given once, as a string"}`,
      );
    }
    // the review's reproduction, without any valid client
    const bare = await app.http().post(TOKEN).type("form").send("grant_type=client_credentials&client_id=x&client_id=y&client_secret=z");
    expect(bare.status).toBe(400);
    expect(bare.body).toEqual({ error: "invalid_request", error_description: "Invalid parameter: `client_id` must be given once, as a string" });
    expect(await countOAuthTokens(app)).toBe(tokensBefore);
  });

  it("F9: a non-string parameter handed to the service is refused before the model sees it", async () => {
    const call = (body: unknown) =>
      app.services.oauth.token({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, query: {}, body });
    for (const value of [["a", "b"], { nested: "x" }, 7, null, true]) {
      expect(await call({ grant_type: "password", username: value, password: "x" })).toEqual({
        status: 400,
        headers: { "Cache-Control": "no-store" },
        body: { error: "invalid_request", error_description: "Invalid parameter: `username` must be given once, as a string" },
      });
    }
    expect((await call(["grant_type=password"])).body).toEqual({ error: "invalid_request", error_description: "Invalid request: malformed body" });
  });

  it("refresh_token grant issues a new pair and rotates: the old refresh token and the old access token stop working", async () => {
    const first = (await passwordGrant()).body;
    const res = await tokenRequest({ grant_type: "refresh_token", refresh_token: first.refresh_token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: "Bearer",
      expires_in: expect.any(Number),
      refresh_token: expect.any(String),
      scope: "access_apis",
    });
    expect(res.body.access_token).not.toBe(first.access_token);
    expect(res.body.refresh_token).not.toBe(first.refresh_token);

    // Rotation: the old refresh token is spent.
    expectOAuthError(await tokenRequest({ grant_type: "refresh_token", refresh_token: first.refresh_token }), 400, "invalid_grant");
    // The old access token is revoked with it (one row holds the pair; a refresh revokes the row).
    expect((await bearerGet(first.access_token)).status).toBe(401);
    // The new pair works, and the new refresh token can be used in turn.
    expect((await bearerGet(res.body.access_token)).status).toBe(200);
    const third = await tokenRequest({ grant_type: "refresh_token", refresh_token: res.body.refresh_token });
    expect(third.status).toBe(200);
    expect((await bearerGet(third.body.access_token)).status).toBe(200);
  });

  it("refresh_token grant refuses a token issued to another client, and leaves it usable by its own", async () => {
    const { refresh_token } = (await passwordGrant()).body;
    const other = await newClient({ name: "other" });
    expectOAuthError(await tokenRequest({ grant_type: "refresh_token", refresh_token }, other), 400, "invalid_grant");
    expect((await tokenRequest({ grant_type: "refresh_token", refresh_token })).status).toBe(200);
  });

  it("refresh_token grant refuses an unknown refresh token or a wider scope", async () => {
    expectOAuthError(await tokenRequest({ grant_type: "refresh_token", refresh_token: "nope" }), 400, "invalid_grant");
    const { refresh_token } = (await passwordGrant()).body;
    expectOAuthError(await tokenRequest({ grant_type: "refresh_token", refresh_token, scope: "admin" }), 400, "invalid_scope");
    expectOAuthError(await tokenRequest({ grant_type: "refresh_token" }), 400, "invalid_request");
  });

  it("a refresh token can be redeemed only once, even by concurrent requests", async () => {
    const { refresh_token } = (await passwordGrant()).body;
    const results = await Promise.all([1, 2, 3].map(() => tokenRequest({ grant_type: "refresh_token", refresh_token })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });

  it("client_credentials grant for a client with a username works and its token acts as that user", async () => {
    const service = await newClient({ name: "service", grants: ["client_credentials"], username: user.username });
    const res = await tokenRequest({ grant_type: "client_credentials" }, service);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe("Bearer");
    expect(res.body.scope).toBe("access_apis");
    expect(typeof res.body.expires_in).toBe("number");
    // RFC 6749 §4.4.3: no refresh token for client credentials.
    expect(res.body.refresh_token).toBeUndefined();
    expect((await bearerGet(res.body.access_token)).status).toBe(200);
    const row = await oauthTokenOf(app, service.id);
    expect(row.user.username).toBe(user.username);

    // The same grant for a client acting as a non-member authenticates, then fails the permission check.
    const outsider = await createUser(app);
    const outsiderClient = await newClient({ name: "outsider", grants: ["client_credentials"], username: outsider.username });
    const token = (await tokenRequest({ grant_type: "client_credentials" }, outsiderClient)).body.access_token;
    expect((await bearerGet(token)).status).toBe(403);

    // A client_credentials client may not use the password grant.
    expectOAuthError(await passwordGrant({}, service), 400, "unauthorized_client");
    expectOAuthError(await tokenRequest({ grant_type: "client_credentials", scope: "admin" }, service), 400, "invalid_scope");
  });

  it("revokeOAuthTokens makes a user's access and refresh tokens stop working at once", async () => {
    const one = (await passwordGrant()).body;
    const two = (await passwordGrant()).body;
    const other = await createUser(app, { domain: "demo", permissions: MEMBER });
    const theirs = (await passwordGrant({ username: other.username, password: other.password })).body;

    const count = await app.services.admin.revokeOAuthTokens(app.root, user.username);
    expect(count).toBe(2);
    for (const pair of [one, two]) {
      expect((await bearerGet(pair.access_token)).status).toBe(401);
      expectOAuthError(await tokenRequest({ grant_type: "refresh_token", refresh_token: pair.refresh_token }), 400, "invalid_grant");
    }
    // Another user's tokens are untouched, and the user can log in again.
    expect((await bearerGet(theirs.access_token)).status).toBe(200);
    const again = (await passwordGrant()).body;
    expect((await bearerGet(again.access_token)).status).toBe(200);
  });

  it("stores tokens and client secrets only as hashes", async () => {
    const pair = (await passwordGrant()).body;
    const refreshed = (await tokenRequest({ grant_type: "refresh_token", refresh_token: pair.refresh_token })).body;
    const tokens = await tableRows(app, "oauth_tokens");
    expect(tokens).toHaveLength(2);
    const dump = JSON.stringify(tokens);
    for (const secret of [pair.access_token, pair.refresh_token, refreshed.access_token, refreshed.refresh_token]) {
      expect(dump).not.toContain(secret);
    }
    for (const row of tokens) {
      expect(row.access_token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.refresh_token_hash).toMatch(/^[0-9a-f]{64}$/);
    }
    const clients = await tableRows(app, "oauth_clients");
    expect(JSON.stringify(clients)).not.toContain(client.secret);
  });

  it("a GET to /oauth/token → 405 with Allow: POST and a JSON body", async () => {
    const res = await app.http().get(TOKEN);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("POST");
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(typeof res.body.error).toBe("string");
    const put = await app.http().put(TOKEN).type("form").send({ grant_type: "password" });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe("POST");
  });
});

describe("OAuth access token expiry", () => {
  beforeEach(() => setUp({ accessTokenTtlSeconds: 1 }));

  it("refuses an expired access token (401), while its refresh token still gets a new one", async () => {
    const res = await passwordGrant();
    expect(res.status).toBe(200);
    // expires_in is present even for a 1 s lifetime (the library would have floored it to 0 and dropped it).
    expect(res.body.expires_in).toBe(1);
    expect((await bearerGet(res.body.access_token)).status).toBe(200);
    await sleep(1150);
    const expired = await bearerGet(res.body.access_token);
    expect(expired.status).toBe(401);
    expect(typeof expired.body.error).toBe("string");
    const refreshed = await tokenRequest({ grant_type: "refresh_token", refresh_token: res.body.refresh_token });
    expect(refreshed.status).toBe(200);
    expect((await bearerGet(refreshed.body.access_token)).status).toBe(200);
  });
});

describe("OAuth token endpoint body parsing", () => {
  beforeEach(() => setUp({ bodyLimitBytes: 1024 }));

  it("answers an oversize form on /oauth/token with 413 JSON", async () => {
    const res = await passwordGrant({ padding: "x".repeat(4000) });
    expect(res.status).toBe(413);
    expect(typeof res.body.error).toBe("string");
  });

  it("parses forms for /oauth/token only: other paths neither read nor refuse them before their own checks", async () => {
    const form = `a=${"x".repeat(4000)}`;
    // An unauthenticated API request is refused for its credentials (401), not for its body (413).
    const api = await app.http().post(PATH).type("form").send(form);
    expect(api.status).toBe(401);
    // An unknown path is a 404, whatever its body.
    const unknown = await app.http().post("/nowhere").type("form").send(form);
    expect(unknown.status).toBe(404);
  });
});
