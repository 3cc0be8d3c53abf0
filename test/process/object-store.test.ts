import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import yazl from "yazl";
import { usingPostgres } from "../helpers/db.ts";
import { startObjectStore, type TestObjectStore } from "../helpers/object-store.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";
import { withDatabase } from "../setup/global.ts";

/**
 * CONTRACT §7.6, object storage as an operator runs it: servers started by scripts/start.sh with
 * production defaults, s3rver on loopback checking signatures. Existing media move from today's
 * storage (DATA_DIR/blobs on the embedded database, the `blobs` tables on PostgreSQL: whichever
 * this half of the suite runs) with `npm run blobs:migrate`, run twice (idempotent) as
 * docs/operations.md says; a server on the store serves them and new uploads, and so does the
 * next one after a restart. A wrong secret is refused clearly: /readyz 503 names the store, an
 * upload answers 503 with a message, never a 500.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), Buffer.alloc(200 * 1024, 3)]);
const MP3 = Buffer.concat([Buffer.from("ID3"), Buffer.alloc(64 * 1024, 5)]);
const PREFIX = "prod";

const servers: ServerProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop("SIGKILL")));
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

function zip(files: Record<string, Buffer>): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  for (const [name, body] of Object.entries(files)) archive.addBuffer(body, name);
  archive.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    archive.outputStream.on("data", (chunk: Buffer) => chunks.push(chunk));
    archive.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

async function request(url: string, pathname: string, authorization: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${pathname}`, { ...init, headers: { Authorization: authorization, ...init.headers } });
  const text = await res.text();
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
}

async function graphql(url: string, query: string): Promise<any> {
  const answer = await request(url, "/graphql", ADMIN, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query }),
  });
  expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
  return answer.body.data;
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A domain, a member's API key and an app whose references `files` will match. */
async function setUpApp(url: string, files: Record<string, Buffer>): Promise<{ apiKey: string; appId: string }> {
  await graphql(
    url,
    `mutation {
      createDomain(name: "demo") { id }
      createUser(input: { username: "worker", password: "worker-pw", domain: "demo", permissions: [ACCESS_API, EDIT_APPS] }) { id }
    }`,
  );
  const { createApiKey } = await graphql(url, 'mutation { createApiKey(username: "worker", name: "field") { key } }');
  const apiKey = `ApiKey worker:${createApiKey.key}`;
  const form = new FormData();
  form.append("app_file", new Blob([JSON.stringify({ media: Object.keys(files).map((name) => `jr://file/${name}`) })]), "app.json");
  form.append("app_name", "Clinic");
  const imported = await request(url, "/a/demo/apps/api/import_app/", apiKey, { method: "POST", body: form });
  expect(imported.status, JSON.stringify(imported.body)).toBe(201);
  return { apiKey, appId: imported.body.app_id };
}

/** Uploads `files` as one archive and waits for its job: the matched count. */
async function upload(url: string, apiKey: string, appId: string, files: Record<string, Buffer>): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append("bulk_upload_file", new Blob([new Uint8Array(await zip(files))]), "media.zip");
  const answer = await request(url, `/a/demo/apps/api/${appId}/multimedia/`, apiKey, { method: "POST", body: form });
  if (answer.status !== 200) return answer;
  const processingId = answer.body.processing_id;
  return until(async () => {
    const status = await request(url, `/a/demo/apps/api/${appId}/multimedia/status/${processingId}/`, apiKey);
    return status.body.complete ? status : undefined;
  });
}

async function expectServed(url: string, apiKey: string, appId: string, files: Record<string, Buffer>): Promise<void> {
  for (const [name, bytes] of Object.entries(files)) {
    const res = await fetch(`${url}/a/demo/apps/api/${appId}/multimedia/file/${name}`, { headers: { Authorization: apiKey } });
    expect(res.status, name).toBe(200);
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), bytes), name).toBe(0);
  }
}

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function objectStore(): Promise<TestObjectStore> {
  const store = await startObjectStore();
  cleanups.push(() => store.close());
  return store;
}

