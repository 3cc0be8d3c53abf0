import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/**
 * CONTRACT §1 Error bodies, the generic part: JSON 404s for unknown paths, 405 + Allow for a wrong
 * method on a known path, 413 for a body over the limit, 400 for invalid JSON, never a 500 and never
 * an HTML page.
 */

const LIMIT = 2048;
let app: TestApp;
/** may use every family in demo */
let user: TestUser;

beforeEach(async () => {
  app = await build({ bodyLimitBytes: LIMIT });
  await createDomain(app, "demo");
  user = await createUser(app, {
    domain: "demo",
    permissions: ["access_api", "view_data", "edit_data", "view_locations", "edit_locations", "edit_apps"],
  });
});
afterEach(() => app.close());

type Res = { status: number; headers: Record<string, string>; text?: string; body: unknown };

/** JSON, never HTML, never a 5xx. */
function expectJson(res: Res, label = "") {
  expect(res.status, label).toBeLessThan(500);
  expect(res.headers["content-type"], label).toMatch(/^application\/json/);
  expect(res.text ?? "", label).not.toMatch(/^\s*</);
  expect(res.text ?? "", label).not.toMatch(/<html|<!DOCTYPE|<pre>/i);
}

function expectPlainError(res: Res, status: number, label = "") {
  expectJson(res, label);
  expect(res.status, label).toBe(status);
  expect(Object.keys(res.body as object), label).toEqual(["error"]);
  expect((res.body as { error: unknown }).error, label).toEqual(expect.any(String));
}

describe("unknown paths outside any family", () => {
  it("GET on any unknown path is a 404 {error} naming the path, without credentials", async () => {
    for (const path of [
      "/nope",
      "/a",
      "/a/demo",
      "/a/demo/",
      "/a/demo/api",
      "/a/demo/api/",
      "/a/demo/api/unknown/v1/",
      "/a/demo/api/case/v1/",
      "/a/demo/api/case/v3/",
      "/a/demo/api/location/v1/",
      "/a/demo/apps/",
      "/a/demo/apps/apix/",
      "/api/case/v2/",
      "/oauth",
      "/oauth/tokens",
      "/graphqlx",
    ]) {
      const res = await app.http().get(path);
      expectPlainError(res, 404, path);
      expect((res.body as { error: string }).error, path).toBe(`Not found: ${path}`);
    }
  });

  it("is the same 404 with valid credentials", async () => {
    const res = await app.http().get("/a/demo/api/unknown/v1/").set("Authorization", user.authorization);
    expectPlainError(res, 404);
    expect(res.body.error).toBe("Not found: /a/demo/api/unknown/v1/");
  });

  it("POST, PUT, PATCH and DELETE to an unknown path are 404 {error}", async () => {
    for (const method of ["post", "put", "patch", "delete"] as const) {
      const res = await app.http()[method]("/nope/deeper").send({ a: 1 });
      expectPlainError(res, 404, method);
      expect(res.body.error, method).toBe("Not found: /nope/deeper");
    }
  });

  it("leaves the query string out of the message", async () => {
    const res = await app.http().get("/nope?secret=1&x=2");
    expectPlainError(res, 404);
    expect(res.body.error).toBe("Not found: /nope");
  });

  it("answers HEAD with a 404 and a JSON content type", async () => {
    const res = await app.http().head("/nope");
    expect(res.status).toBe(404);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
  });
});

describe("unknown paths inside a family", () => {
  it("an authorised GET of an unknown path in the case and location families is a 404 {error} naming the path", async () => {
    for (const path of [
      "/a/demo/api/case/v2/ext/",
      "/a/demo/api/case/v2/some/thing/else",
      "/a/demo/api/location/v2/x/y/z",
      "/a/demo/api/location_type/v1/extra",
      "/a/demo/api/location_type/v1/extra/deeper/",
    ]) {
      const res = await app.http().get(path).set("Authorization", user.authorization);
      expectPlainError(res, 404, path);
      expect(res.body.error, path).toBe(`Not found: ${path}`);
    }
  });

  it("is a 404 {success: false, error} in the apps family", async () => {
    const path = "/a/demo/apps/api/no/such/endpoint/";
    const res = await app.http().post(path).set("Authorization", user.authorization).send({});
    expectJson(res);
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["success", "error"]);
    expect(res.body).toEqual({ success: false, error: `Not found: ${path}` });
  });

  it("leaves the query string out of the message", async () => {
    const res = await app.http().get("/a/demo/api/case/v2/x/y?limit=5").set("Authorization", user.authorization);
    expectPlainError(res, 404);
    expect(res.body.error).toBe("Not found: /a/demo/api/case/v2/x/y");
  });

  it("asks for credentials first: 401 JSON, not 404, without them", async () => {
    for (const path of ["/a/demo/api/case/v2/no/such", "/a/demo/api/location_type/v1/extra"]) {
      const res = await app.http().get(path);
      expectPlainError(res, 401, path);
      expect(res.headers["www-authenticate"]).toBeDefined();
    }
  });
});

