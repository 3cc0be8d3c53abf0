import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import yazl from "yazl";
import { usingPostgres } from "../helpers/db.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";
import { withDatabase } from "../setup/global.ts";

/**
 * CONTRACT §7.5, the move from the embedded database to PostgreSQL, as docs/operations.md tells an
 * operator: data of every kind written through the API of a server on the embedded database; the
 * server stopped; `npm run db:dump -- FILE`; `psql -v ON_ERROR_STOP=1 -d URL -f FILE` into a new,
 * empty PostgreSQL database; a server on it with DATABASE_URL and the same DATA_DIR answers every
 * read as the embedded one did, serves the media byte for byte, takes the same credentials, and
 * takes new writes. Then the backup of a PostgreSQL deployment, `pg_dump -Fc` and `pg_restore`,
 * media included.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
const WORKER = `Basic ${Buffer.from("worker:worker-pw").toString("base64")}`;
const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), Buffer.from("dump test image")]);
/** Absolute URLs in answers start with it on both servers, whatever their ports. */
const PUBLIC_URL = "http://gateway.example";

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

interface Answer {
  status: number;
  body: any;
}

async function request(url: string, pathname: string, authorization: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(`${url}${pathname}`, { ...init, headers: { Authorization: authorization, ...init.headers } });
  const text = await res.text();
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
}

/** A write's answer was a success; else its body says why. */
function ok(answer: Answer): void {
  expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
}

