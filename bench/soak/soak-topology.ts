/**
 * npx tsx bench/soak/soak-topology.ts [--seconds N] [--lanes N] [--subscribers N]
 *
 * The topology soak (CONTRACT §7.6): the same hostile mix, for N seconds each (default 60,
 * SOAK_SECONDS), first against one server process on PostgreSQL with today's defaults (the
 * baseline: PostgreSQL bus, media in the database, its own worker), then against the scale-out
 * topology of test/helpers/topology.ts (two API processes with WORKERS=0 and one worker, over one
 * PostgreSQL database, an S3 bucket on s3rver and a Redis), both on one throwaway PostgreSQL
 * cluster (scripts/pg-cluster.sh), in the same run so that the ratios compare like with like.
 *
 * The mix: `--lanes` (default 8) concurrent writers, each living cases one after another (created,
 * updated, updated, closed; REST and GraphQL in turn), with an invalid request (a create without
 * case_type, an update of an unknown case, a GraphQL create without caseType, malformed JSON, a
 * non-ZIP upload) in about one request of eight; a ZIP upload every 2 s; `--subscribers` (default 4)
 * dashboards (graphql-ws, `caseChanged` and `multimediaJobs`) on the process that takes no writes
 * (in the topology; on the one process in the baseline); and, midway, a large upload whose worker
 * is killed with SIGKILL while it runs (in the topology: a new worker is started at once and takes
 * the job over once the lease, JOB_LEASE_SECONDS=10, has run out).
 *
 * It fails (exit 1) unless: no answer is a 5xx and every invalid request a 4xx; every write
 * answered 2xx is in the database (its form, and each case's last acknowledged state) and reached
 * every dashboard exactly once; every upload completed with every entry matched, its COMPLETE event
 * once at every dashboard; and in the topology every medium is in the bucket, none in the
 * database's blob tables or under a DATA_DIR, no archive left. It prints requests/s, write
 * latency and event delivery (a write's request sent → its event at a dashboard) p50/p99 for both,
 * with the topology's ratios to the baseline. s3rver and the dashboards run in this process beside
 * the load generator.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startPgCluster, startServer, type ServerProcess } from "../../test/helpers/process.ts";
import { pgBouncerUnavailable } from "../../test/helpers/pgbouncer.ts";
import { redisUnavailable } from "../../test/helpers/redis.ts";
import {
  call,
  caseWrites,
  graphql,
  mediaArchive,
  mediaPlaces,
  prepareDomain,
  queryDatabase,
  startTopology,
  subscribeDashboard,
  TOPOLOGY_DOMAIN,
  until,
  upload,
  uploadStatus,
  whenLive,
  type Answer,
  type CaseWrite,
  type Dashboard,
  type Topology,
} from "../../test/helpers/topology.ts";
import { int, ms, percentile, ratio } from "../lib/stats.ts";

const { values: args } = parseArgs({
  options: { seconds: { type: "string" }, lanes: { type: "string" }, subscribers: { type: "string" } },
});
const SECONDS = Number(args.seconds ?? process.env.SOAK_SECONDS ?? 60);
const LANES = Number(args.lanes ?? 8);
const SUBSCRIBERS = Number(args.subscribers ?? 4);
const SMALL_ENTRIES = 20;
const BIG_ENTRIES = 300;
const LEASE_SECONDS = 10;
/** counted, never refused: the counters' path (Redis in the topology) is exercised */
const COMMON_ENV = { RATE_LIMIT_REQUESTS: "100000000", LOG_LEVEL: "warn" };

/** One deployment under the mix: where writes go, where dashboards listen, and what it can do. */
interface Deployment {
  name: string;
  writer: string;
  subscriberHost: string;
  directUrl: string;
  processes(): ServerProcess[];
  /** kill -9 of the process that runs jobs, and what replaces it; undefined: nothing to kill */
  killWorker?(): Promise<void>;
  /** problems with where the media went (topology only) */
  checkMedia?(): Promise<string[]>;
  close(): Promise<void>;
}

interface Acked extends CaseWrite {
  sentAt: number;
  answeredAt: number;
}

interface LoadRecord {
  requests: number;
  statuses: Map<number, number>;
  problems: string[];
  writes: Acked[];
  /** each case's last acknowledged state; `uncertain` once a write to it was neither answered 2xx nor refused 4xx */
  cases: Map<string, { step: string; closed: boolean; uncertain: boolean }>;
  uploads: { id: string; entries: number }[];
}

