import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import yazl from "yazl";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";

/**
 * CONTRACT §7.2 on a real server process: after mixed traffic (REST reads and writes, a 401, a 403,
 * a 429, GraphQL, an upload and its job), /metrics has the named families, and no label value
 * carries a domain, a username or an id the traffic used; the log has a line per request and the
 * job's lifecycle; X-Forwarded-Proto shapes `next` behind a trusted proxy; no OpenTelemetry module
 * is loaded when no endpoint is set.
 */

const ADMIN = `Basic ${Buffer.from("metricsadmin:admin-Pass-1").toString("base64")}`;
const DOMAIN = "zetadomain";
const WORKER = { username: "zetaworker", password: "worker-Pass-1" };
const OUTSIDER = { username: "zetaoutsider", password: "outsider-Pass-1" };
const REPORT_OTEL = path.join(import.meta.dirname, "fixtures/report-otel-loads.mjs");
const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), Buffer.alloc(64)]);

let server: ServerProcess;
let dataDir: string;
let db: Database | undefined;

/** where the server keeps its data: a fresh database of its own */
async function storage(): Promise<Record<string, string>> {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-metrics-"));
  if (usingPostgres()) db = await freshDatabase();
  return db?.url ? { DATABASE_URL: db.url, DATA_DIR: dataDir } : { DATA_DIR: dataDir };
}

