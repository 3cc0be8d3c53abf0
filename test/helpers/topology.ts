/**
 * The scale-out topology of CONTRACT §7.6 as an operator runs it, for the topology test and the
 * topology soak: two API processes (`WORKERS=0`) and one worker process (`WORKERS=1`, which serves
 * only what nobody sends it), started by scripts/start.sh with production defaults, sharing one
 * PostgreSQL database, one S3 bucket (s3rver on loopback, signatures checked) and one Debian
 * `redis-server`. Each process has a DATA_DIR of its own, so that anything written there is seen.
 * No vitest import: bench/ uses it too.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient, type Client } from "graphql-ws";
import pg from "pg";
import { WebSocket } from "ws";
import yazl from "yazl";
import { startObjectStore, type TestObjectStore } from "./object-store.ts";
import { startPgBouncer } from "./pgbouncer.ts";
import { startServer, type ServerProcess } from "./process.ts";
import { startRedis, type RedisServer } from "./redis.ts";

const TOPOLOGY_ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
export const TOPOLOGY_DOMAIN = "topo";
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

/**
 * The database URLs every process of the topology gets: DATABASE_URL names a transaction-pooling
 * PgBouncer of its own in front of the database, DATABASE_DIRECT_URL the server (CONTRACT §7.6
 * connection pooling). `close` stops the pooler.
 */
async function topologyDatabase(direct: string): Promise<{ env: { DATABASE_URL: string; DATABASE_DIRECT_URL: string }; close(): Promise<void> }> {
  const bouncer = await startPgBouncer({ upstreamUrl: direct });
  return {
    env: { DATABASE_URL: bouncer.url(new URL(direct).pathname.slice(1)), DATABASE_DIRECT_URL: direct },
    close: () => bouncer.stop(),
  };
}

export interface Topology {
  /** the two API processes: the dashboard's, and the one that takes the writes and uploads */
  api: [ServerProcess, ServerProcess];
  /** the worker process now running (`startWorker` replaces it) */
  worker: ServerProcess;
  store: TestObjectStore;
  redis: RedisServer;
  /** the database URL the processes were given (direct or pooled) */
  databaseUrl: string;
  /** a direct URL to the database, for the checks */
  directUrl: string;
  /** the DATA_DIR of every process started so far */
  dataDirs: string[];
  /** the environment every process shares */
  env: Record<string, string>;
  /** starts another worker process (after a kill -9 of the last one) */
  startWorker(): Promise<ServerProcess>;
  /** stops every process (SIGKILL) and engine, removes the directories */
  close(): Promise<void>;
}

/**
 * Starts the topology over the PostgreSQL database `direct` (migrated by the first process if it
 * is not yet). `extra` goes to every process (e.g. JOB_LEASE_SECONDS).
 */
