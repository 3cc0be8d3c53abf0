import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { basic, build, createDomain, createUser, headerValues, type TestApp, type TestUser } from "../helpers/app.ts";
import { apiKeyRows, userRow } from "../helpers/rows.ts";

/** CONTRACT §1 Authentication: the API key and Basic schemes, and the 401 answer. */

const PATH = "/a/demo/api/location_type/v1/";
let app: TestApp;
let user: TestUser;

beforeEach(async () => {
  app = await build();
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations"] });
});
afterEach(() => app.close());

describe("401 without valid credentials", () => {
  it("answers 401 JSON with Basic, Digest and Bearer challenges when no credentials are sent", async () => {
    const res = await app.http().get(PATH);
    expect(res.status).toBe(401);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(["error"]);
    const challenges = headerValues(res, "WWW-Authenticate");
    expect(challenges).toHaveLength(4);
    expect(challenges[0]).toMatch(/^Basic realm="/);
    expect(challenges[1]).toMatch(/^Digest .*qop="auth".*algorithm=SHA-256/);
    expect(challenges[2]).toMatch(/^Digest .*qop="auth".*algorithm=MD5/);
    expect(challenges[3]).toMatch(/^Bearer realm="/);
  });

  it.each([
    ["an unknown scheme", "Token abc"],
    ["a malformed ApiKey", "ApiKey nocolon"],
    ["a malformed Basic", "Basic %%%"],
    ["an empty Bearer", "Bearer"],
    ["a garbage Digest", "Digest ,,,=="],
  ])("answers 401 JSON, never 500, for %s", async (_name, header) => {
    const res = await app.http().get(PATH).set("Authorization", header);
    expect(res.status).toBe(401);
    expect(typeof res.body.error).toBe("string");
  });
});

describe("API key", () => {
  it("accepts ApiKey username:key", async () => {
    const res = await app.http().get(PATH).set("Authorization", user.authorization);
    expect(res.status).toBe(200);
  });

  it("accepts the scheme name in any case", async () => {
    const res = await app.http().get(PATH).set("Authorization", `apikey ${user.username}:${user.apiKey}`);
    expect(res.status).toBe(200);
  });

  it("refuses a key presented under another username", async () => {
    const other = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations"] });
    const res = await app.http().get(PATH).set("Authorization", `ApiKey ${other.username}:${user.apiKey}`);
    expect(res.status).toBe(401);
  });

  it("refuses a wrong key", async () => {
    const res = await app.http().get(PATH).set("Authorization", `ApiKey ${user.username}:wrong`);
    expect(res.status).toBe(401);
  });

  it("stores the key only as a hash", async () => {
    const rows = await apiKeyRows(app);
    for (const row of rows) expect(row.keyHash).not.toContain(user.apiKey);
    expect(JSON.stringify(rows)).not.toContain(user.apiKey);
  });

  it("stops working at once when revoked", async () => {
    const [key] = await app.services.admin.listApiKeys(app.root, user.username);
    await app.services.admin.revokeApiKey(app.root, key.id);
    const res = await app.http().get(PATH).set("Authorization", user.authorization);
    expect(res.status).toBe(401);
  });

  it("stops working when the user is deactivated", async () => {
    await app.services.admin.setUserActive(app.root, user.username, false);
    const res = await app.http().get(PATH).set("Authorization", user.authorization);
    expect(res.status).toBe(401);
  });
});

describe("Basic", () => {
  it("accepts the right password", async () => {
    const res = await app.http().get(PATH).set("Authorization", basic(user.username, user.password));
    expect(res.status).toBe(200);
  });

  it("refuses a wrong password", async () => {
    const res = await app.http().get(PATH).set("Authorization", basic(user.username, "nope"));
    expect(res.status).toBe(401);
  });

  it("refuses an unknown user", async () => {
    const res = await app.http().get(PATH).set("Authorization", basic("ghost", "x"));
    expect(res.status).toBe(401);
  });

  it("stores the password only as a salted scrypt hash", async () => {
    const row = await userRow(app, user.username);
    expect(row.passwordHash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(row)).not.toContain(user.password);
  });
});
