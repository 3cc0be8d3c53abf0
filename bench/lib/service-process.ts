/**
 * Child process: our service over one database (PGlite in memory, or the PostgreSQL at argv[3]),
 * served over HTTP on loopback, plus the floors, which run here too, on the same database through
 * the bare driver (pg, or PGlite's own query), so that they pay no more and no less than the service
 * does for being in this process.
 *   argv: pglite | postgres [url [join]]
 * `join`: a second process on a database another one seeded (the bench domain, user and key are
 * read, not created). BENCH_SERVICE_CONFIG (JSON) overrides the configuration the benchmark sets;
 * BENCH_WORKERS=1 starts the multimedia worker, as a production process does. BENCH_LOG_LEVEL sets
 * LOG_LEVEL (silent by default, so that no part pays for lines nobody reads; the logging part reads them).
 */
import "reflect-metadata";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { loadConfig } from "../../src/config.ts";
import { pgliteDatabase, postgresDatabase, type Database } from "../../src/db/client.ts";
import { applyMigrations } from "../../src/db/migrate.ts";
import { setLogLevel, type LogLevel } from "../../src/log.ts";
import { MULTIMEDIA_PROGRESS, type MultimediaStatus } from "../../src/multimedia/job.events.ts";
import type { Attempt } from "../../src/multimedia/job.attempt.ts";
import type { TaskAttempt } from "../../src/multimedia/job.queue.ts";
import { graphqlSubscriptionsActive } from "../../src/observability/metrics.ts";
import { buildServer } from "../../src/server.ts";
import { createServices } from "../../src/services.ts";
import { caseDate } from "../../src/util/dates.ts";
import { serveCalls } from "./rpc.ts";
import { clock, wallClock } from "./stats.ts";

export interface ServiceReady {
  base: string;
  authorization: string;
  domain: string;
  domainId: string;
}

type Query = (sql: string, params?: unknown[]) => Promise<{ rows: Record<string, any>[]; rowCount?: number | null; affectedRows?: number }>;

const [kind, url, mode] = process.argv.slice(2);
const joining = mode === "join";
const logLevel = (process.env.BENCH_LOG_LEVEL ?? "silent") as LogLevel;
setLogLevel(logLevel);
const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-service-"));

let db: Database;
let query: Query;
let pool: pg.Pool | undefined;
if (kind === "postgres") {
  db = postgresDatabase(url);
  pool = new pg.Pool({ connectionString: url, max: 8 });
  query = (sql, params) => pool!.query(sql, params as unknown[]);
} else {
  const pglite = await PGlite.create();
  db = pgliteDatabase(pglite);
  query = (sql, params) => pglite.query(sql, params as unknown[]) as ReturnType<Query>;
}
await applyMigrations(db.adapterFactory);
// Limits raised, nothing switched off: a page of 5,000 cases with every field costs about
// 100,000 in the GraphQL cost model (1 + first × fields), which the default limit (50,000) refuses;
// and the benchmark sends more requests per minute than the default rate limit allows (1,200), so
// the limiter still counts every request (its cost is measured) but never refuses one.
const services = await createServices(
  db,
  loadConfig({
    LOG_LEVEL: logLevel,
    DATA_DIR: dataDir,
    GRAPHQL_MAX_COST: "10000000",
    RATE_LIMIT_REQUESTS: "1000000000",
    // the subscriptions part times the fan-out of each progress write: no coalescing in between
    PROGRESS_EVENTS_PER_SECOND: "1000000",
    ...(JSON.parse(process.env.BENCH_SERVICE_CONFIG ?? "{}") as Record<string, string>),
  }),
);
const root = { userId: "", username: "bench", isSuperuser: true, scheme: "apikey" as const };
let domain: { id: string };
let key: string | undefined;
if (joining) {
  domain = await db.prisma.domain.findUniqueOrThrow({ where: { name: "bench" }, select: { id: true } });
} else {
  domain = await services.admin.createDomain(root, "bench");
  await services.admin.createUser(root, {
    username: "bench",
    password: "bench-password",
    domain: "bench",
    permissions: ["access_api", "edit_data", "edit_locations", "edit_apps"],
  });
  ({ key } = await services.admin.createApiKey(root, "bench"));
}
const server = await buildServer(services);
if (process.env.BENCH_WORKERS) await services.worker.start();

/**
 * When this process published each multimedia job event (wall clock), keyed by job, state,
 * attempt and progress: the feed part's emission time. Recorded around the PubSub the services
 * share, in this benchmark process only; nothing of it is in the server.
 */
const emissions: { key: string; at: number }[] = [];
const publish = services.pubsub.publish.bind(services.pubsub);
services.pubsub.publish = ((topic: string, ...args: unknown[]) => {
  if (topic === MULTIMEDIA_PROGRESS) {
    const status = args[1] as MultimediaStatus;
    emissions.push({ key: `${status.id} ${status.state} ${status.attempts} ${status.current}`, at: wallClock() });
  }
  return (publish as (topic: string, ...args: unknown[]) => void)(topic, ...args);
}) as typeof services.pubsub.publish;
const base = await server.listen(0, "127.0.0.1");

/**
 * The floor of a case pull: the service's keyset query through the driver, the page's indices in
 * one batched query, rows turned into the wire JSON (no count: that is the service's own cost).
 */
