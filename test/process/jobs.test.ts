import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "graphql-ws";
import { WebSocket } from "ws";
import yazl from "yazl";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";

/**
 * CONTRACT §4 Processing, with real server processes: jobs are durable (a killed worker's job is
 * finished after a restart), and progress reaches a subscriber on another process.
 */

const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), Buffer.alloc(64)]);

function archive(count: number, size: number): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (let i = 0; i < count; i++) {
    const body = Buffer.concat([PNG, Buffer.from(String(i)), Buffer.alloc(size)]);
    zip.addBuffer(body, `commcare/image/f${i}.png`, { compress: false });
  }
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    zip.outputStream.on("data", (c: Buffer) => chunks.push(c));
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

async function call(url: string, pathname: string, init: RequestInit = {}) {
  const res = await fetch(`${url}${pathname}`, { ...init, headers: { Authorization: ADMIN, ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any };
}

/** A domain and an app referring to `count` images; returns the app id. */
async function prepare(url: string, count: number): Promise<string> {
  await call(url, "/graphql", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query: 'mutation { createDomain(name: "demo") { id } }' }),
  });
  const form = new FormData();
  const source = { modules: Array.from({ length: count }, (_, i) => ({ icon: `jr://file/commcare/image/f${i}.png` })) };
  form.append("app_file", new Blob([JSON.stringify(source)]), "app.json");
  form.append("app_name", "Clinic");
  const res = await call(url, "/a/demo/apps/api/import_app/", { method: "POST", body: form });
  expect(res.status).toBe(201);
  return res.body.app_id;
}

async function uploadArchive(url: string, appId: string, zip: Buffer): Promise<string> {
  const form = new FormData();
  form.append("bulk_upload_file", new Blob([new Uint8Array(zip)]), "media.zip");
  const res = await call(url, `/a/demo/apps/api/${appId}/multimedia/`, { method: "POST", body: form });
  expect(res.status).toBe(200);
  return res.body.processing_id;
}