function json(method: string, body: unknown): RequestInit {
  return { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
}

async function graphql(url: string, authorization: string, query: string, variables?: Record<string, unknown>): Promise<any> {
  const answer = await request(url, "/graphql", authorization, json("POST", { query, variables }));
  expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
  return answer.body.data;
}

async function oauthToken(url: string, client: { clientId: string; clientSecret: string }, fields: Record<string, string>): Promise<Answer> {
  const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}`;
  return request(url, "/oauth/token", basic, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
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

/** What the test wrote on the embedded server, to be read back on PostgreSQL. */
interface Written {
  appId: string;
  processingId: string;
  parentId: string;
  childId: string;
  apiKey: string;
  client: { clientId: string; clientSecret: string };
  refreshToken: string;
  accessToken: string;
}

const MEDIA = { "commcare/image/logo.png": PNG, "commcare/audio/hello.mp3": Buffer.from("ID3 not really audio") };

/** Data of every kind, through the public API only. */
async function writeEverything(url: string): Promise<Written> {
  await graphql(
    url,
    ADMIN,
    `mutation {
      createDomain(name: "demo") { id }
      createUser(input: { username: "worker", password: "worker-pw", domain: "demo",
                          permissions: [ACCESS_API, VIEW_DATA, EDIT_DATA, VIEW_LOCATIONS, EDIT_LOCATIONS, EDIT_APPS] }) { id }
      country: createLocationType(domain: "demo", input: { code: "country", name: "Country" }) { code }
      state: createLocationType(domain: "demo", input: { code: "state", name: "State", parentCode: "country" }) { code }
    }`,
  );
  const { createApiKey } = await graphql(url, ADMIN, 'mutation { createApiKey(username: "worker", name: "field") { key } }');
  const apiKey = `ApiKey worker:${createApiKey.key}`;
  const { createOAuthClient: client } = await graphql(
    url,
    ADMIN,
    'mutation { createOAuthClient(input: { name: "mobile" }) { clientId clientSecret } }',
  );

  // locations with types and parents
  const country = await request(
    url,
    "/a/demo/api/location/v2/",
    apiKey,
    json("POST", { name: "Kenya", location_type_code: "country", site_code: "ke" }),
  );
  ok(country);
  const state = await request(
    url,
    "/a/demo/api/location/v2/",
    apiKey,
    json("POST", { name: "Nairobi", location_type_code: "state", parent_location_id: country.body.location_id, location_data: { zone: "east" } }),
  );
  ok(state);

  // cases with their forms, a parent and a child indexed on it, an update and a closed one
  const parent = await request(
    url,
    "/a/demo/api/case/v2/",
    apiKey,
    json("POST", { case_type: "household", case_name: "Household 1", owner_id: "worker", external_id: "hh-1", properties: { size: "4" } }),
  );
  ok(parent);
  const parentId = parent.body.case.case_id;
  const child = await request(
    url,
    "/a/demo/api/case/v2/",
    apiKey,
    json("POST", {
      case_type: "person",
      case_name: "Amina",
      owner_id: "worker",
      indices: { parent: { case_id: parentId, case_type: "household", relationship: "child" } },
    }),
  );
  ok(child);
  expect((await request(url, `/a/demo/api/case/v2/${parentId}`, apiKey, json("PUT", { properties: { size: "5" } }))).status).toBe(200);
  const closed = await request(
    url,
    "/a/demo/api/case/v2/",
    apiKey,
    json("POST", {
      case_type: "visit",
      case_name: "Closed visit",
      owner_id: "worker",
      // text over lines, one of them a psql meta-command, another SQL: all of it stays text
      properties: { note: "seen\n\\restrict k\n'); SELECT 'injected'; --" },
    }),
  );
  expect((await request(url, `/a/demo/api/case/v2/${closed.body.case.case_id}`, apiKey, json("PUT", { close: true }))).status).toBe(200);

  // an app with two versions, and a processed multimedia upload
  const source = { modules: [{ icon: "jr://file/commcare/image/logo.png", audio: "jr://file/commcare/audio/hello.mp3" }] };
  const form = new FormData();
  form.append("app_file", new Blob([JSON.stringify(source)]), "app.json");
  form.append("app_name", "Clinic");
  const imported = await request(url, "/a/demo/apps/api/import_app/", apiKey, { method: "POST", body: form });
  ok(imported);
  const appId = imported.body.app_id;
  const update = new FormData();
  update.append("app_file", new Blob([JSON.stringify({ ...source, version_note: "second" })]), "app.json");
  update.append("app_id", appId);
  expect((await request(url, "/a/demo/apps/api/import_app/", apiKey, { method: "POST", body: update })).status).toBeLessThan(300);
  const upload = new FormData();
  upload.append(
    "bulk_upload_file",
    new Blob([new Uint8Array(await zip({ ...MEDIA, "commcare/unused.txt": Buffer.from("unmatched") }))]),
    "media.zip",
  );
  const uploaded = await request(url, `/a/demo/apps/api/${appId}/multimedia/`, apiKey, { method: "POST", body: upload });
  expect(uploaded.status).toBe(200);
  const processingId = uploaded.body.processing_id;
  await until(async () =>
    (await request(url, `/a/demo/apps/api/${appId}/multimedia/status/${processingId}/`, apiKey)).body.complete ? true : undefined,
  );

  // an OAuth password grant: its access and refresh tokens must outlive the move
  const token = await oauthToken(url, client, { grant_type: "password", username: "worker", password: "worker-pw" });
  expect(token.status).toBe(200);
  return {
    appId,
    processingId,
    parentId,
    childId: child.body.case.case_id,
    apiKey,
    client,
    refreshToken: token.body.refresh_token,
    accessToken: token.body.access_token,
  };
}

const EVERYTHING = `query {
  apps(domain: "demo") { appId name version docType createdAt updatedAt
    versions { version name source createdAt } multimedia { fileId contentType mediaClass size md5 sha256 } }
  cases(domain: "demo", first: 100) { totalCount edges { node { caseId caseType caseName externalId ownerId closed dateOpened
    dateClosed lastModified serverLastModified properties indices { name caseId caseType relationship }
    parent { caseId } children { caseId } forms { formId xmlns xml userId username deviceId receivedOn caseIds } } } }
  locations(domain: "demo", first: 100) { edges { node { locationId name siteCode locationTypeCode parentLocationId locationData lastModified ancestors { locationId } } } }
  locationTypes(domain: "demo") { code name parentCode }
  users(domain: "demo") { username isActive isSuperuser createdAt memberships { domain permissions } }
  apiKeys(username: "worker") { id name prefix createdAt revokedAt }
  multimediaJobs(domain: "demo", first: 10) { edges { node { processingId state complete failed attempts fileName sizeBytes
    createdAt startedAt finishedAt result { totalFiles matchedCount unmatchedCount imageCount audioCount } } } }
}`;

/** Every read the move must keep: REST and GraphQL answers, and the media's bytes. */
async function readEverything(url: string, written: Written): Promise<Record<string, unknown>> {
  const { apiKey, appId, processingId } = written;
  const reads: Record<string, unknown> = {
    graphql: await graphql(url, ADMIN, EVERYTHING),
    caseList: await request(url, "/a/demo/api/case/v2/", apiKey),
    parent: await request(url, `/a/demo/api/case/v2/${written.parentId}`, apiKey),
    child: await request(url, `/a/demo/api/case/v2/${written.childId}`, apiKey),
    byExternalId: await request(url, "/a/demo/api/case/v2/ext/hh-1/", apiKey),
    locations: await request(url, "/a/demo/api/location/v2/", apiKey),
    locationTypes: await request(url, "/a/demo/api/location_type/v1/", apiKey),
    status: await request(url, `/a/demo/apps/api/${appId}/multimedia/status/${processingId}/`, apiKey),
  };
  for (const name of Object.keys(MEDIA)) {
    const res = await fetch(`${url}/a/demo/apps/api/${appId}/multimedia/file/${name}`, { headers: { Authorization: apiKey } });
    reads[name] = { status: res.status, type: res.headers.get("content-type"), bytes: Buffer.from(await res.arrayBuffer()).toString("base64") };
  }
  return reads;
}

/** A new, empty database on the suite's PostgreSQL server; its URL. */
async function emptyDatabase(): Promise<string> {
  const server = inject("postgresServer");
  const name = `dump_${randomUUID().replace(/-/g, "").slice(0, 16)}`;
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
  return withDatabase(server, name);
}

// It needs a PostgreSQL server to restore into: it runs in the PostgreSQL half (npm run test:postgres).
describe.skipIf(!usingPostgres())("§7.5 from the embedded database to PostgreSQL", () => {
  it("§7.5: after db:dump and psql into an empty PostgreSQL 15, a server with DATABASE_URL and the same DATA_DIR serves everything the embedded one did; pg_dump -Fc and pg_restore then keep it all", {
    timeout: 300_000,
  }, async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-dump-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const env = { BOOTSTRAP_ADMIN: "admin:admin-pass", PUBLIC_URL, RATE_LIMIT_REQUESTS: "0" };

    // the embedded server, with data of every kind
    const embedded = await startServer({ ...env, DATA_DIR: dataDir }, 120_000);
    servers.push(embedded);
    const written = await writeEverything(embedded.url);
    const before = await readEverything(embedded.url, written);
    expect(before.status).toMatchObject({ status: 200, body: { complete: true } });

    // db:dump refuses while the server holds the data directory
    const file = path.join(dataDir, "..", `${path.basename(dataDir)}.sql`);
    cleanups.push(() => rm(file, { force: true }));
    const dumpEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
    delete dumpEnv.NODE_ENV;
    const refused = await run("npm", ["run", "db:dump", "--", file], { cwd: ROOT, env: dumpEnv }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining("a server is running on DATA_DIR") });

    // the move, as docs/operations.md has it
    expect(await embedded.stop()).toBe(0);
    await run("npm", ["run", "db:dump", "--", file], { cwd: ROOT, env: dumpEnv });
    const databaseUrl = await emptyDatabase();
    await run("psql", ["-v", "ON_ERROR_STOP=1", "-d", databaseUrl, "-f", file], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });

    const moved = await startServer({ ...env, DATA_DIR: dataDir, DATABASE_URL: databaseUrl }, 120_000);
    servers.push(moved);
    // the restored database was current: the server applied no migration
    expect(moved.output()).not.toContain('"migrations applied"');
    const after = await readEverything(moved.url, written);
    expect(after).toEqual(before);
    expect(after["commcare/image/logo.png"]).toMatchObject({ status: 200, bytes: PNG.toString("base64") });

    // credentials: a password (Basic), the API key, the OAuth tokens and client issued before the move
    expect((await request(moved.url, "/a/demo/api/case/v2/", WORKER)).status).toBe(200);
    expect((await request(moved.url, "/a/demo/api/case/v2/", written.apiKey)).status).toBe(200);
    expect((await request(moved.url, "/a/demo/api/case/v2/", `Bearer ${written.accessToken}`)).status).toBe(200);
    const refreshed = await oauthToken(moved.url, written.client, { grant_type: "refresh_token", refresh_token: written.refreshToken });
    expect(refreshed.status).toBe(200);
    expect((await request(moved.url, "/a/demo/api/case/v2/", `Bearer ${refreshed.body.access_token}`)).status).toBe(200);
    const password = await oauthToken(moved.url, written.client, { grant_type: "password", username: "worker", password: "worker-pw" });
    expect(password.status).toBe(200);

    // new writes of every kind (sequences and identities carried over: nothing collides)
    const created = await request(
      moved.url,
      "/a/demo/api/case/v2/",
      written.apiKey,
      json("POST", { case_type: "visit", case_name: "After", owner_id: "worker" }),
    );
    ok(created);
    const location = await request(
      moved.url,
      "/a/demo/api/location/v2/",
      written.apiKey,
      json("POST", { name: "Kisumu", location_type_code: "country" }),
    );
    ok(location);
    await graphql(moved.url, ADMIN, 'mutation { createApiKey(username: "worker", name: "after") { key } }');
    const upload = new FormData();
    upload.append(
      "bulk_upload_file",
      new Blob([new Uint8Array(await zip({ "commcare/image/logo.png": Buffer.concat([PNG, Buffer.from("v2")]) }))]),
      "media.zip",
    );
    const uploaded = await request(moved.url, `/a/demo/apps/api/${written.appId}/multimedia/`, written.apiKey, { method: "POST", body: upload });
    expect(uploaded.status).toBe(200);
    const path2 = `/a/demo/apps/api/${written.appId}/multimedia/status/${uploaded.body.processing_id}/`;
    await until(async () => ((await request(moved.url, path2, written.apiKey)).body.complete ? true : undefined));
    const media = await fetch(`${moved.url}/a/demo/apps/api/${written.appId}/multimedia/file/commcare/image/logo.png`, {
      headers: { Authorization: written.apiKey },
    });
    expect(Buffer.from(await media.arrayBuffer())).toEqual(Buffer.concat([PNG, Buffer.from("v2")]));
    const { cases } = await graphql(moved.url, ADMIN, '{ cases(domain: "demo", first: 100) { totalCount } }');
    expect(cases.totalCount).toBe((before.graphql as { cases: { totalCount: number } }).cases.totalCount + 1);

    // the backup on PostgreSQL, as docs/operations.md has it: pg_dump -Fc, pg_restore into an empty database
    const latest = await readEverything(moved.url, written);
    expect(await moved.stop()).toBe(0);
    const backup = `${file}.dump`;
    cleanups.push(() => rm(backup, { force: true }));
    await run("pg_dump", ["-Fc", "-d", databaseUrl, "-f", backup]);
    const restoredUrl = await emptyDatabase();
    await run("pg_restore", ["--no-owner", "-d", restoredUrl, backup]);
    const restored = await startServer({ ...env, DATA_DIR: dataDir, DATABASE_URL: restoredUrl }, 120_000);
    servers.push(restored);
    expect(await readEverything(restored.url, written)).toEqual(latest);
  });
});
