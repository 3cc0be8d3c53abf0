import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, type Config } from "../../src/config.ts";
import { sha256, UNTRUSTED_DOCUMENT } from "../../src/graphql/trusted-documents.ts";
import { buildServer, type HttpServer } from "../../src/server.ts";
import { createServices, type Services } from "../../src/services.ts";
import { build, createUser, testConfig, type TestApp, type TestUser } from "../helpers/app.ts";
import { connectWs } from "../helpers/ws.ts";

/**
 * CONTRACT §7.3 APQ and trusted documents. Apollo's automatic persisted queries are kept in the
 * database, so a hash registered through one server is found by every other on that database
 * (here: a second server built on the first one's database; on PostgreSQL, `npm run
 * test:postgres`, that database is a server's). PERSISTED_OPERATIONS=only runs nothing but the
 * documents of PERSISTED_OPERATIONS_MANIFEST.
 */

const ME = "query Me { me { username } }";
const COUNT = "query Count { domains { name } }";

let app: TestApp;
let user: TestUser;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await app?.close();
});

/** Another server process's view: its own services and express app over the same database. */
async function secondServer(overrides: Partial<Config> = {}): Promise<{ services: Services; server: HttpServer }> {
  const services = await createServices(app.db, testConfig({ dataDir: app.services.config.dataDir, ...overrides }));
  cleanups.push(() => services.close());
  const server = await buildServer(services);
  cleanups.push(() => server.close());
  return { services, server };
}

const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

function post(server: HttpServer, body: object) {
  return request(server.app).post("/graphql").set("Authorization", user.authorization).send(body);
}