async function statusOf(url: string, appId: string, id: string) {
  return call(url, `/a/demo/apps/api/${appId}/multimedia/status/${id}/`);
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("durable multimedia jobs", () => {
  const servers: ServerProcess[] = [];
  let dataDir: string;
  let db: Database | undefined;
  const env = (): Record<string, string> => (db?.url ? { DATABASE_URL: db.url } : { DATA_DIR: dataDir });

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-jobs-"));
    if (usingPostgres()) db = await freshDatabase();
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop("SIGKILL");
    await db?.close();
    db = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = async (extra: Record<string, string>) => {
    const server = await startServer({ ...env(), BOOTSTRAP_ADMIN: "admin:admin-pass", ...extra });
    servers.push(server);
    return server;
  };

  /** Whether `server` logged the start of attempt `attempt` of job `id` (worker.ts's lifecycle line). */
  const started = (server: ServerProcess, id: string, attempt?: number) =>
    server
      .output()
      .split("\n")
      .some(
        (line) => line.includes('"multimedia job started"') && line.includes(id) && (attempt === undefined || line.includes(`"attempt":${attempt}`)),
      );

  // On PGlite the restarted process fails the orphaned attempt at once. On PostgreSQL a second
  // process is already running, and takes the job over once its heartbeat is stale: within
  // JOB_LEASE_SECONDS and a tenth (README), not pg-boss's default minute between stale-job checks.
  it("finishes a job whose worker process was killed mid-way: after a restart, or on PostgreSQL taken over by another process within JOB_LEASE_SECONDS and a tenth", async () => {
    const lease = { JOB_LEASE_SECONDS: "10", LOG_LEVEL: "info" };
    const [first, other] = await Promise.all([start(lease), ...(usingPostgres() ? [start(lease)] : [])]);
    const appId = await prepare(first!.url, 400);
    const id = await uploadArchive(first!.url, appId, await archive(400, 64 * 1024));
    await until(async () => ((await statusOf(first!.url, appId, id)).body.progress?.current > 5 ? true : undefined), 30_000);
    // either process may have claimed it: kill the one that runs it
    const worker = other && started(other, id) ? other : first!;
    const killedAt = Date.now();
    await worker.stop("SIGKILL");
    servers.splice(servers.indexOf(worker), 1);

    const second = worker === other ? first! : (other ?? (await start(lease)));
    if (other) {
      await until(async () => (started(second, id, 2) ? true : undefined), 60_000);
      const tookOverMs = Date.now() - killedAt;
      // 10 s lease + 1 s between checks, plus the claim's polling and this test's
      expect(tookOverMs, `taken over ${tookOverMs} ms after the kill`).toBeLessThan(14_000);
    }
    const done = await until(async () => {
      const s = await statusOf(second.url, appId, id);
      return s.body.complete ? s : undefined;
    }, 120_000);
    expect(done.status).toBe(200);
    expect(done.body.matched_count).toBe(400);
    expect(done.body.progress).toEqual({ percent: 100, current: 400, total: 400 });
  }, 180_000);

  it.runIf(usingPostgres())(
    "delivers the job's progress (coalesced, CONTRACT §7.4) and its final result to a subscriber on another process",
    async () => {
      const receiver = await start({ WORKERS: "0" });
      const subscriberHost = await start({ WORKERS: "0" });
      const appId = await prepare(receiver.url, 30);
      const id = await uploadArchive(receiver.url, appId, await archive(30, 1024));

      const client = createClient({
        url: `${subscriberHost.url.replace("http", "ws")}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { Authorization: ADMIN },
        retryAttempts: 0,
      });
      const currents: number[] = [];
      let final: any;
      const done = (async () => {
        for await (const event of client.iterate<any>({
          query: `subscription { multimediaProgress(domain: "demo", processingId: "${id}") { state complete progress { current } result { matchedCount } } }`,
        })) {
          currents.push(event.data.multimediaProgress.progress.current);
          final = event.data.multimediaProgress;
        }
      })();
      await new Promise((r) => setTimeout(r, 500));
      await start({ WORKERS: "1" }); // a third process runs the job
      await done;
      await client.dispose();
      // at most PROGRESS_EVENTS_PER_SECOND progress events a second: some entries may be coalesced, never reordered
      expect(currents[0]).toBe(0);
      expect(currents).toEqual([...currents].sort((a, b) => a - b));
      expect(currents.at(-1)).toBe(30);
      expect(final).toMatchObject({ state: "COMPLETE", complete: true, result: { matchedCount: 30 } });
    },
  );

  it.runIf(usingPostgres())(
    "CONTRACT §7.4: a domain feed subscriber on one process sees an upload made on a second and run by a third, from QUEUED to its result",
    async () => {
      const subscriberHost = await start({ WORKERS: "0" });
      const receiver = await start({ WORKERS: "0" });
      const appId = await prepare(receiver.url, 30);

      const client = createClient({
        url: `${subscriberHost.url.replace("http", "ws")}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { Authorization: ADMIN },
        retryAttempts: 0,
      });
      const events: { processingId: string; state: string; fileName: string; result: { matchedCount: number } | null }[] = [];
      const feed = client.iterate<any>({
        query: 'subscription { multimediaJobs(domain: "demo") { processingId state fileName result { matchedCount } } }',
      });
      const finished = (async () => {
        for await (const event of feed) {
          const job = event.data.multimediaJobs;
          events.push(job);
          if (job.state === "COMPLETE") return;
        }
      })();
      // the subscription is live once the server has acknowledged it: a first upload waits for that
      await new Promise((r) => setTimeout(r, 1000));
      const id = await uploadArchive(receiver.url, appId, await archive(30, 1024));
      await start({ WORKERS: "1" }); // a third process runs the job
      await finished;
      await feed.return?.();
      await client.dispose();
      expect(events.every((e) => e.processingId === id)).toBe(true);
      expect(events[0]).toMatchObject({ state: "QUEUED", fileName: "media.zip", result: null });
      expect(events.map((e) => e.state)).toContain("RUNNING");
      expect(events.at(-1)).toMatchObject({ state: "COMPLETE", result: { matchedCount: 30 } });
    },
  );
});
