import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { loadConfig } from "../../src/config.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, createApp, png, zip } from "../helpers/archives.ts";
import { countApps, countDomains, countJobs, countLocations } from "../helpers/rows.ts";

/**
 * Issue #7 part 3: every size and shape limit, each with a test. This file holds the ones no other
 * file proves; the others live beside their feature:
 * - request body size (413): test/rest/errors.test.ts (Case API, OAuth form, GraphQL JSON)
 * - REST upload size: test/apps/import.test.ts "size limits" (app_file, multimedia archive)
 * - ZIP entry size, total expansion and ratio: test/multimedia/processing.test.ts "zip-bomb limits"
 * - page sizes: test/cases/paging.test.ts (limit > 5000), test/locations/list.test.ts (capped at
 *   5000), test/cases/graphql.test.ts (first > 5000), test/cases/bulk-fetch.test.ts (> 5000 ids)
 * - GraphQL depth and cost: test/graphql/limits.test.ts
 */

const BODY_LIMIT = 64 * 1024;
const UPLOAD_LIMIT = 4096;
const WS_LIMIT = 8192;
const ALL = ["access_api", "view_data", "edit_data", "view_locations", "edit_locations", "edit_apps"];

let app: TestApp;
let user: TestUser;
beforeAll(async () => {
  app = await build({
    bodyLimitBytes: BODY_LIMIT,
    uploadLimitBytes: UPLOAD_LIMIT,
    graphqlUploadMaxFiles: 2,
    wsMaxPayloadBytes: WS_LIMIT,
    workers: 0,
  });
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: ALL });
  await (await app.services.locationTypes.in(app.root, "demo", "admin")).create({ code: "country", name: "Country" });
});
afterAll(() => app?.close());

const gql = (query: string, variables?: Record<string, unknown>) =>
  app.http().post("/graphql").set("Authorization", user.authorization).set("Content-Type", "application/json").send({ query, variables });

/** A GraphQL multipart request (graphql-multipart-request-spec) with one file per `files` entry. */
function multipart(query: string, variables: Record<string, unknown>, files: Record<string, Buffer>, map: Record<string, string[]>) {
  let req = app
    .http()
    .post("/graphql")
    .set("Authorization", user.authorization)
    .set("apollo-require-preflight", "true")
    .field("operations", JSON.stringify({ query, variables }))
    .field("map", JSON.stringify(map));
  for (const [name, data] of Object.entries(files)) req = req.attach(name, data, `${name}.bin`);
  return req;
}

describe("request body size on the Location API (413 {error}, nothing saved)", () => {
  it("a create and a bulk PATCH over BODY_LIMIT_BYTES are 413; just under is read", async () => {
    const pad = "x".repeat(BODY_LIMIT);
    for (const [method, body] of [
      ["post", { name: "Big", location_type_code: "country", location_data: { pad } }],
      ["patch", { objects: [{ name: "Big", location_type_code: "country", location_data: { pad } }] }],
    ] as const) {
      const res = await app.http()[method]("/a/demo/api/location/v2/").set("Authorization", user.authorization).send(body);
      expect(res.status, method).toBe(413);
      expect(Object.keys(res.body), method).toEqual(["error"]);
    }
    expect(await countLocations(app)).toBe(0);
    const fits = await app
      .http()
      .post("/a/demo/api/location/v2/")
      .set("Authorization", user.authorization)
      .send({ name: "Fits", location_type_code: "country", location_data: { pad: "x".repeat(BODY_LIMIT - 200) } });
    expect(fits.status).toBe(201);
  });
});