describe("wrong method on a known path", () => {
  const LOCATION_TYPES = "/a/demo/api/location_type/v1/";

  it("POST, PUT, PATCH and DELETE on the location type list are 405 with Allow: GET, HEAD and a JSON {error}", async () => {
    for (const method of ["post", "put", "patch", "delete"] as const) {
      const res = await app.http()[method](LOCATION_TYPES).set("Authorization", user.authorization).send({});
      expectPlainError(res, 405, method);
      expect(res.headers.allow, method).toBe("GET, HEAD");
      expect(res.body.error, method).toContain(method.toUpperCase());
    }
  });

  it("DELETE without the trailing slash is the same 405", async () => {
    const res = await app.http().delete("/a/demo/api/location_type/v1").set("Authorization", user.authorization);
    expectPlainError(res, 405);
    expect(res.headers.allow).toBe("GET, HEAD");
  });

  it("still serves GET and HEAD there", async () => {
    const get = await app.http().get(LOCATION_TYPES).set("Authorization", user.authorization);
    expect(get.status).toBe(200);
    expect(get.headers["content-type"]).toMatch(/^application\/json/);
    const head = await app.http().head(LOCATION_TYPES).set("Authorization", user.authorization);
    expect(head.status).toBe(200);
  });

  it("asks for credentials before answering 405", async () => {
    const res = await app.http().delete(LOCATION_TYPES);
    expectPlainError(res, 401);
  });

  it("GET, PUT, PATCH and DELETE /oauth/token are 405 with Allow: POST and a JSON {error}", async () => {
    for (const method of ["get", "put", "patch", "delete"] as const) {
      const res = await app.http()[method]("/oauth/token");
      expectPlainError(res, 405, method);
      expect(res.headers.allow, method).toBe("POST");
      expect(res.body.error, method).toContain(method.toUpperCase());
    }
  });

  it("GET /oauth/token/ (trailing slash) is the same 405", async () => {
    const res = await app.http().get("/oauth/token/");
    expectPlainError(res, 405);
    expect(res.headers.allow).toBe("POST");
  });

  it("the Case API answers an unserved method on each of its paths with 405, Allow and {error}", async () => {
    for (const [method, path, allow] of [
      ["delete", "/a/demo/api/case/v2/", ["GET", "HEAD", "POST", "PUT"]],
      ["patch", "/a/demo/api/case/v2/", ["GET", "HEAD", "POST", "PUT"]],
      ["get", "/a/demo/api/case/v2/bulk-fetch/", ["POST"]],
      ["put", "/a/demo/api/case/v2/bulk-fetch/", ["POST"]],
      ["delete", "/a/demo/api/case/v2/0f6b8f5e-3c1a-4d2e-9b7a-1c2d3e4f5a6b", ["GET", "HEAD", "PUT"]],
      ["post", "/a/demo/api/case/v2/0f6b8f5e-3c1a-4d2e-9b7a-1c2d3e4f5a6b", ["GET", "HEAD", "PUT"]],
      ["delete", "/a/demo/api/case/v2/ext/some-id/", ["GET", "HEAD", "PUT"]],
    ] as const) {
      const res = await app.http()[method](path).set("Authorization", user.authorization).send({});
      const at = `${method} ${path}`;
      expectPlainError(res, 405, at);
      expect(String(res.headers.allow).split(/,\s*/).sort(), at).toEqual([...allow].sort());
      expect(res.body.error, at).toContain(method.toUpperCase());
    }
  });

  // CONTRACT §1: a known path answers a method it does not serve with 405 + Allow; only an unknown
  // path is a 404. route() (src/rest/middleware.ts) passes OPTIONS on with next(), expecting an
  // automatic OPTIONS answer, but the JSON 404 fallback after it answers "Not found: <path>".
  it("OPTIONS on a known path is not answered as an unknown path", async () => {
    for (const [path, allow, auth] of [
      [LOCATION_TYPES, "GET", user.authorization],
      ["/a/demo/api/case/v2/", "POST", user.authorization],
      ["/oauth/token", "POST", undefined],
    ] as const) {
      const req = app.http().options(path);
      if (auth) req.set("Authorization", auth);
      const res = await req;
      expect(res.status, path).not.toBe(404);
      expect([200, 204, 405], path).toContain(res.status);
      expect(res.headers.allow ?? "", path).toContain(allow);
    }
  });
});

