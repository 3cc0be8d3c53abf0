import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { CROSS_SITE_REFUSED } from "../../src/rest/cross-site.ts";
import { basic, build, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { CASES } from "../helpers/cases.ts";

/**
 * CONTRACT §7.2 CORS: CORS_ORIGINS lists the browser origins that may call the API. Their
 * preflight is answered 204 before any authentication; their real answers, REST and GraphQL,
 * errors included, carry Access-Control-Allow-Origin. Any other origin gets no CORS header, and the
 * cross-site write refusal of F12 still holds for it.
 */

const LISTED = "https://app.example.org";
const OTHER = "https://evil.example";
const HOST = "gateway.test:8000";

let app: TestApp;
let user: TestUser;

beforeEach(async () => {
  app = await build({ workers: 0, corsOrigins: [LISTED, "http://localhost:5173"] });
  await app.services.admin.createDomain(app.root, "demo");
  user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
});
afterEach(() => app?.close());

const preflight = (path: string, origin: string, method = "POST", headers = "authorization, content-type") =>
  app
    .http()
    .options(path)
    .set("Host", HOST)
    .set("Origin", origin)
    .set("Access-Control-Request-Method", method)
    .set("Access-Control-Request-Headers", headers);

const corsHeaders = (res: { headers: Record<string, string | undefined> }) =>
  Object.keys(res.headers).filter((name) => name.startsWith("access-control-"));

describe("CONTRACT §7.2 CORS", () => {
  it.each(["/graphql", `${CASES}`, `${CASES}some-case-id`, "/oauth/token"])(
    "CONTRACT §7.2 CORS: a listed origin's preflight of %s answers 204 without credentials",
    async (path) => {
      const res = await preflight(path, LISTED, "POST", "authorization, content-type, apollo-require-preflight, x-apollo-operation-name");
      expect(res.status).toBe(204);
      expect(res.headers["access-control-allow-origin"]).toBe(LISTED);
      const allowed = res.headers["access-control-allow-headers"]!.toLowerCase().split(",");
      for (const header of ["authorization", "content-type", "apollo-require-preflight", "x-apollo-operation-name"])
        expect(allowed).toContain(header);
      expect(res.headers["access-control-allow-methods"]!.split(",")).toEqual(expect.arrayContaining(["GET", "POST", "PUT", "DELETE"]));
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
      expect(res.headers["access-control-allow-credentials"]).toBeUndefined();
      expect(res.headers["www-authenticate"]).toBeUndefined();
    },
  );

  it("CONTRACT §7.2 CORS: a listed origin gets Access-Control-Allow-Origin and Vary: Origin on REST and GraphQL answers", async () => {
    const rest = await app.http().get(CASES).set("Origin", LISTED).set("Authorization", user.authorization);
    expect(rest.status).toBe(200);
    expect(rest.headers["access-control-allow-origin"]).toBe(LISTED);
    expect(rest.headers.vary).toMatch(/\bOrigin\b/);
    const graphql = await app
      .http()
      .post("/graphql")
      .set("Origin", LISTED)
      .set("Authorization", user.authorization)
      .send({ query: "{ me { username } }" });
    expect(graphql.status).toBe(200);
    expect(graphql.body).toEqual({ data: { me: { username: user.username } } });
    expect(graphql.headers["access-control-allow-origin"]).toBe(LISTED);
    // the page may read the headers it needs to react to errors and limits
    expect(graphql.headers["access-control-expose-headers"]).toMatch(/WWW-Authenticate/);
  });

  it("CONTRACT §7.2 CORS: a listed origin's 401s, REST and GraphQL, carry Access-Control-Allow-Origin (the page can read the refusal)", async () => {
    const rest = await app.http().get(CASES).set("Origin", LISTED);
    expect(rest.status).toBe(401);
    expect(rest.headers["access-control-allow-origin"]).toBe(LISTED);
    const graphql = await app.http().post("/graphql").set("Origin", LISTED).send({ query: "{ me { username } }" });
    expect(graphql.status).toBe(401);
    expect(graphql.headers["access-control-allow-origin"]).toBe(LISTED);
  });

  it("CONTRACT §7.2 CORS: an unlisted origin gets no CORS header, on a preflight or a real request", async () => {
    const pre = await preflight("/graphql", OTHER);
    expect(pre.status).not.toBe(204);
    expect(corsHeaders(pre)).toEqual([]);
    const real = await app.http().get(CASES).set("Origin", OTHER).set("Authorization", user.authorization);
    expect(real.status).toBe(200);
    expect(corsHeaders(real)).toEqual([]);
    // a cache must still keep the answers to each origin apart
    expect(real.headers.vary).toMatch(/\bOrigin\b/);
  });

  it("CONTRACT §7.2 CORS: an origin matches exactly (scheme, host and port), not by prefix or case of the path", async () => {
    for (const origin of ["http://app.example.org", "https://app.example.org:8443", "https://app.example.org.evil.example", "null"]) {
      const res = await preflight("/graphql", origin);
      expect(corsHeaders(res), origin).toEqual([]);
    }
    expect((await preflight("/graphql", "http://localhost:5173")).status).toBe(204);
  });

  it("CONTRACT §7.2 CORS: with no CORS_ORIGINS (the default) no origin gets CORS headers, and a preflight is not answered", async () => {
    const plain = await build({ workers: 0 });
    try {
      const res = await plain.http().options("/graphql").set("Origin", LISTED).set("Access-Control-Request-Method", "POST");
      expect(corsHeaders(res)).toEqual([]);
      expect(res.headers.vary ?? "").not.toMatch(/\bOrigin\b/);
    } finally {
      await plain.close();
    }
  });

  it("CONTRACT §7.2 CORS + F12: a listed origin may write through REST from a browser; an unlisted one is still refused (403), nothing written", async () => {
    const body = { case_type: "t", case_name: "from the app", owner_id: "o" };
    const auth = basic(user.username, user.password);
    const listed = await app
      .http()
      .post(CASES)
      .set("Host", HOST)
      .set("Origin", LISTED)
      .set("Sec-Fetch-Site", "cross-site")
      .set("Authorization", auth)
      .send(body);
    expect(listed.status).toBe(200);
    expect(listed.headers["access-control-allow-origin"]).toBe(LISTED);
    const other = await app
      .http()
      .post(CASES)
      .set("Host", HOST)
      .set("Origin", OTHER)
      .set("Sec-Fetch-Site", "cross-site")
      .set("Authorization", auth)
      .send(body);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ error: CROSS_SITE_REFUSED });
    expect(corsHeaders(other)).toEqual([]);
    expect(await app.db.prisma.case.count()).toBe(1);
  });

  it("CONTRACT §7.2 CORS: a listed origin may send a GraphQL multipart or GET request with Apollo's CSRF header", async () => {
    const query = encodeURIComponent("{ me { username } }");
    const res = await app
      .http()
      .get(`/graphql?query=${query}`)
      .set("Origin", LISTED)
      .set("Authorization", user.authorization)
      .set("apollo-require-preflight", "1");
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe(LISTED);
  });

  it("CONTRACT §7.2 CORS: CORS_ORIGINS takes comma-separated origins (empty by default) and refuses anything that is no origin, naming the variable", () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: " https://App.Example.org , http://localhost:5173/,https://x.example:8443" }).corsOrigins).toEqual([
      "https://app.example.org",
      "http://localhost:5173",
      "https://x.example:8443",
    ]);
    for (const raw of ["*", "app.example.org", "https://app.example.org/path", "ftp://app.example.org", "https://u:p@app.example.org", "null"]) {
      expect(() => loadConfig({ CORS_ORIGINS: raw }), raw).toThrow(ConfigError);
      expect(() => loadConfig({ CORS_ORIGINS: raw }), raw).toThrow(/^CORS_ORIGINS /);
    }
  });
});