export async function startTopology(direct: string, extra: Record<string, string> = {}): Promise<Topology> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const processes: ServerProcess[] = [];
  const dataDirs: string[] = [];
  try {
    const database = await topologyDatabase(direct);
    cleanups.push(() => database.close());
    const redis = await startRedis();
    cleanups.push(() => redis.remove());
    const store = await startObjectStore();
    cleanups.push(() => store.close());
    const env = { ...database.env, REDIS_URL: redis.url, ...store.env("gw"), BOOTSTRAP_ADMIN: "admin:admin-pass", ...extra };
    const start = async (workers: string) => {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-topo-"));
      dataDirs.push(dataDir);
      const server = await startServer({ ...env, DATA_DIR: dataDir, WORKERS: workers }, 120_000);
      processes.push(server);
      return server;
    };
    // one after the other: the first migrates and creates the admin, the others find both in place
    const api: [ServerProcess, ServerProcess] = [await start("0"), await start("0")];
    const topology: Topology = {
      api,
      worker: await start("1"),
      store,
      redis,
      databaseUrl: env.DATABASE_URL,
      directUrl: direct,
      dataDirs,
      env,
      async startWorker() {
        topology.worker = await start("1");
        return topology.worker;
      },
      async close() {
        await Promise.all(processes.map((server) => server.stop("SIGKILL")));
        for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
        for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
      },
    };
    return topology;
  } catch (error) {
    await Promise.all(processes.map((server) => server.stop("SIGKILL")));
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** What an answer brought: its status and its body (JSON when it is). */
export interface Answer {
  status: number;
  body: any;
}

export async function call(url: string, pathname: string, authorization: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(`${url}${pathname}`, {
    ...init,
    headers: { Authorization: authorization, ...init.headers },
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
}

export async function graphql(url: string, authorization: string, query: string, variables?: unknown): Promise<Answer> {
  return call(url, "/graphql", authorization, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
}

async function graphqlData(url: string, authorization: string, query: string): Promise<any> {
  const answer = await graphql(url, authorization, query);
  if (answer.status !== 200 || answer.body.errors) throw new Error(`${query}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

/** The name of media entry `i` in the archives, as the app refers to it. */
const mediaName = (i: number) => `commcare/image/f${i}.png`;

/**
 * The domain, a member with an API key (cheap to check, unlike Basic's scrypt) who may write cases
 * and upload, and an app referring to `mediaCount` images. Returns the key's Authorization and the app id.
 */
export async function prepareDomain(url: string, mediaCount: number): Promise<{ auth: string; appId: string }> {
  await graphqlData(
    url,
    TOPOLOGY_ADMIN,
    `mutation {
      createDomain(name: "${TOPOLOGY_DOMAIN}") { id }
      createUser(input: { username: "field", password: "field-pw", domain: "${TOPOLOGY_DOMAIN}", permissions: [ACCESS_API, VIEW_DATA, EDIT_DATA, EDIT_APPS] }) { id }
    }`,
  );
  const { createApiKey } = await graphqlData(url, TOPOLOGY_ADMIN, 'mutation { createApiKey(username: "field", name: "topology") { key } }');
  const auth = `ApiKey field:${createApiKey.key}`;
  const form = new FormData();
  const source = { modules: Array.from({ length: mediaCount }, (_, i) => ({ icon: `jr://file/${mediaName(i)}` })) };
  form.append("app_file", new Blob([JSON.stringify(source)]), "app.json");
  form.append("app_name", "Topology");
  const imported = await call(url, `/a/${TOPOLOGY_DOMAIN}/apps/api/import_app/`, auth, { method: "POST", body: form });
  if (imported.status !== 201) throw new Error(`import_app: ${imported.status} ${JSON.stringify(imported.body)}`);
  return { auth, appId: imported.body.app_id };
}

/** An archive of `count` stored images of `size` bytes each, their bytes unique to `tag`. */
export function mediaArchive(count: number, size: number, tag: string): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  for (let i = 0; i < count; i++) {
    archive.addBuffer(Buffer.concat([PNG, Buffer.from(`${tag}:${i}`), Buffer.alloc(size)]), mediaName(i), { compress: false });
  }
  archive.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    archive.outputStream.on("data", (chunk: Buffer) => chunks.push(chunk));
    archive.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
    archive.outputStream.on("error", reject);
  });
}

/** Uploads `zip` (REST); the answer (200 with `processing_id` when queued). */
export async function upload(url: string, auth: string, appId: string, zip: Buffer): Promise<Answer> {
  const form = new FormData();
  form.append("bulk_upload_file", new Blob([new Uint8Array(zip)]), "media.zip");
  return call(url, `/a/${TOPOLOGY_DOMAIN}/apps/api/${appId}/multimedia/`, auth, { method: "POST", body: form });
}

export async function uploadStatus(url: string, auth: string, appId: string, processingId: string): Promise<Answer> {
  return call(url, `/a/${TOPOLOGY_DOMAIN}/apps/api/${appId}/multimedia/status/${processingId}/`, auth);
}

export async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what = "condition"): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`${what}: not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** One acknowledged case write: the case, and the form the write stored (what `caseChanged` carries as formId). */
export interface CaseWrite {
  caseId: string;
  formId: string;
}

const casesPath = `/a/${TOPOLOGY_DOMAIN}/api/case/v2/`;
const CASE_RESULT = "xformId case { caseId }";

function restWrite(answer: Answer): CaseWrite | undefined {
  return answer.status === 200 ? { caseId: answer.body.case.case_id, formId: answer.body.xform_id } : undefined;
}

function graphqlWrite(answer: Answer, field: string): CaseWrite | undefined {
  const result = answer.status === 200 && !answer.body.errors ? answer.body.data?.[field] : undefined;
  return result ? { caseId: result.case.caseId, formId: result.xformId } : undefined;
}

/**
 * Case writes through the REST Case API and GraphQL, each resolving with the acknowledged write,
 * or undefined (with the answer) when it was refused.
 */
export const caseWrites = {
  async restCreate(url: string, auth: string, externalId: string, value: string): Promise<[CaseWrite | undefined, Answer]> {
    const answer = await call(url, casesPath, auth, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ case_type: "visit", case_name: externalId, owner_id: "owner", external_id: externalId, properties: { step: value } }),
    });
    return [restWrite(answer), answer];
  },
  async restUpdate(url: string, auth: string, caseId: string, value: string, close = false): Promise<[CaseWrite | undefined, Answer]> {
    const answer = await call(url, `${casesPath}${caseId}`, auth, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ properties: { step: value }, ...(close ? { close: true } : {}) }),
    });
    return [restWrite(answer), answer];
  },
  async graphqlCreate(url: string, auth: string, externalId: string, value: string): Promise<[CaseWrite | undefined, Answer]> {
    const answer = await graphql(
      url,
      auth,
      `mutation ($input: CaseInput!) { createCase(domain: "${TOPOLOGY_DOMAIN}", input: $input) { ${CASE_RESULT} } }`,
      { input: { caseType: "visit", caseName: externalId, ownerId: "owner", externalId, properties: { step: value } } },
    );
    return [graphqlWrite(answer, "createCase"), answer];
  },
  async graphqlUpdate(url: string, auth: string, caseId: string, value: string, close = false): Promise<[CaseWrite | undefined, Answer]> {
    const answer = await graphql(
      url,
      auth,
      `mutation ($caseId: ID!, $input: CaseInput!) { updateCase(domain: "${TOPOLOGY_DOMAIN}", caseId: $caseId, input: $input) { ${CASE_RESULT} } }`,
      { caseId, input: { properties: { step: value }, ...(close ? { close: true } : {}) } },
    );
    return [graphqlWrite(answer, "updateCase"), answer];
  },
};

/** A multimedia job's change as the dashboard feed gets it. */
interface JobEvent {
  processingId: string;
  state: string;
  matchedCount?: number;
  at: number;
}

/** A case change as the dashboard gets it, with when it arrived (performance.now()). */
interface CaseEvent {
  caseId: string;
  formId: string;
  at: number;
}

/** A domain's dashboard on one process: `caseChanged` and `multimediaJobs` over one graphql-ws connection. */
export interface Dashboard {
  cases: CaseEvent[];
  jobs: JobEvent[];
  /** errors the subscriptions ended with (none expected) */
  errors: unknown[];
  dispose(): Promise<void>;
}

export function subscribeDashboard(url: string): Dashboard {
  const client: Client = createClient({
    url: `${url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: TOPOLOGY_ADMIN },
    retryAttempts: 0,
  });
  const dashboard: Dashboard = { cases: [], jobs: [], errors: [], dispose: async () => void (await client.dispose()) };
  const sink = <T>(push: (data: T) => void) => ({
    next: (m: { data?: unknown }) => push(m.data as T),
    error: (e: unknown) => dashboard.errors.push(e),
    complete: () => {},
  });
  client.subscribe(
    { query: `subscription { caseChanged(domain: "${TOPOLOGY_DOMAIN}") { caseId formId } }` },
    sink<{ caseChanged: { caseId: string; formId: string } }>((d) => dashboard.cases.push({ ...d.caseChanged, at: performance.now() })),
  );
  client.subscribe(
    { query: `subscription { multimediaJobs(domain: "${TOPOLOGY_DOMAIN}") { processingId state result { matchedCount } } }` },
    sink<{ multimediaJobs: { processingId: string; state: string; result: { matchedCount: number } | null } }>((d) =>
      dashboard.jobs.push({
        processingId: d.multimediaJobs.processingId,
        state: d.multimediaJobs.state,
        matchedCount: d.multimediaJobs.result?.matchedCount,
        at: performance.now(),
      }),
    ),
  );
  return dashboard;
}