describe("body over the size limit", () => {
  const form = (bytes: number) => {
    const prefix = "grant_type=password&username=u&password=p&pad=";
    return prefix + "a".repeat(bytes - prefix.length);
  };

  it("POST /oauth/token with a form body over the limit is a 413 {error}", async () => {
    const res = await app
      .http()
      .post("/oauth/token")
      .type("form")
      .send(form(LIMIT * 2));
    expectPlainError(res, 413);
  });

  it("POST /oauth/token one byte over the limit is a 413, at the limit it is read", async () => {
    const over = await app
      .http()
      .post("/oauth/token")
      .type("form")
      .send(form(LIMIT + 1));
    expectPlainError(over, 413);
    const at = await app.http().post("/oauth/token").type("form").send(form(LIMIT));
    expectJson(at);
    expect(at.status).not.toBe(413);
    expect(at.status).toBe(400); // no client credentials: the OAuth error, after the body was read
  });

  it("an over-limit GraphQL JSON body is a 413 JSON", async () => {
    const res = await app
      .http()
      .post("/graphql")
      .set("Authorization", user.authorization)
      .set("Content-Type", "application/json")
      .send(JSON.stringify({ query: "{ __typename }", variables: { pad: "a".repeat(LIMIT * 2) } }));
    expectJson(res);
    expect(res.status).toBe(413);
  });

  it("an under-limit GraphQL JSON body is served", async () => {
    const res = await app
      .http()
      .post("/graphql")
      .set("Authorization", user.authorization)
      .set("Content-Type", "application/json")
      .send(JSON.stringify({ query: "{ __typename }" }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { __typename: "Query" } });
  });
});

describe("errors of the apps family keep its shape {success: false, error}", () => {
  it("for an authorised request to an unknown apps path (404)", async () => {
    const res = await app.http().get("/a/demo/apps/api/nothing").set("Authorization", user.authorization);
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["success", "error"]);
  });

  // CONTRACT §1/§4: the Import App API's errors are {"success": false, "error"}. A malformed
  // percent-escape in {domain} fails while Express matches the family's mount path (src/server.ts,
  // app.use("/a/:domain/apps/api", router)), i.e. before the request is inside the family's router,
  // so the app-wide "plain" error handler answers instead of the apps family's.
  it("for a malformed percent-escape in the domain segment", async () => {
    const res = await app.http().get("/a/%ZZ/apps/api/import_app/").set("Authorization", user.authorization);
    expect(res.status).toBeLessThan(500);
    expect(Object.keys(res.body)).toEqual(["success", "error"]);
  });
});