describe("GraphQL upload size (UPLOAD_LIMIT_BYTES, GRAPHQL_UPLOAD_MAX_FILES)", () => {
  const IMPORT = 'mutation($domain: String!, $file: Upload!) { importApp(domain: $domain, file: $file, appName: "Big") { appId } }';
  const UPLOAD = "mutation($domain: String!, $appId: ID!, $file: Upload!) { uploadMultimedia(domain: $domain, appId: $appId, file: $file) }";

  it("an importApp file over the limit is HTTP 413 with PAYLOAD_TOO_LARGE, and nothing is stored", async () => {
    const before = await countApps(app);
    const source = Buffer.from(JSON.stringify({ doc_type: "Application", pad: "x".repeat(UPLOAD_LIMIT) }));
    const res = await multipart(IMPORT, { domain: "demo", file: null }, { 0: source }, { 0: ["variables.file"] });
    expect(res.status).toBe(413);
    expect(res.body.data).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions.code).toBe("PAYLOAD_TOO_LARGE");
    expect(res.body.errors[0].message).toMatch(new RegExp(`${UPLOAD_LIMIT} byte`));
    expect(await countApps(app)).toBe(before);
  });

  it("an uploadMultimedia archive over the limit is 413 PAYLOAD_TOO_LARGE, no job; a small one is queued", async () => {
    const appId = await createApp(app, user.authorization, "demo", appSource());
    const big = Buffer.alloc(UPLOAD_LIMIT * 4, 1);
    const res = await multipart(UPLOAD, { domain: "demo", appId, file: null }, { 0: big }, { 0: ["variables.file"] });
    expect(res.status).toBe(413);
    expect(res.body.errors[0].extensions.code).toBe("PAYLOAD_TOO_LARGE");
    expect(await countJobs(app)).toBe(0);
    const small = await multipart(
      UPLOAD,
      { domain: "demo", appId, file: null },
      { 0: await zip([{ name: "a.png", data: png(1) }]) },
      { 0: ["variables.file"] },
    );
    expect(small.status).toBe(200);
    expect(small.body.data.uploadMultimedia).toMatch(/^dl-[0-9a-f]{32}$/);
  });

  it("more files than GRAPHQL_UPLOAD_MAX_FILES in one request is a 413 JSON error, nothing stored", async () => {
    const before = await countApps(app);
    const files = { 0: Buffer.from("{}"), 1: Buffer.from("{}"), 2: Buffer.from("{}") };
    const res = await multipart(IMPORT, { domain: "demo", file: null }, files, { 0: ["variables.file"], 1: ["variables.x"], 2: ["variables.y"] });
    expect(res.status).toBe(413);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body.errors[0].message).toMatch(/2 max file uploads exceeded/);
    expect(res.body.errors[0].extensions.code).toBe("PAYLOAD_TOO_LARGE");
    expect(await countApps(app)).toBe(before);
  });

  it("a multipart `operations` field over BODY_LIMIT_BYTES is a 413 JSON error", async () => {
    const res = await multipart(
      IMPORT,
      { domain: "demo", file: null, pad: "x".repeat(BODY_LIMIT + 10) },
      { 0: Buffer.from("{}") },
      { 0: ["variables.file"] },
    );
    expect(res.status).toBe(413);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body.errors[0].extensions.code).toBe("PAYLOAD_TOO_LARGE");
  });
});