interface Figures {
  name: string;
  seconds: number;
  requests: number;
  writes: number;
  uploads: number;
  requestsPerSecond: number;
  writeP50: number;
  writeP99: number;
  deliveryP50: number;
  deliveryP99: number;
  deliveries: number;
  problems: string[];
}

const pause = (msec: number) => new Promise((resolve) => setTimeout(resolve, msec));

function count(record: LoadRecord, answer: Answer): Answer {
  record.requests += 1;
  record.statuses.set(answer.status, (record.statuses.get(answer.status) ?? 0) + 1);
  if (answer.status >= 500 && record.problems.length < 50) record.problems.push(`${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer;
}

/** The invalid requests, in turn: each must be refused with a 4xx (a GraphQL error not INTERNAL_SERVER_ERROR). */
async function invalidRequest(url: string, auth: string, appId: string, turn: number): Promise<Answer> {
  const cases = `/a/${TOPOLOGY_DOMAIN}/api/case/v2/`;
  const json = { "Content-Type": "application/json" };
  switch (turn % 5) {
    case 0:
      return call(url, cases, auth, { method: "POST", headers: json, body: JSON.stringify({ case_name: "no type", owner_id: "o" }) });
    case 1:
      return call(url, `${cases}${randomUUID()}`, auth, { method: "PUT", headers: json, body: JSON.stringify({ properties: { step: "x" } }) });
    case 2:
      return graphql(url, auth, `mutation { createCase(domain: "${TOPOLOGY_DOMAIN}", input: { caseName: "no type", ownerId: "o" }) { xformId } }`);
    case 3:
      return call(url, cases, auth, { method: "POST", headers: json, body: '{"case_type": "visit",' });
    default:
      return upload(url, auth, appId, Buffer.from("not a zip archive at all"));
  }
}

function refusedProperly(answer: Answer): boolean {
  if (answer.status >= 400 && answer.status < 500) return true;
  const errors = answer.status === 200 ? answer.body?.errors : undefined;
  return Array.isArray(errors) && errors.length > 0 && errors.every((e: any) => e.extensions?.code !== "INTERNAL_SERVER_ERROR");
}

/** One writer: cases lived one after another (create, two updates, close), an invalid request now and then. */
async function writerLane(lane: number, deployment: Deployment, auth: string, appId: string, record: LoadRecord, deadline: number): Promise<void> {
  let current: string | undefined;
  let steps = 0;
  let turn = lane;
  for (let n = 0; performance.now() < deadline; n++) {
    if (Math.random() < 0.125) {
      const answer = count(record, await invalidRequest(deployment.writer, auth, appId, turn++));
      if (!refusedProperly(answer))
        record.problems.push(`invalid request ${turn - 1} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
      continue;
    }
    const rest = (lane + n) % 2 === 0;
    const sentAt = performance.now();
    const step = String(steps + 1);
    let result: [CaseWrite | undefined, Answer];
    try {
      if (!current)
        result = await (rest ? caseWrites.restCreate : caseWrites.graphqlCreate)(
          deployment.writer,
          auth,
          `l${lane}-${n}-${randomUUID().slice(0, 8)}`,
          step,
        );
      else result = await (rest ? caseWrites.restUpdate : caseWrites.graphqlUpdate)(deployment.writer, auth, current, step, steps === 3);
    } catch (error) {
      record.problems.push(`write failed: ${(error as Error).message}`);
      if (current) record.cases.get(current)!.uncertain = true;
      current = undefined;
      steps = 0;
      continue;
    }
    const [write, answer] = result;
    count(record, answer);
    if (!write) {
      record.problems.push(`write refused: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      if (current) record.cases.get(current)!.uncertain = true;
      current = undefined;
      steps = 0;
      continue;
    }
    record.writes.push({ ...write, sentAt, answeredAt: performance.now() });
    const closing = current !== undefined && steps === 3;
    record.cases.set(write.caseId, { step, closed: closing, uncertain: false });
    current = closing ? undefined : write.caseId;
    steps = closing ? 0 : steps + 1;
  }
}

async function uploadLane(deployment: Deployment, auth: string, appId: string, record: LoadRecord, deadline: number, name: string): Promise<void> {
  for (let n = 0; performance.now() < deadline; n++) {
    const answer = count(record, await upload(deployment.writer, auth, appId, await mediaArchive(SMALL_ENTRIES, 8 * 1024, `${name}-small-${n}`)));
    if (answer.status === 200) record.uploads.push({ id: answer.body.processing_id, entries: SMALL_ENTRIES });
    else record.problems.push(`upload refused: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
    await pause(Math.min(2000, Math.max(0, deadline - performance.now())));
  }
}

/** Midway: a large upload, and its worker killed (kill -9) while it runs. */
async function killLane(deployment: Deployment, auth: string, appId: string, record: LoadRecord, start: number, name: string): Promise<void> {
  await pause(Math.max(0, start + SECONDS * 400 - performance.now()));
  const answer = count(record, await upload(deployment.writer, auth, appId, await mediaArchive(BIG_ENTRIES, 64 * 1024, `${name}-big`)));
  if (answer.status !== 200) {
    record.problems.push(`big upload refused: ${answer.status}`);
    return;
  }
  const id = answer.body.processing_id as string;
  record.uploads.push({ id, entries: BIG_ENTRIES });
  if (!deployment.killWorker) return;
  const running = await until(
    async () => {
      const status = await uploadStatus(deployment.writer, auth, appId, id);
      return status.body.complete || status.body.progress?.current > 5 ? status : undefined;
    },
    120_000,
    "the big job under way",
  );
  if (running.body.complete) record.problems.push("the big job completed before its worker could be killed");
  else await deployment.killWorker();
}

function deliveries(record: LoadRecord, dashboards: Dashboard[]): { latencies: number[]; problems: string[] } {
  const latencies: number[] = [];
  const problems: string[] = [];
  dashboards.forEach((dashboard, d) => {
    const seen = new Map<string, number[]>();
    for (const event of dashboard.cases) seen.set(event.formId, [...(seen.get(event.formId) ?? []), event.at]);
    let missing = 0;
    let duplicated = 0;
    for (const write of record.writes) {
      const arrivals = seen.get(write.formId);
      if (!arrivals) missing += 1;
      else {
        if (arrivals.length > 1) duplicated += 1;
        latencies.push(arrivals[0]! - write.sentAt);
      }
    }
    if (missing) problems.push(`dashboard ${d}: ${missing} of ${record.writes.length} acknowledged writes never arrived`);
    if (duplicated) problems.push(`dashboard ${d}: ${duplicated} writes arrived more than once`);
    if (dashboard.errors.length) problems.push(`dashboard ${d}: subscription errors ${JSON.stringify(dashboard.errors).slice(0, 300)}`);
    for (const { id, entries } of record.uploads) {
      const complete = dashboard.jobs.filter((e) => e.processingId === id && e.state === "COMPLETE");
      if (complete.length !== 1 || complete[0]!.matchedCount !== entries)
        problems.push(`dashboard ${d}: upload ${id}: ${complete.length} COMPLETE events (${JSON.stringify(complete.map((e) => e.matchedCount))})`);
    }
  });
  return { latencies, problems };
}

/** Every acknowledged write in the database: its form, and each case's last acknowledged state. */
async function checkDatabase(deployment: Deployment, record: LoadRecord): Promise<string[]> {
  const problems: string[] = [];
  const formIds = record.writes.map((w) => w.formId);
  const [forms] = await queryDatabase<{ n: string }>(deployment.directUrl, "SELECT count(*) AS n FROM forms WHERE id = ANY($1::uuid[])", [formIds]);
  if (Number(forms!.n) !== formIds.length) problems.push(`${formIds.length - Number(forms!.n)} acknowledged writes' forms missing from the database`);
  const caseIds = [...record.cases.keys()];
  const rows = await queryDatabase<{ id: string; closed: boolean; step: string }>(
    deployment.directUrl,
    "SELECT id, closed, properties->>'step' AS step FROM cases WHERE id = ANY($1::uuid[])",
    [caseIds],
  );
  const found = new Map(rows.map((row) => [row.id, row]));
  let wrong = 0;
  for (const [id, expected] of record.cases) {
    if (expected.uncertain) continue;
    const row = found.get(id);
    if (!row || row.step !== expected.step || row.closed !== expected.closed) wrong += 1;
  }
  if (wrong) problems.push(`${wrong} of ${caseIds.length} cases not in their last acknowledged state`);
  return problems;
}

async function checkUploads(deployment: Deployment, auth: string, appId: string, record: LoadRecord): Promise<string[]> {
  const problems: string[] = [];
  for (const { id, entries } of record.uploads) {
    const done = await until(
      async () => {
        const status = await uploadStatus(deployment.writer, auth, appId, id);
        return status.body.complete ? status : undefined;
      },
      180_000,
      `upload ${id}`,
    ).catch((error: Error) => ({ status: 0, body: { error: error.message } }));
    if (done.body.matched_count !== entries) problems.push(`upload ${id}: ${JSON.stringify(done.body).slice(0, 300)}`);
  }
  return problems;
}

async function soak(deployment: Deployment): Promise<Figures> {
  console.log(`\n== ${deployment.name}: ${SECONDS} s, ${LANES} writers, ${SUBSCRIBERS} dashboards`);
  const { auth, appId } = await prepareDomain(deployment.writer, BIG_ENTRIES);
  const dashboards = Array.from({ length: SUBSCRIBERS }, () => subscribeDashboard(deployment.subscriberHost));
  try {
    for (const dashboard of dashboards) await whenLive(dashboard, deployment.writer, auth);
    await pause(1000);
    for (const dashboard of dashboards) {
      dashboard.cases.splice(0);
      dashboard.jobs.splice(0);
    }
    const record: LoadRecord = { requests: 0, statuses: new Map(), problems: [], writes: [], cases: new Map(), uploads: [] };
    const start = performance.now();
    const deadline = start + SECONDS * 1000;
    // the kill lane may outlast the load (a new worker starting): the load's time ends with the load's lanes
    const kill = killLane(deployment, auth, appId, record, start, deployment.name);
    await Promise.all([
      ...Array.from({ length: LANES }, (_, lane) => writerLane(lane, deployment, auth, appId, record, deadline)),
      uploadLane(deployment, auth, appId, record, deadline, deployment.name),
    ]);
    const seconds = (performance.now() - start) / 1000;
    await kill;
    console.log(
      `   load done: ${int(record.requests)} requests, ${int(record.writes.length)} writes, ${record.uploads.length} uploads; waiting for jobs and events`,
    );
    const problems = [...record.problems];
    problems.push(...(await checkUploads(deployment, auth, appId, record)));
    await until(
      async () => (dashboards.every((d) => d.cases.length >= record.writes.length) ? true : undefined),
      60_000,
      "every event at every dashboard",
    ).catch(() => {});
    await pause(2000); // the last COMPLETE events, and any duplicate
    const delivered = deliveries(record, dashboards);
    problems.push(...delivered.problems, ...(await checkDatabase(deployment, record)));
    if (deployment.checkMedia) problems.push(...(await deployment.checkMedia()));
    for (const server of deployment.processes())
      if (/"statusCode":5\d\d/.test(server.output())) problems.push(`a process logged a 5xx: ${server.logFile}`);
    const writeLatencies = record.writes.map((w) => w.answeredAt - w.sentAt);
    return {
      name: deployment.name,
      seconds,
      requests: record.requests,
      writes: record.writes.length,
      uploads: record.uploads.length,
      requestsPerSecond: record.requests / seconds,
      writeP50: percentile(writeLatencies, 50),
      writeP99: percentile(writeLatencies, 99),
      deliveryP50: percentile(delivered.latencies, 50),
      deliveryP99: percentile(delivered.latencies, 99),
      deliveries: delivered.latencies.length,
      problems,
    };
  } finally {
    for (const dashboard of dashboards) await dashboard.dispose();
  }
}

async function createDatabase(server: string, name: string): Promise<string> {
  await queryDatabase(server, `CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

async function singleProcess(directUrl: string): Promise<Deployment> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-soak-single-"));
  const server = await startServer({ ...COMMON_ENV, DATABASE_URL: directUrl, DATA_DIR: dataDir, BOOTSTRAP_ADMIN: "admin:admin-pass" }, 120_000);
  return {
    name: "one process (PostgreSQL, defaults)",
    writer: server.url,
    subscriberHost: server.url,
    directUrl,
    processes: () => [server],
    async close() {
      await server.stop("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function topologyDeployment(directUrl: string): Promise<Deployment> {
  const topology: Topology = await startTopology(directUrl, { ...COMMON_ENV, JOB_LEASE_SECONDS: String(LEASE_SECONDS) });
  const processes = [...topology.api, topology.worker];
  return {
    name: "topology (2 API + 1 worker, PgBouncer, S3, Redis)",
    writer: topology.api[1].url,
    subscriberHost: topology.api[0].url,
    directUrl,
    processes: () => processes,
    async killWorker() {
      await topology.worker.stop("SIGKILL");
      console.log("   worker killed (SIGKILL) mid-job; starting a new one");
      processes.push(await topology.startWorker());
    },
    async checkMedia() {
      const places = await mediaPlaces(topology);
      const [files] = await queryDatabase<{ n: string }>(directUrl, "SELECT count(*) AS n FROM multimedia_files");
      const problems: string[] = [];
      if (places.mediaKeys.length !== Number(files!.n))
        problems.push(`${places.mediaKeys.length} media in the bucket, ${files!.n} in multimedia_files`);
      if (places.archiveKeys.length) problems.push(`${places.archiveKeys.length} archives left in the bucket`);
      if (places.blobRows || places.chunkRows || places.localBlobFiles)
        problems.push(
          `media outside the bucket: ${places.blobRows} blobs rows, ${places.chunkRows} blob_chunks rows, ${places.localBlobFiles} files under DATA_DIR/blobs`,
        );
      return problems;
    },
    close: () => topology.close(),
  };
}

function report(figures: Figures[]): void {
  const [single, topology] = figures;
  console.log("\n| | requests | requests/s | writes | uploads | write p50 / p99 (ms) | delivery p50 / p99 (ms) | deliveries |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const f of figures)
    console.log(
      `| ${f.name} | ${int(f.requests)} | ${int(f.requestsPerSecond)} | ${int(f.writes)} | ${f.uploads} | ${ms(f.writeP50)} / ${ms(f.writeP99)} | ${ms(f.deliveryP50)} / ${ms(f.deliveryP99)} | ${int(f.deliveries)} |`,
    );
  if (single && topology)
    console.log(
      `| topology ÷ one process | | ${ratio(topology.requestsPerSecond / single.requestsPerSecond)} | | | ${ratio(topology.writeP50 / single.writeP50)} / ${ratio(topology.writeP99 / single.writeP99)} | ${ratio(topology.deliveryP50 / single.deliveryP50)} / ${ratio(topology.deliveryP99 / single.deliveryP99)} | |`,
    );
  console.log(
    `\nmachine: ${os.cpus()[0]?.model} × ${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; ${new Date().toISOString()}`,
  );
  for (const f of figures) {
    if (f.problems.length) console.log(`\nFAIL ${f.name}:\n  ${f.problems.slice(0, 30).join("\n  ")}`);
    else console.log(`\nPASS ${f.name}: no 5xx, every invalid request refused, zero lost writes, every event once, every upload complete`);
  }
}

/** What Ctrl-C must still stop: the cluster (pg_ctl runs it apart from this process) and the deployment's processes. */
const onInterrupt: (() => Promise<unknown>)[] = [];
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    // the load's requests now fail as the processes go: only the cleanup matters
    process.on("uncaughtException", () => {});
    process.on("unhandledRejection", () => {});
    void Promise.allSettled(onInterrupt.map((stop) => stop())).finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  const missing = redisUnavailable() ?? pgBouncerUnavailable();
  if (missing) {
    console.error(`soak-topology: ${missing}`);
    return 2;
  }
  const cluster = await startPgCluster();
  onInterrupt.push(() => cluster.remove());
  const figures: Figures[] = [];
  try {
    for (const [name, deploy] of [
      ["soak_single", singleProcess],
      ["soak_topology", topologyDeployment],
    ] as const) {
      const deployment = await deploy(await createDatabase(cluster.url, name));
      onInterrupt.unshift(() => deployment.close());
      try {
        figures.push(await soak(deployment));
      } finally {
        await deployment.close();
      }
    }
  } finally {
    await cluster.remove();
  }
  report(figures);
  return figures.every((f) => f.problems.length === 0) ? 0 : 1;
}

process.exitCode = await main();