describe("REST bodies that are not valid JSON, or too large", () => {
  const CASES = "/a/demo/api/case/v2/";
  const JSON_PATHS = [
    ["post", CASES],
    ["put", CASES],
    ["put", `${CASES}0f6b8f5e-3c1a-4d2e-9b7a-1c2d3e4f5a6b`],
    ["put", `${CASES}ext/e-1/`],
    ["post", `${CASES}bulk-fetch/`],
  ] as const;

  it("is a 400 {error: 'Payload must be valid JSON'} on every JSON endpoint of the Case API", async () => {
    for (const [method, path] of JSON_PATHS) {
      for (const body of ["{", "not json", '{"case_name": }', "{'a': 1}", "[1,", "   "]) {
        const res = await app.http()[method](path).set("Authorization", user.authorization).set("Content-Type", "application/json").send(body);
        const at = `${method} ${path} ${JSON.stringify(body)}`;
        expectPlainError(res, 400, at);
        expect(res.body, at).toEqual({ error: "Payload must be valid JSON" });
      }
    }
  });

  it("is the same 400 without a JSON Content-Type (the body is read as JSON whatever its type)", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const res = await app.http().post(CASES).set("Authorization", user.authorization).set("Content-Type", type).send("{");
      expectPlainError(res, 400, type);
      expect(res.body, type).toEqual({ error: "Payload must be valid JSON" });
    }
  });

  // CONTRACT §1: "A body that is not valid JSON where JSON is expected: 400 Payload must be valid
  // JSON". An empty body is not valid JSON (express.json() would have turned it into {}, and the
  // create would then fail validation instead); a POST with no body at all is the same request
  // (clients, supertest too, send Content-Length: 0).
  it("is a 400 'Payload must be valid JSON' when no body is sent at all", async () => {
    const res = await app.http().post(CASES).set("Authorization", user.authorization);
    expectPlainError(res, 400);
    expect(res.body).toEqual({ error: "Payload must be valid JSON" });
  });

  it("is a 400 'Payload must be valid JSON' for an empty body with a JSON Content-Type, on every JSON endpoint", async () => {
    for (const [method, path] of JSON_PATHS) {
      const res = await app.http()[method](path).set("Authorization", user.authorization).set("Content-Type", "application/json").send("");
      const at = `${method} ${path}`;
      expectPlainError(res, 400, at);
      expect(res.body, at).toEqual({ error: "Payload must be valid JSON" });
    }
  });

  it("a JSON body over the limit is a 413 {error} on the Case API, and nothing is saved", async () => {
    for (const [method, path] of JSON_PATHS) {
      const res = await app
        .http()
        [method](path)
        .set("Authorization", user.authorization)
        .set("Content-Type", "application/json")
        .send(JSON.stringify({ case_type: "t", case_name: "n", owner_id: "o", properties: { pad: "a".repeat(LIMIT * 2) } }));
      expectPlainError(res, 413, `${method} ${path}`);
    }
    expect(await app.db.prisma.case.count()).toBe(0);
  });

  it("a JSON body just under the limit is read", async () => {
    const body = { case_type: "t", case_name: "n", owner_id: "o", properties: { pad: "" } };
    body.properties.pad = "a".repeat(LIMIT - JSON.stringify(body).length);
    expect(Buffer.byteLength(JSON.stringify(body))).toBe(LIMIT);
    const res = await app
      .http()
      .post(CASES)
      .set("Authorization", user.authorization)
      .set("Content-Type", "application/json")
      .send(JSON.stringify(body));
    expect(res.status).toBe(200);
  });
});

describe("GraphQL with a body that is not valid JSON", () => {
  const post = (body: string, authorization?: string) => {
    const req = app.http().post("/graphql").set("Content-Type", "application/json");
    if (authorization) req.set("Authorization", authorization);
    return req.send(body);
  };

  it("is a 400 JSON 'Payload must be valid JSON', never 500", async () => {
    for (const [name, body] of [
      ["a truncated object", "{"],
      ["plain text", "not json"],
      ["a missing value", '{"query": }'],
      ["a trailing comma", '{"query": "{ __typename }",}'],
      ["single quotes", "{'query': '{ __typename }'}"],
      ["a bare string", '"{ __typename }"'],
      ["a bare number", "42"],
      ["a bare null", "null"],
      ["a NUL byte", "{\u0000}"],
      ["non-ASCII garbage", "{\u00ff\u00fe}"],
    ]) {
      const res = await post(body, user.authorization);
      expectJson(res, name);
      expect(res.status, name).toBe(400);
      expect(res.text, name).toContain("Payload must be valid JSON");
    }
  });

  it("a JSON body that is not a GraphQL request is a 400 JSON, never 500", async () => {
    for (const [name, body] of [
      ["an empty body", ""],
      ["an empty object", "{}"],
      ["an array (batching is off)", "[]"],
      ["a query that is not a string", '{"query": 5}'],
      ["variables that are not an object", '{"query": "{ __typename }", "variables": 5}'],
      ["a query that does not parse", '{"query": "{"}'],
    ]) {
      const res = await post(body, user.authorization);
      expectJson(res, name);
      expect(res.status, name).toBe(400);
    }
  });

  it("asks for credentials before reading the body: 401 JSON", async () => {
    const res = await post("{");
    expectJson(res);
    expect(res.status).toBe(401);
  });

  it("a text/plain POST is refused (CSRF prevention) with a 400 JSON, never 500", async () => {
    const res = await app.http().post("/graphql").set("Authorization", user.authorization).set("Content-Type", "text/plain").send("{");
    expectJson(res);
    expect(res.status).toBe(400);
  });
});