async function floorPull(pageSize: number, maxPages = Infinity): Promise<{ rows: number; ms: number; bytes: number }> {
  let rows = 0;
  let bytes = 0;
  let after: [string, string] | undefined;
  const start = clock();
  for (;;) {
    const result = await query(
      `SELECT c.id, c.case_type, c.case_name, c.external_id, c.owner_id, c.date_opened, c.last_modified,
              c.server_last_modified, c.indexed_on, c.closed, c.date_closed, c.properties,
              to_char(c.indexed_on AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key
       FROM cases c WHERE c.domain_id = $1 ${after ? "AND (c.indexed_on, c.id) > ($2::timestamptz, $3::uuid)" : ""}
       ORDER BY c.indexed_on, c.id LIMIT ${pageSize + 1}`,
      after ? [domain.id, ...after] : [domain.id],
    );
    const page = result.rows.slice(0, pageSize);
    const indices = await query(
      "SELECT case_id, name, referenced_id, referenced_type, relationship FROM case_indices WHERE case_id = ANY($1::uuid[])",
      [page.map((r) => r.id)],
    );
    const byCase = new Map<string, Record<string, { case_id: string; case_type: string; relationship: string }>>();
    for (const i of indices.rows) {
      const entry = byCase.get(i.case_id) ?? {};
      entry[i.name] = { case_id: i.referenced_id, case_type: i.referenced_type, relationship: i.relationship };
      byCase.set(i.case_id, entry);
    }
    const date = (d: Date | string | null) => (d === null ? null : caseDate(new Date(d)));
    bytes += JSON.stringify({
      matching_records: page.length,
      cases: page.map((r) => ({
        domain: "bench",
        case_id: r.id,
        case_type: r.case_type,
        case_name: r.case_name,
        external_id: r.external_id,
        owner_id: r.owner_id,
        date_opened: date(r.date_opened),
        last_modified: date(r.last_modified),
        server_last_modified: date(r.server_last_modified),
        indexed_on: date(r.indexed_on),
        closed: r.closed,
        date_closed: date(r.date_closed),
        properties: r.properties,
        indices: byCase.get(r.id) ?? {},
      })),
    }).length;
    rows += page.length;
    if (result.rows.length <= pageSize || --maxPages <= 0) break;
    const last = page[page.length - 1];
    after = [last.key, last.id];
  }
  return { rows, ms: clock() - start, bytes };
}

/** The floor of a bulk write: one multi-row INSERT through the driver per 100 cases. */
async function floorInserts(requests: number, concurrency: number, prefix: string): Promise<{ ms: number }> {
  let next = 0;
  const insert = async (r: number) => {
    const values: string[] = [];
    const params: unknown[] = [domain.id];
    for (let i = 0; i < 100; i++) {
      params.push(
        `floor ${prefix} ${r}-${i}`,
        `f-${prefix}-${r}-${i}`,
        JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, p) => [`p${p}`, `v${p}-${i}`]))),
      );
      const n = params.length;
      values.push(`(gen_random_uuid(), $1::uuid, 'visit', $${n - 2}, $${n - 1}, 'o', now(), now(), now(), now(), $${n}::jsonb)`);
    }
    await query(
      `INSERT INTO cases (id, domain_id, case_type, case_name, external_id, owner_id, date_opened, last_modified,
                          server_last_modified, indexed_on, properties) VALUES ${values.join(",")}`,
      params,
    );
  };
  const start = clock();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let r = next++; r < requests; r = next++) await insert(r);
    }),
  );
  return { ms: clock() - start };
}

let job: Attempt | undefined;

const handlers = {
  async sql(text: string, params?: unknown[]) {
    const result = await query(text, params);
    return { rows: result.rows.slice(0, 100), rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length };
  },
  floorPull,
  floorInserts,
  /** A running multimedia job (no archive: the benchmark writes its progress itself). */
  async createJob(total: number) {
    const appId = "b".repeat(32);
    await db.prisma.app.upsert({
      where: { id_domainId: { id: appId, domainId: domain.id } },
      create: { id: appId, domainId: domain.id, name: "bench", docType: "Application" },
      update: {},
    });
    const id = `dl-${Math.random().toString(16).slice(2).padEnd(32, "0").slice(0, 32)}`;
    await db.prisma.multimediaJob.create({
      data: { id, domainId: domain.id, appId, archiveKey: "none", total, status: "queued" },
    });
    // the attempt a worker would run (its start is one event, before any measurement drains them)
    job = (await services.jobAttempts.begin({ id: "bench", retryCount: 0, data: { processingId: id } } as TaskAttempt))!;
    return id;
  },
  /** One progress write (database row, then the event); the wall-clock time just before it. */
  async progress(current: number) {
    const at = performance.timeOrigin + performance.now();
    await job!.progress(current, job!.job.total);
    return at;
  },
  rss: () => process.memoryUsage().rss,
  /** Heap used and RSS after a full collection (the process runs with --expose-gc in the feed part). */
  memory() {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    const { heapUsed, heapTotal, external, rss } = process.memoryUsage();
    return { heapUsed, heapTotal, external, rss, collected: Boolean(gc) };
  },
  async subscriptionsActive() {
    return (await graphqlSubscriptionsActive.get()).values.reduce((sum, v) => sum + v.value, 0);
  },
  /** The job events published here since the last call. */
  emissions: () => emissions.splice(0),
  cpuUsage: () => process.cpuUsage(),
  /** LOG_LEVEL from now on, as the process's start sets it (the logging part switches it between rounds) */
  logLevel: (level: LogLevel) => setLogLevel(level),
};

serveCalls(
  { base, authorization: key ? `ApiKey bench:${key}` : "", domain: "bench", domainId: domain.id } satisfies ServiceReady,
  handlers,
  async () => {
    await server.close();
    await services.close();
    await pool?.end();
    await db.close();
    await rm(dataDir, { recursive: true, force: true });
  },
);