async function call(pathname: string, init: RequestInit & { auth?: string } = {}) {
  const res = await fetch(`${server.url}${pathname}`, { ...init, headers: { Authorization: init.auth ?? ADMIN, ...(init.headers ?? {}) } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text.startsWith("{") ? JSON.parse(text) : undefined };
}

const basic = (user: { username: string; password: string }) => `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`;

async function graphql(query: string, variables: Record<string, unknown> = {}, auth = ADMIN) {
  return call("/graphql", { method: "POST", auth, headers: { "Content-Type": "application/json" }, body: JSON.stringify({ query, variables }) });
}

/** createUser with the permission names as the schema spells them (strings, or the §7.3 enum) */
async function createUser(user: { username: string; password: string }, permissions: string[]) {
  const mutation = "mutation ($input: CreateUserInput!) { createUser(input: $input) { username } }";
  const input = { ...user, domain: DOMAIN, permissions };
  let res = await graphql(mutation, { input });
  if (res.body?.errors) res = await graphql(mutation, { input: { ...input, permissions: permissions.map((p) => p.toUpperCase()) } });
  expect(res.body?.errors).toBeUndefined();
}

function zipOf(entries: Record<string, Buffer>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries)) zip.addBuffer(data, name);
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    zip.outputStream.on("data", (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

/** the OpenTelemetry packages a server process reported loading (fixtures/report-otel-loads.mjs) */
const otelPackages = (output: string) => [...output.matchAll(/^opentelemetry package loaded: (\S+)$/gm)].map((match) => match[1]!);

/** every label value of the exposition */
function labelValues(exposition: string): string[] {
  return [...exposition.matchAll(/\w+="((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!);
}

const used: string[] = [DOMAIN, WORKER.username, OUTSIDER.username, "metricsadmin"];
let exposition = "";

beforeAll(async () => {
  server = await startServer(
    {
      ...(await storage()),
      BOOTSTRAP_ADMIN: "metricsadmin:admin-Pass-1",
      LOG_LEVEL: "info",
      TRUST_PROXY: "true",
      LOGIN_FAILURES_PER_USERNAME: "2",
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${REPORT_OTEL}`,
    },
    120_000,
  );
  expect((await graphql(`mutation { createDomain(name: "${DOMAIN}") { id } }`)).body.errors).toBeUndefined();
  await createUser(WORKER, ["access_api", "edit_data", "edit_apps"]);
  await createUser(OUTSIDER, ["view_locations"]);

  const cases = `/a/${DOMAIN}/api/case/v2/`;
  const json = { "Content-Type": "application/json" };
  for (const name of ["first", "second"]) {
    const created = await call(cases, {
      method: "POST",
      auth: basic(WORKER),
      headers: json,
      body: JSON.stringify({ case_type: "visit", case_name: name, owner_id: "o1" }),
    });
    expect(created.status).toBe(200);
    used.push(created.body.case.case_id, created.body.form_id);
  }
  expect((await call(`${cases}${used.at(-2)}/`, { auth: basic(WORKER) })).status).toBe(200);
  expect((await call(cases, { auth: basic({ ...WORKER, password: "wrong" }) })).status).toBe(401);
  expect((await call(cases, { auth: basic(OUTSIDER) })).status).toBe(403);
  for (let i = 0; i < 3; i++) await call(cases, { auth: basic({ username: "zetaghost", password: "guess" }) });
  used.push("zetaghost");
  expect((await graphql(`{ cases(domain: "${DOMAIN}", first: 1) { totalCount } }`, {}, basic(WORKER))).status).toBe(200);

  const form = new FormData();
  form.append("app_file", new Blob([JSON.stringify({ name: "Clinic", icon: "jr://file/commcare/image/logo.png" })]), "app.json");
  form.append("app_name", "Clinic");
  const imported = await call(`/a/${DOMAIN}/apps/api/import_app/`, { method: "POST", auth: basic(WORKER), body: form });
  expect(imported.status).toBe(201);
  used.push(imported.body.app_id);
  const upload = new FormData();
  upload.append("bulk_upload_file", new Blob([new Uint8Array(await zipOf({ "commcare/image/logo.png": PNG }))]), "media.zip");
  const uploaded = await call(`/a/${DOMAIN}/apps/api/${imported.body.app_id}/multimedia/`, { method: "POST", auth: basic(WORKER), body: upload });
  expect(uploaded.status).toBe(200);
  used.push(uploaded.body.processing_id);
  const statusPath = `/a/${DOMAIN}/apps/api/${imported.body.app_id}/multimedia/status/${uploaded.body.processing_id}/`;
  // the worker times the attempt (and logs its end) just after the status turns complete: wait for both
  for (let i = 0; i < 240; i++) {
    if ((await call(statusPath, { auth: basic(WORKER) })).body?.complete) {
      exposition = (await call("/metrics")).text;
      if (/^multimedia_job_duration_seconds_count\{outcome="complete"\} 1$/m.test(exposition)) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await db?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("§7.2 /metrics of a real server after mixed traffic", () => {
  it("§7.2: the named families are exposed", () => {
    for (const family of [
      "http_requests_total counter",
      "http_request_duration_seconds histogram",
      "graphql_operations_total counter",
      "graphql_operation_duration_seconds histogram",
      "graphql_subscriptions_active gauge",
      "multimedia_jobs gauge",
      "multimedia_job_duration_seconds histogram",
      "rate_limited_requests_total counter",
      "database_pool_connections gauge",
      "event_bus_notifications_total counter",
      "process_cpu_seconds_total counter",
      "process_resident_memory_bytes gauge",
    ]) {
      expect(exposition).toContain(`# TYPE ${family}`);
    }
  });

  it("§7.2: the traffic is counted under route patterns and status codes", () => {
    expect(exposition).toMatch(/^http_requests_total\{method="POST",route="\/a\/:domain\/api\/case\/v2\/",status_code="200"\} 2$/m);
    expect(exposition).toContain('http_requests_total{method="GET",route="/a/:domain/api/case/v2/:caseId",status_code="200"} 1');
    expect(exposition).toMatch(/http_requests_total\{method="GET",route="\/a\/:domain\/api\/case\/v2\/\*",status_code="401"\}/);
    expect(exposition).toContain('http_requests_total{method="GET",route="/a/:domain/api/case/v2/",status_code="403"} 1');
    expect(exposition).toMatch(/http_requests_total\{method="GET",route="\/a\/:domain\/api\/case\/v2\/\*",status_code="429"\}/);
    expect(exposition).toContain('http_requests_total{method="POST",route="/a/:domain/apps/api/import_app/",status_code="201"} 1');
    expect(exposition).toContain('http_requests_total{method="POST",route="/a/:domain/apps/api/:appId/multimedia/",status_code="200"} 1');
    expect(exposition).toMatch(/^graphql_operations_total\{operation_type="mutation"\} \d+$/m);
    expect(exposition).toMatch(/^graphql_operations_total\{operation_type="query"\} 1$/m);
    expect(exposition).toMatch(/^rate_limited_requests_total\{limiter="login"\} [1-9]\d*$/m);
    expect(exposition).toMatch(/^multimedia_jobs\{state="complete"\} 1$/m);
    expect(exposition).toMatch(/^multimedia_job_duration_seconds_count\{outcome="complete"\} 1$/m);
  });

  it("§7.2: no label value carries a domain, a username or an id of the traffic", () => {
    const values = labelValues(exposition);
    expect(values.length).toBeGreaterThan(50);
    for (const value of values) for (const secret of used) expect(value).not.toContain(secret);
    for (const secret of used) expect(exposition).not.toContain(secret);
  });

  it("§7.2: the log has a line per request (with the user) and the job's queued, started and finished lines", () => {
    const entries = server
      .output()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line));
    const requests = entries.filter((entry) => entry.message === "request completed");
    expect(requests.length).toBeGreaterThanOrEqual(12);
    expect(requests).toContainEqual(
      expect.objectContaining({ route: "/a/:domain/api/case/v2/:caseId", username: WORKER.username, res: { statusCode: 200 } }),
    );
    for (const entry of requests) expect(entry.requestId).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    const job = used.find((value) => value.startsWith("dl-"));
    for (const message of ["multimedia job queued", "multimedia job started", "multimedia job finished"]) {
      expect(entries).toContainEqual(expect.objectContaining({ message, processingId: job }));
    }
    expect(entries.find((entry) => entry.message === "multimedia job finished").durationMs).toBeGreaterThanOrEqual(0);
  });

  it("§7.2: behind a trusted proxy (TRUST_PROXY), X-Forwarded-Proto https makes `next` an https link", async () => {
    const res = await call(`/a/${DOMAIN}/api/case/v2/?limit=1`, {
      auth: basic(WORKER),
      headers: { "X-Forwarded-Proto": "https", "X-Forwarded-Host": "gateway.example.org" },
    });
    expect(res.status).toBe(200);
    expect(res.body.next).toMatch(new RegExp(`^https://gateway\\.example\\.org/a/${DOMAIN}/api/case/v2/\\?cursor=`));
  });

  it("§7.2: without OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry SDK package was loaded (only the API facade prom-client requires)", () => {
    expect(otelPackages(server.output()).filter((pkg) => pkg !== "@opentelemetry/api")).toEqual([]);
  });
});

describe("§7.2 with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("§7.2: the OpenTelemetry SDK is loaded and the server still serves", async () => {
    const tracedDir = await mkdtemp(path.join(os.tmpdir(), "gateway-otel-"));
    const traced = await startServer(
      {
        DATA_DIR: tracedDir,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
        LOG_LEVEL: "info",
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${REPORT_OTEL}`,
      },
      120_000,
    );
    try {
      const res = await fetch(`${traced.url}/livez`);
      expect(res.status).toBe(200);
      expect(otelPackages(traced.output())).toEqual(
        expect.arrayContaining(["@opentelemetry/sdk-trace", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/context-async-hooks"]),
      );
    } finally {
      await traced.stop();
      await rm(tracedDir, { recursive: true, force: true });
    }
  }, 180_000);
});