describe("GraphQL request bodies refused before Apollo keep GraphQL's error shape", () => {
  const raw = (body: string, contentType: string) =>
    app
      .http()
      .post("/graphql")
      .set("Authorization", user.authorization)
      .set("apollo-require-preflight", "true")
      .set("Content-Type", contentType)
      .send(body);
  const part = (name: string, value: string) => `--B7\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

  it("a malformed multipart body, a broken or missing `map`, an unsupported charset: 400 BAD_REQUEST in errors[]", async () => {
    for (const [name, body, contentType] of [
      ["unexpected end of form", '[{"query":"{ me { id } }"}]', "multipart/form-data; boundary=x"],
      ["no boundary", "--x--\r\n", "multipart/form-data"],
      ["malformed part header", "--B7\r\nnot a header\r\n\r\nx\r\n--B7--\r\n", "multipart/form-data; boundary=B7"],
      ["no map", `${part("operations", '{"query":"{ me { id } }"}')}--B7--\r\n`, "multipart/form-data; boundary=B7"],
      ["map not JSON", `${part("operations", '{"query":"{ me { id } }"}')}${part("map", "{")}--B7--\r\n`, "multipart/form-data; boundary=B7"],
      ["latin1 JSON", "{}", "application/json; charset=latin1"],
    ]) {
      const res = await raw(body, contentType);
      expect(res.status, name).toBe(400);
      expect(res.headers["content-type"], name).toMatch(/^application\/json/);
      expect(Object.keys(res.body), name).toEqual(["errors"]);
      expect(res.body.errors, name).toEqual([{ message: expect.any(String), extensions: { code: "BAD_REQUEST" } }]);
    }
  });
});

describe("GraphQL page size: first over the maximum", () => {
  it("locations(first: 5001) and first: -1 are BAD_USER_INPUT; 5000 and 0 (an empty page, as the Relay spec allows) are served", async () => {
    const messages = { 5001: "'first' must be at most 5000.", [-1]: "'first' must not be negative." };
    for (const [first, message] of Object.entries(messages)) {
      const res = await gql('query($first: Int) { locations(domain: "demo", first: $first) { totalCount } }', { first: Number(first) });
      expect([first, res.body.errors?.[0]?.extensions?.code, res.body.errors?.[0]?.message]).toEqual([first, "BAD_USER_INPUT", message]);
    }
    for (const first of [5000, 0]) {
      const ok = await gql('query($first: Int) { locations(domain: "demo", first: $first) { nodes { name } } }', { first });
      expect(ok.body.errors, String(first)).toBeUndefined();
    }
  });

  it("cases(first: 5001) is BAD_USER_INPUT with the REST message", async () => {
    const res = await gql('{ cases(domain: "demo", first: 5001) { totalCount } }');
    expect(res.body.errors[0]).toMatchObject({
      message: "You cannot request more than 5000 cases per request.",
      extensions: { code: "BAD_USER_INPUT" },
    });
  });
});

describe("GraphQL aliases (GRAPHQL_MAX_ALIASES, default 100)", () => {
  const aliases = (n: number, field = "me { username }") => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(" ")} }`;

  it("a query with 1,000 aliases of one field is refused before it runs: 400 GRAPHQL_VALIDATION_FAILED", async () => {
    const res = await gql(aliases(1000));
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({
      message: "Query has too many aliases: the limit is 100.",
      extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
    });
  });

  it("aliases in fragments count too; 100 aliases are served", async () => {
    const fragments = `fragment F on Query { ${Array.from({ length: 60 }, (_, i) => `f${i}: __typename`).join(" ")} } { ...F ${Array.from({ length: 41 }, (_, i) => `q${i}: __typename`).join(" ")} }`;
    expect((await gql(fragments)).status).toBe(400);
    const at = await gql(aliases(100));
    expect(at.status).toBe(200);
    expect(Object.keys(at.body.data)).toHaveLength(100);
  });

  it("the limit is configurable", async () => {
    const small = await build({ graphqlMaxAliases: 2, workers: 0 });
    try {
      const su = await createUser(small, { superuser: true });
      const post = (query: string) => small.http().post("/graphql").set("Authorization", su.authorization).send({ query });
      expect((await post("{ a: __typename b: __typename }")).status).toBe(200);
      const res = await post("{ a: __typename b: __typename c: __typename }");
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toBe("Query has too many aliases: the limit is 2.");
    } finally {
      await small.close();
    }
  });
});

describe("GraphQL batching is off: an array of operations is refused", () => {
  it("a batch is a 400 JSON 'Operation batching disabled.' and none of its operations runs", async () => {
    const su = await createUser(app, { superuser: true });
    const batch = [
      { query: 'mutation { createDomain(name: "batched-one") { id } }' },
      { query: 'mutation { createDomain(name: "batched-two") { id } }' },
    ];
    const res = await app
      .http()
      .post("/graphql")
      .set("Authorization", su.authorization)
      .set("Content-Type", "application/json")
      .send(JSON.stringify(batch));
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toMatch(/json/);
    expect(res.body.errors[0]).toMatchObject({ message: "Operation batching disabled.", extensions: { code: "BAD_REQUEST" } });
    expect(await countDomains(app, "batched-")).toBe(0);
  });
});