/**
 * Waits until `dashboard` is live: case writes through `writer` until one reaches it. The warm-up
 * events are then dropped, so that what follows is only the test's.
 */
export async function whenLive(dashboard: Dashboard, writer: string, auth: string): Promise<void> {
  let warm = 0;
  await until(
    async () => {
      if (dashboard.cases.length > 0) return true;
      await caseWrites.restCreate(writer, auth, `warm-${warm++}-${Date.now()}`, "warm");
      return undefined;
    },
    60_000,
    "the dashboard's first event",
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  dashboard.cases.splice(0);
  dashboard.jobs.splice(0);
}

/** Where the media and archives went: bucket keys, rows of the database's blob tables, files under any DATA_DIR/blobs. */
export async function mediaPlaces(
  topology: Topology,
): Promise<{ mediaKeys: string[]; archiveKeys: string[]; blobRows: number; chunkRows: number; localBlobFiles: number }> {
  const keys = await topology.store.keys();
  const [counts] = await queryDatabase<{ blobs: string; chunks: string }>(
    topology.directUrl,
    "SELECT (SELECT count(*) FROM blobs) AS blobs, (SELECT count(*) FROM blob_chunks) AS chunks",
  );
  let localBlobFiles = 0;
  for (const dir of topology.dataDirs) {
    const entries = await readdir(path.join(dir, "blobs"), { recursive: true, withFileTypes: true }).catch(() => []);
    localBlobFiles += entries.filter((entry) => entry.isFile()).length;
  }
  return {
    mediaKeys: keys.filter((key) => key.startsWith("gw/media/")),
    archiveKeys: keys.filter((key) => key.startsWith("gw/archives/")),
    blobRows: Number(counts!.blobs),
    chunkRows: Number(counts!.chunks),
    localBlobFiles,
  };
}

/** Runs `query` on the database directly (the checks, never the processes' path). */
export async function queryDatabase<T extends pg.QueryResultRow>(url: string, query: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(query, values)).rows;
  } finally {
    await client.end();
  }
}