/** Apollo registers a document after it answers: wait until the database has it. */
async function registered(hash: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await app.db.prisma.persistedQuery.findUnique({ where: { hash: `apq:${hash}` } }))) {
    if (Date.now() > deadline) throw new Error(`${hash} was never registered`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("CONTRACT §7.3 automatic persisted queries (APQ)", () => {
  it("CONTRACT §7.3 APQ: a hash registered on one server is found by another server of the same database", async () => {
    app = await build({ workers: 0 });
    user = await createUser(app, { superuser: true });
    const other = await secondServer();
    const hash = sha256(ME);

    const unknown = await post(other.server, { extensions: persisted(hash) });
    expect(unknown.body.errors).toEqual([
      expect.objectContaining({ message: "PersistedQueryNotFound", extensions: expect.objectContaining({ code: "PERSISTED_QUERY_NOT_FOUND" }) }),
    ]);

    const registering = await post(app.server, { query: ME, extensions: persisted(hash) });
    expect(registering.body).toEqual({ data: { me: { username: user.username } } });
    await registered(hash);

    const found = await post(other.server, { extensions: persisted(hash) });
    expect([found.status, found.body]).toEqual([200, { data: { me: { username: user.username } } }]);
    // GET, as CDN-friendly clients send it
    const extensions = encodeURIComponent(JSON.stringify(persisted(hash)));
    const viaGet = await request(other.server.app)
      .get(`/graphql?extensions=${extensions}`)
      .set("Authorization", user.authorization)
      .set("apollo-require-preflight", "1");
    expect(viaGet.body).toEqual({ data: { me: { username: user.username } } });
  });

  it("CONTRACT §7.3 APQ: a document that does not match its hash is refused (400) and registers nothing; a malformed hash is no 500", async () => {
    app = await build({ workers: 0 });
    user = await createUser(app, { superuser: true });
    const mismatch = await post(app.server, { query: ME, extensions: persisted(sha256(COUNT)) });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors).toEqual([{ message: "provided sha does not match query", extensions: { code: "BAD_REQUEST" } }]);
    for (const sha256Hash of [42, { $gt: "" }, null, "x".repeat(10_000)]) {
      const res = await post(app.server, { extensions: { persistedQuery: { version: 1, sha256Hash } } });
      expect(res.status, JSON.stringify(sha256Hash)).toBeLessThan(500);
    }
    expect(await app.db.prisma.persistedQuery.count()).toBe(0);
  });

  it("CONTRACT §7.3 APQ: bounded: only the newest APQ_MAX_ENTRIES are kept, and an expired entry is not found", async () => {
    app = await build({ workers: 0, apqMaxEntries: 3 });
    user = await createUser(app, { superuser: true });
    const documents = [1, 2, 3, 4, 5].map((n) => `query Q${n} { me { username } }`);
    for (const document of documents) {
      await post(app.server, { query: document, extensions: persisted(sha256(document)) });
      await registered(sha256(document));
    }
    expect(await app.db.prisma.persistedQuery.count()).toBe(3);
    const newest = sha256(documents[4]);
    expect((await post(app.server, { extensions: persisted(newest) })).body.data).toEqual({ me: { username: user.username } });
    expect((await post(app.server, { extensions: persisted(sha256(documents[0])) })).body.errors[0].extensions.code).toBe(
      "PERSISTED_QUERY_NOT_FOUND",
    );

    await app.db.prisma.persistedQuery.updateMany({ data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await post(app.server, { extensions: persisted(newest) })).body.errors[0].extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
  });

  it("CONTRACT §7.3 APQ: a registration outlives its TTL by no more than APQ_TTL_SECONDS", async () => {
    app = await build({ workers: 0, apqTtlSeconds: 60 });
    user = await createUser(app, { superuser: true });
    const before = Date.now();
    await post(app.server, { query: ME, extensions: persisted(sha256(ME)) });
    await registered(sha256(ME));
    const entry = await app.db.prisma.persistedQuery.findUniqueOrThrow({ where: { hash: `apq:${sha256(ME)}` } });
    expect(entry.expiresAt.getTime() - before).toBeGreaterThanOrEqual(59_000);
    expect(entry.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
  });
});

describe("CONTRACT §7.3 trusted documents (PERSISTED_OPERATIONS=only)", () => {
  let dir: string;
  async function manifestFile(content: unknown): Promise<string> {
    dir = await mkdtemp(path.join(os.tmpdir(), "manifest-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, "manifest.json");
    await writeFile(file, JSON.stringify(content));
    return file;
  }

  const APOLLO_MANIFEST = {
    format: "apollo-persisted-query-manifest",
    version: 1,
    operations: [{ id: sha256(ME), name: "Me", type: "query", body: ME }],
  };

  it.each([
    ["Apollo's persisted-query manifest", APOLLO_MANIFEST],
    ["an id-to-document map", { "my-id-for-me": ME }],
  ])(
    "CONTRACT §7.3 trusted documents (%s): the manifest's documents run, by text or by hash; any other document is FORBIDDEN, an unknown hash PERSISTED_QUERY_NOT_FOUND",
    async (_format, manifest) => {
      const file = await manifestFile(manifest);
      app = await build({ workers: 0, persistedOperations: "only", persistedOperationsManifest: file });
      user = await createUser(app, { superuser: true });
      const ok = { data: { me: { username: user.username } } };

      expect((await post(app.server, { query: ME })).body).toEqual(ok);
      expect((await post(app.server, { extensions: persisted(sha256(ME)) })).body).toEqual(ok);
      const id = Object.keys(manifest)[0] === "my-id-for-me" ? "my-id-for-me" : sha256(ME);
      expect((await post(app.server, { extensions: persisted(id) })).body).toEqual(ok);

      const other = await post(app.server, { query: COUNT });
      expect([other.status, other.body]).toEqual([403, { errors: [{ message: UNTRUSTED_DOCUMENT, extensions: { code: "FORBIDDEN" } }] }]);
      // sending a document with its hash does not add it
      const registering = await post(app.server, { query: COUNT, extensions: persisted(sha256(COUNT)) });
      expect(registering.body.errors[0].extensions.code).toBe("FORBIDDEN");
      const unknown = await post(app.server, { extensions: persisted(sha256(COUNT)) });
      expect(unknown.body.errors[0].extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
      // a trusted document's text with one more space is another document
      expect((await post(app.server, { query: `${ME} ` })).body.errors[0].extensions.code).toBe("FORBIDDEN");
      const viaGet = await request(app.server.app)
        .get(`/graphql?query=${encodeURIComponent(COUNT)}`)
        .set("Authorization", user.authorization)
        .set("apollo-require-preflight", "1");
      expect(viaGet.status).toBe(403);
      expect(await app.db.prisma.persistedQuery.count()).toBe(0);
    },
  );

  it("CONTRACT §7.3 trusted documents: over WebSocket too, only the manifest's documents run", async () => {
    const file = await manifestFile(APOLLO_MANIFEST);
    app = await build({ workers: 0, persistedOperations: "only", persistedOperationsManifest: file });
    user = await createUser(app, { superuser: true });
    const ws = await connectWs(app, user.authorization);
    try {
      expect(await ws.run(ME)).toEqual({ data: { me: { username: user.username } } });
      expect(await ws.run(COUNT)).toEqual({ refused: [{ message: UNTRUSTED_DOCUMENT, extensions: { code: "FORBIDDEN" } }] });
    } finally {
      await ws.dispose();
    }
  });

  it("CONTRACT §7.3 trusted documents: by default (PERSISTED_OPERATIONS=all) any document runs", async () => {
    expect(loadConfig({}).persistedOperations).toBe("all");
    app = await build({ workers: 0 });
    user = await createUser(app, { superuser: true });
    expect((await post(app.server, { query: COUNT })).status).toBe(200);
  });

  it("CONTRACT §7.3 trusted documents: PERSISTED_OPERATIONS=only without a readable, valid manifest stops the server at start", async () => {
    expect(() => loadConfig({ PERSISTED_OPERATIONS: "only" })).toThrow(ConfigError);
    expect(() => loadConfig({ PERSISTED_OPERATIONS: "some" })).toThrow("PERSISTED_OPERATIONS must be all or only, got 'some'");
    app = await build({ workers: 0 });
    for (const manifest of [[ME], { format: "apollo-persisted-query-manifest", version: 2, operations: [] }, { id: 42 }, { id: "query {" }]) {
      const file = await manifestFile(manifest);
      await expect(secondServer({ persistedOperations: "only", persistedOperationsManifest: file }), JSON.stringify(manifest)).rejects.toThrow(
        ConfigError,
      );
    }
    await expect(secondServer({ persistedOperations: "only", persistedOperationsManifest: "/nonexistent/manifest.json" })).rejects.toThrow(
      /cannot be read/,
    );
  });
});