describe("WebSocket message size (WS_MAX_PAYLOAD_BYTES)", () => {
  let url: string;
  beforeAll(async () => {
    url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
  });

  /** A raw graphql-transport-ws connection, acknowledged. */
  async function connect() {
    const socket = new WebSocket(url, "graphql-transport-ws");
    const messages: Record<string, unknown>[] = [];
    const waiters: (() => void)[] = [];
    socket.on("message", (data) => {
      messages.push(JSON.parse(String(data)));
      for (const w of waiters.splice(0)) w();
    });
    const closed = new Promise<{ code: number }>((resolve) => socket.on("close", (code) => resolve({ code })));
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    const next = async (type: string) => {
      for (;;) {
        const found = messages.find((m) => m.type === type);
        if (found) {
          messages.splice(messages.indexOf(found), 1);
          return found;
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: user.authorization } }));
    await next("connection_ack");
    return { socket, next, closed };
  }

  it("a message over the limit closes that connection with 1009; the server and other connections carry on", async () => {
    const bystander = await connect();
    const victim = await connect();
    const padding = "#".repeat(WS_LIMIT);
    victim.socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: `{ me { username } }\n${padding}` } }));
    expect((await victim.closed).code).toBe(1009);

    // the other connection is untouched, a new one is accepted, and HTTP still answers
    bystander.socket.send(JSON.stringify({ id: "2", type: "subscribe", payload: { query: "{ me { username } }" } }));
    expect(await bystander.next("next")).toMatchObject({ id: "2", payload: { data: { me: { username: user.username } } } });
    const fresh = await connect();
    fresh.socket.send(JSON.stringify({ id: "3", type: "subscribe", payload: { query: `{ me { username } }\n${"#".repeat(WS_LIMIT - 200)}` } }));
    expect(await fresh.next("next")).toMatchObject({ id: "3", payload: { data: { me: { username: user.username } } } });
    expect((await gql("{ me { username } }")).status).toBe(200);
    bystander.socket.close();
    fresh.socket.close();
  });

  it("over WebSocket, the alias limit and the depth limit are validation errors with their code; a document nested past 500 levels a parse failure", async () => {
    const conn = await connect();
    conn.socket.send(
      JSON.stringify({
        id: "4",
        type: "subscribe",
        payload: { query: `{ ${Array.from({ length: 101 }, (_, i) => `a${i}: __typename`).join(" ")} }` },
      }),
    );
    const error = await conn.next("error");
    expect(error).toMatchObject({
      id: "4",
      payload: [{ message: "Query has too many aliases: the limit is 100.", extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }],
    });
    conn.socket.send(JSON.stringify({ id: "5", type: "subscribe", payload: { query: "{ me { username" } }));
    expect(await conn.next("error")).toMatchObject({ id: "5", payload: [{ extensions: { code: "GRAPHQL_PARSE_FAILED" } }] });
    // nested deeper than the parser is trusted with: the same parse failure as over HTTP, the socket open
    const deep = `{ me(a: ${"[".repeat(1_000)}${"]".repeat(1_000)}) { username } }`;
    conn.socket.send(JSON.stringify({ id: "6", type: "subscribe", payload: { query: deep } }));
    expect(await conn.next("error")).toMatchObject({
      id: "6",
      payload: [{ message: "Syntax Error: Document nested deeper than 500 levels.", extensions: { code: "GRAPHQL_PARSE_FAILED" } }],
    });
    conn.socket.send(JSON.stringify({ id: "7", type: "subscribe", payload: { query: "{ me { username } }" } }));
    expect(await conn.next("next")).toMatchObject({ id: "7", payload: { data: { me: { username: user.username } } } });
    conn.socket.close();
  });
});

describe("configuration: every limit has a default and is read from the environment", () => {
  it("defaults", () => {
    expect(loadConfig({})).toMatchObject({
      bodyLimitBytes: 10 * 1024 * 1024,
      uploadLimitBytes: 1024 * 1024 * 1024,
      appSourceLimitBytes: 64 * 1024 * 1024,
      zipMaxEntryBytes: 512 * 1024 * 1024,
      zipMaxTotalBytes: 8 * 1024 * 1024 * 1024,
      zipMaxRatio: 100,
      zipRatioFloorBytes: 16 * 1024 * 1024,
      graphqlMaxDepth: 12,
      graphqlMaxCost: 250_000,
      graphqlMaxAliases: 100,
      graphqlUploadMaxFiles: 10,
      wsMaxPayloadBytes: 1024 * 1024,
      rateLimitRequests: 1200,
      rateLimitWindowSeconds: 60,
    });
  });

  it("set and validated", () => {
    const config = loadConfig({ GRAPHQL_MAX_ALIASES: "7", GRAPHQL_UPLOAD_MAX_FILES: "3", WS_MAX_PAYLOAD_BYTES: "65536" });
    expect(config).toMatchObject({ graphqlMaxAliases: 7, graphqlUploadMaxFiles: 3, wsMaxPayloadBytes: 65536 });
    expect(() => loadConfig({ WS_MAX_PAYLOAD_BYTES: "10" })).toThrow(/WS_MAX_PAYLOAD_BYTES/);
    expect(() => loadConfig({ GRAPHQL_UPLOAD_MAX_FILES: "0" })).toThrow(/GRAPHQL_UPLOAD_MAX_FILES/);
    expect(() => loadConfig({ GRAPHQL_MAX_ALIASES: "many" })).toThrow(/GRAPHQL_MAX_ALIASES/);
    expect(loadConfig({ ZIP_RATIO_FLOOR_BYTES: "0" }).zipRatioFloorBytes).toBe(0);
    expect(() => loadConfig({ ZIP_RATIO_FLOOR_BYTES: "16M" })).toThrow(/ZIP_RATIO_FLOOR_BYTES/);
  });
});