describe("no response is ever HTML or a 500", () => {
  it("for odd paths and methods, with and without credentials", async () => {
    for (const [method, path] of [
      ["GET", "/a/%E0%A4%A/api/case/v2/"],
      ["GET", "/a/%ZZ/api/location/v2/"],
      ["GET", "/a/demo/api/case/v2/%ZZ"],
      ["GET", "/a/demo/api/case/v2/ext/%E0%A4%A/"],
      ["GET", "/a/demo/api/case/v2/%00"],
      ["GET", "/%ZZ"],
      ["GET", "/..%2f..%2fetc%2fpasswd"],
      ["GET", "//a//demo//api//case//v2//"],
      ["GET", "/a/demo/api/location_type/v1/?limit=%ZZ&a[b][c]=1"],
      ["GET", `/a/${"x".repeat(300)}/api/case/v2/`],
      ["GET", "/a/d%C3%A9mo/api/case/v2/"],
      ["DELETE", "/a/demo/api/location_type/v1/"],
      ["OPTIONS", "/a/demo/api/case/v2/"],
      ["OPTIONS", "/graphql"],
      ["PATCH", "/graphql"],
    ] as const) {
      for (const auth of [undefined, user.authorization]) {
        const req = app.http()[method.toLowerCase() as "get"](path);
        if (auth) req.set("Authorization", auth);
        expectJson(await req, `${method} ${path} ${auth ? "authenticated" : "anonymous"}`);
      }
    }
  });

  it("for an unsupported charset or content encoding, on every kind of path", async () => {
    for (const method of ["get", "post", "put", "patch", "delete", "options"] as const) {
      for (const path of ["/nope", "/oauth/token", "/a/demo/api/case/v2/", "/a/demo/apps/api/import_app/", "/graphql"]) {
        const charset = await app
          .http()
          [method](path)
          .set("Authorization", user.authorization)
          .set("Content-Type", "application/x-www-form-urlencoded; charset=ebcdic")
          .send("a=1");
        expectJson(charset, `${method} ${path} charset`);
        const encoding = await app
          .http()
          [method](path)
          .set("Authorization", user.authorization)
          .set("Content-Type", "application/json")
          .set("Content-Encoding", "zzz")
          .send("{}");
        expectJson(encoding, `${method} ${path} encoding`);
      }
    }
  });

  it("a malformed percent-escape in the domain segment is a 400 JSON {error}", async () => {
    const res = await app.http().get("/a/%ZZ/api/case/v2/").set("Authorization", user.authorization);
    expectPlainError(res, 400);
  });

  it("a gzip Content-Encoding whose body is not gzip is a 4xx JSON", async () => {
    const res = await app
      .http()
      .post("/oauth/token")
      .set("Content-Type", "application/x-www-form-urlencoded")
      .set("Content-Encoding", "gzip")
      .send("grant_type=password");
    expectJson(res);
    expect(res.status).toBeGreaterThanOrEqual(400);
  });

  it("an invalid JSON or form body to a REST family is a 4xx JSON (never 500)", async () => {
    for (const path of ["/a/demo/api/case/v2/", "/a/demo/api/location/v2/", "/a/demo/apps/api/import_app/"]) {
      for (const type of ["application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
        const res = await app.http().post(path).set("Authorization", user.authorization).set("Content-Type", type).send("{%");
        expectJson(res, `${path} ${type}`);
        expect(res.status, `${path} ${type}`).toBeGreaterThanOrEqual(400);
      }
    }
  });
});