/** On the PostgreSQL half a new database of the suite's server (the `blobs` tables are the source); else none (DATA_DIR/blobs is). */
async function databaseEnv(): Promise<Record<string, string>> {
  if (!usingPostgres()) return {};
  const server = inject("postgresServer");
  const name = `s3_${randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const dropper = new pg.Client({ connectionString: server });
    await dropper.connect();
    await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await dropper.end();
  });
  return { DATABASE_URL: withDatabase(server, name) };
}

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer(env, 120_000);
  servers.push(server);
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  expect(await server.stop("SIGTERM")).toBe(0);
  servers.splice(servers.indexOf(server), 1);
}

/** The blobs today's storage still holds: files under DATA_DIR/blobs, or rows of `blobs`. */
async function sourceBlobs(env: Record<string, string>, dataDir: string): Promise<number> {
  if (!env.DATABASE_URL)
    return (await readdir(path.join(dataDir, "blobs"), { recursive: true, withFileTypes: true }).catch(() => [])).filter((e) => e.isFile()).length;
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>("SELECT count(*) AS count FROM blobs");
    return Number(rows[0]!.count);
  } finally {
    await client.end();
  }
}

describe("§7.6 object storage, process by process", () => {
  it(`§7.6: npm run blobs:migrate moves the media of ${usingPostgres() ? "the blobs tables" : "DATA_DIR/blobs"} into the bucket (twice: idempotent); a server on the store serves them and new uploads, after a restart too`, {
    timeout: 600_000,
  }, async () => {
    const store = await objectStore();
    const dataDir = await tempDir("s3-move-");
    const base = { DATA_DIR: dataDir, BOOTSTRAP_ADMIN: "admin:admin-pass", ...(await databaseEnv()) };
    const before = { "media/logo.png": PNG, "media/hello.mp3": MP3 };

    // today's storage: a processed upload
    const local = await start(base);
    const { apiKey, appId } = await setUpApp(local.url, { ...before, "media/later.png": PNG });
    expect((await upload(local.url, apiKey, appId, before)).body.matched_count).toBe(2);
    await stop(local);
    expect(await sourceBlobs(base, dataDir)).toBe(2);

    const moveEnv = { ...process.env, ...base, ...store.env(PREFIX) };
    const first = await run("npm", ["run", "blobs:migrate"], { cwd: ROOT, env: moveEnv });
    expect(first.stdout).toMatch(/blobs:migrate: from .*: 2 copied, 0 already in the store/);
    // again, now removing what the store holds from the old storage
    const second = await run("npm", ["run", "blobs:migrate", "--", "--delete-source"], { cwd: ROOT, env: moveEnv });
    expect(second.stdout).toMatch(/: 0 copied, 2 already in the store, 2 removed from the source/);
    expect(await sourceBlobs(base, dataDir)).toBe(0);
    expect((await store.keys()).filter((key) => key.startsWith(`${PREFIX}/media/`))).toHaveLength(2);

    // the server on the store
    const onStore = await start({ ...base, ...store.env(PREFIX) });
    expect((await request(onStore.url, "/readyz", ADMIN)).body.checks.objectStore).toBe("ok");
    await expectServed(onStore.url, apiKey, appId, before);
    const later = { "media/later.png": Buffer.concat([PNG, Buffer.from("later")]) };
    expect((await upload(onStore.url, apiKey, appId, later)).body.matched_count).toBe(1);
    await expectServed(onStore.url, apiKey, appId, later);
    await stop(onStore);
    expect((await store.keys()).filter((key) => key.startsWith(`${PREFIX}/media/`))).toHaveLength(3);
    expect(await sourceBlobs(base, dataDir)).toBe(0);

    // a restart keeps serving everything
    const restarted = await start({ ...base, ...store.env(PREFIX) });
    await expectServed(restarted.url, apiKey, appId, { ...before, ...later });
    await stop(restarted);
  });

  it("§7.6: a wrong secret is refused clearly: /readyz 503 names the object store, an upload answers 503 with a message, never a 500", {
    timeout: 300_000,
  }, async () => {
    const store = await objectStore();
    const dataDir = await tempDir("s3-wrong-");
    const server = await start({
      DATA_DIR: dataDir,
      BOOTSTRAP_ADMIN: "admin:admin-pass",
      ...(await databaseEnv()),
      ...store.env(PREFIX, { AWS_SECRET_ACCESS_KEY: "not-the-secret" }),
    });
    const ready = await request(server.url, "/readyz", ADMIN);
    expect(ready.status).toBe(503);
    expect(ready.body.checks.objectStore).toBe("failed");
    const { apiKey, appId } = await setUpApp(server.url, { "media/logo.png": PNG });
    const refused = await upload(server.url, apiKey, appId, { "media/logo.png": PNG });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      success: false,
      error: "The service is temporarily unavailable: the object store refused or did not answer (SignatureDoesNotMatch). Retry later.",
    });
    expect(JSON.stringify(refused.body)).not.toMatch(/\bat \S+:\d+/);
    // nothing reached the bucket, nothing stayed on local disk
    expect(await store.keys()).toEqual([]);
    expect(await readdir(path.join(dataDir, "tmp")).catch(() => [])).toEqual([]);
    await stop(server);
  });
});
