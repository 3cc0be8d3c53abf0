import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { log } from "../../src/log.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { captureLog } from "../helpers/log.ts";

/**
 * CONTRACT §7.2: every HTTP response carries X-Request-Id (the client's when well-formed), and each
 * request is logged once as a JSON line with its id, method, route pattern, status, duration and
 * username, never with a credential.
 */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const requestLines = (lines: string[]) => lines.map((line) => JSON.parse(line)).filter((entry) => entry.message === "request completed");

async function demo(): Promise<{ app: TestApp; user: TestUser }> {
  app = await build();
  await createDomain(app, "demo");
  const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"], password: "user-pass-Secret1" });
  return { app, user };
}

describe("§7.2 X-Request-Id", () => {
  it("§7.2: a well-formed incoming X-Request-Id is sent back as is", async () => {
    const { app } = await demo();
    const res = await app.http().get("/livez").set("X-Request-Id", "abc.DEF_1:2-3");
    expect(res.headers["x-request-id"]).toBe("abc.DEF_1:2-3");
  });

  it.each([["has space"], ["<script>"], ["x".repeat(129)], [""]])(
    "§7.2: a malformed X-Request-Id (%j) is replaced by a generated one",
    async (sent) => {
      const { app } = await demo();
      const res = await app.http().get("/livez").set("X-Request-Id", sent);
      expect(res.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
      expect(res.headers["x-request-id"]).not.toBe(sent);
    },
  );

  it("§7.2: every response has one, errors too (401, 404, 405)", async () => {
    const { app } = await demo();
    for (const res of [
      await app.http().get("/a/demo/api/case/v2/"),
      await app.http().get("/nowhere"),
      await app.http().delete("/livez"),
      await app.http().post("/graphql").send({ query: "{ __typename }" }),
    ]) {
      expect(res.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    }
  });
});

describe("§7.2 one JSON line per request", () => {
  it("§7.2: the line names request id, method, route pattern, status, duration and the username", async () => {
    const { app, user } = await demo();
    const lines = await captureLog(async () => {
      await app.http().get("/a/demo/api/case/v2/some-case-id").set("Authorization", user.authorization).set("X-Request-Id", "req-42");
    });
    const [line] = requestLines(lines);
    expect(line).toMatchObject({
      level: "info",
      requestId: "req-42",
      req: { method: "GET" },
      route: "/a/:domain/api/case/v2/:caseId",
      res: { statusCode: 404 },
      username: user.username,
    });
    expect(typeof line.durationMs).toBe("number");
    expect(requestLines(lines)).toHaveLength(1);
  });

  it("§7.2: an unauthenticated request is logged without a username, under its family's pattern", async () => {
    const { app } = await demo();
    const lines = await captureLog(async () => {
      await app.http().get("/a/demo/api/location/v2/");
    });
    const [line] = requestLines(lines);
    expect(line).toMatchObject({ route: "/a/:domain/api/location/v2/*", res: { statusCode: 401 } });
    expect(line).not.toHaveProperty("username");
  });
});

describe("§7.2 never a credential in the log", () => {
  it("§7.2: ApiKey, Basic, Digest, Bearer and OAuth form secrets (password, client_secret, refresh_token) appear nowhere in the output", async () => {
    const { app, user } = await demo();
    const clientSecret = "client-Secret-xyz987";
    const refreshToken = "refresh-Token-abc654";
    const bearer = "bearer-Token-qrs321";
    const basic = Buffer.from(`${user.username}:${user.password}`).toString("base64");
    const digestResponse = createHash("md5").update("digest-response").digest("hex");
    const secrets = [user.apiKey, user.password, basic, clientSecret, refreshToken, bearer, digestResponse];
    const lines = await captureLog(async () => {
      const cases = "/a/demo/api/case/v2/";
      await app.http().get(cases).set("Authorization", user.authorization);
      await app.http().get(cases).set("Authorization", `ApiKey ${user.username}:wrong-${user.apiKey}`);
      await app.http().get(cases).set("Authorization", `Basic ${basic}`);
      await app.http().get(cases).set("Authorization", `Bearer ${bearer}`);
      await app
        .http()
        .get(cases)
        .set(
          "Authorization",
          `Digest username="${user.username}", realm="field-data", nonce="n", uri="${cases}", response="${digestResponse}", qop=auth, nc=00000001, cnonce="c"`,
        );
      await app.http().get(cases).set("Cookie", `session=${bearer}`);
      await app
        .http()
        .post("/oauth/token")
        .type("form")
        .send({ grant_type: "password", username: user.username, password: user.password, client_id: "c", client_secret: clientSecret });
      await app
        .http()
        .post("/oauth/token")
        .type("form")
        .send({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: "c", client_secret: clientSecret });
      await app
        .http()
        .post("/graphql")
        .set("Authorization", `Basic ${basic}`)
        .send({ query: `mutation { createApiKey(username: "${user.username}") { key } }` });
    });
    expect(requestLines(lines).length).toBeGreaterThanOrEqual(9);
    const output = lines.join("\n");
    for (const secret of secrets) expect(output).not.toContain(secret);
  });

  it("§7.2: a line that carries the request's headers or the OAuth form anyway has every credential redacted", async () => {
    const secrets = [
      "api-Key-111",
      "basic-Pass-222",
      "bearer-Tok-333",
      "digest-Resp-444",
      "cookie-Val-555",
      "form-Pass-666",
      "client-Sec-777",
      "refresh-Tok-888",
    ];
    const [apiKey, basic, bearer, digest, cookie, password, clientSecret, refreshToken] = secrets;
    const lines = await captureLog(async () => {
      for (const authorization of [`ApiKey u:${apiKey}`, `Basic ${basic}`, `Bearer ${bearer}`, `Digest username="u", response="${digest}"`]) {
        log.info("request seen", { req: { headers: { authorization, cookie: `s=${cookie}` } } });
        log.error(`failed with Authorization: ${authorization}`);
      }
      log.info("token request", { req: { body: { grant_type: "password", password, client_secret: clientSecret, refresh_token: refreshToken } } });
      log.info("form", { form: { password, client_secret: clientSecret, refresh_token: refreshToken } });
    });
    expect(lines).toHaveLength(10);
    const output = lines.join("\n");
    for (const secret of secrets) expect(output).not.toContain(secret);
    expect(output).toContain("[redacted]");
  });
});
