/**
 * npm run soak [-- --seconds N] [-- --connections N] [-- --processes N] [-- --no-hostile]
 *
 * Soak test (issue #7 part 6): server processes on PostgreSQL under mixed reads and writes from
 * 32 autocannon clients on loopback for 60 s (SOAK_SECONDS or --seconds to change), then checks:
 *   1. zero 5xx — and no other failure either: every request gets a 2xx, none errors or times out;
 *   2. zero lost writes — every acknowledged case create (a unique external_id per request) is read
 *      back, through every process, with the case id it was acknowledged with;
 *   3. memory flat — each server's RSS is sampled every ~2 s, with its count of full (major)
 *      garbage collections from /metrics. The warm-up lasts the first third of the run, and longer
 *      for a process whose first full collection under load comes later: until then its heap is
 *      still growing to the size V8 settles on (a half-loaded process of `--processes 2` reaches it
 *      25-45 s in), which is not a leak. What follows is cut in two halves by time, and the mean
 *      of the later half must be within 15% of the earlier's (SOAK_RSS_TOLERANCE to change), for
 *      every process;
 *   4. beside that load, a hostile mix (bench/soak/soak-hostile.ts: fan-out GraphQL queries, deep JSON,
 *      bad logins, aborted uploads; `--no-hostile` to leave it out) is refused with 4xx only, and
 *      leaves nothing in the servers' temporary directory. It is aimed at the first process only.
 * Prints a summary and exits non-zero when a check fails.
 *
 * --processes N (SOAK_PROCESSES, default 1; issue #16): N server processes on the same database,
 * as a deployment behind a load balancer runs them: same DATABASE_URL, one shared DATA_DIR (on
 * PostgreSQL it holds only the temporary directory, whose entries name their process), the same
 * BOOTSTRAP_ADMIN, WORKERS=0. They start one after another, so that migrations and the admin are
 * in place before the next one starts. autocannon spreads the connections over them (connection i
 * goes to process i mod N); the summary gives the requests each one answered.
 *
 * The summary also gives requests/s (requests ÷ elapsed seconds of the load) and the CPU time, over
 * the load, of the servers, of the PostgreSQL cluster (the postmaster and every process under it)
 * and of this process (the load generator, and the hostile mix when it runs), each in cores and as
 * a share of all the machine's cores: on a small machine they compete for the same cores, and
 * that, more than any one of them, can bound the throughput. The machine's busy time beside them
 * (/proc/stat) shows what else took cores meanwhile (other work; interrupts charged to no process).
 *
 * PostgreSQL: a throwaway cluster (scripts/pg-cluster.sh) is started and removed, unless
 * DATABASE_URL is given; then the run writes a domain `soak-…` and a superuser `soak-…` into that
 * database (use a throwaway one), and the CPU time of PostgreSQL is not measured.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import autocannon from "autocannon";
import { leftBehind, prepareHostile, runHostile, type HostileReport } from "./soak-hostile.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

const USAGE = "usage: npm run soak [-- --seconds N] [-- --connections N] [-- --processes N] [-- --no-hostile]";
const { values: args } = parseArgs({
  options: {
    seconds: { type: "string" },
    connections: { type: "string" },
    processes: { type: "string" },
    "no-hostile": { type: "boolean" },
  },
  allowPositionals: true,
});
const SECONDS = Number(args.seconds ?? process.env.SOAK_SECONDS ?? 60);
const CONNECTIONS = Number(args.connections ?? process.env.SOAK_CONNECTIONS ?? 32);
const PROCESSES = Number(args.processes ?? process.env.SOAK_PROCESSES ?? 1);
const RSS_TOLERANCE = Number(process.env.SOAK_RSS_TOLERANCE ?? 0.15);
const HOSTILE = !args["no-hostile"];
if (!(SECONDS > 0) || !(CONNECTIONS > 0) || !Number.isInteger(PROCESSES) || PROCESSES < 1) {
  console.error(USAGE);
  process.exit(2);
}
if (CONNECTIONS % PROCESSES !== 0) {
  console.warn(`soak: ${CONNECTIONS} connections do not divide evenly over ${PROCESSES} processes`);
}

const cleanups: (() => Promise<void>)[] = [];
async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch((error: unknown) => console.error("cleanup:", error));
}
// `on`, not `once`: a second signal while cleaning up (a process group killed twice, Ctrl-C
// pressed again) must not end this process before the throwaway cluster is stopped.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void cleanup().finally(() => process.exit(130));
  });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A throwaway cluster: its URL, and the pid of its postmaster (for the CPU figures). */
async function throwawayPostgres(): Promise<{ url: string; postmaster: number }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "gateway-soak-pg-"));
  const script = path.join(ROOT, "scripts/pg-cluster.sh");
  cleanups.push(async () => {
    await run("bash", [script, "stop", dir]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });
  const { stdout } = await run("bash", [script, "start", dir, String(await freePort())]);
  // pg-cluster.sh keeps the cluster in DIR/data; postmaster.pid's first line is the postmaster's pid
  const postmaster = Number(readFileSync(path.join(dir, "data/postmaster.pid"), "utf8").split("\n")[0]);
  return { url: stdout.trim().split("\n").pop()!, postmaster };
}

type Server = { url: string; child: ChildProcess; output: () => string };

async function startServer(env: Record<string, string>): Promise<Server> {
  const child = spawn("sh", ["scripts/start.sh"], {
    cwd: ROOT,
    env: { ...process.env, NODE: process.execPath, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "error", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (c) => (output += c));
  child.stderr!.on("data", (c) => (output += c));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    child.stdout!.on("data", () => {
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited before starting:\n${output}`));
    });
  });
  return { url, child, output: () => output };
}

/**
 * The servers, one after another: the first applies the migrations and creates the admin, and the
 * others find both in place (a BOOTSTRAP_ADMIN already in place is left alone: admin.service.ts),
 * instead of racing for them. start.sh `exec`s node, so each child's pid is the server's.
 */
async function startServers(env: Record<string, string>): Promise<Server[]> {
  const servers: Server[] = [];
  for (let i = 0; i < PROCESSES; i++) servers.push(await startServer(env));
  return servers;
}

/** Resident set size of a process, in MiB (Linux /proc, else ps). */
async function rssMiB(pid: number): Promise<number> {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
  } catch {
    const { stdout } = await run("ps", ["-o", "rss=", "-p", String(pid)]);
    return Number(stdout.trim()) / 1024;
  }
}

/** What /proc/PID/stat says of one process: its parent and its CPU time, in clock ticks. */
type ProcTimes = { ppid: number; ticks: number };

function procTimes(pid: number): ProcTimes | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command (field 2) may hold spaces: split what follows its closing parenthesis, from
    // field 3 on: ppid is field 4, utime/stime 14/15 (all its threads), cutime/cstime 16/17
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // cutime/cstime: the children it has reaped, so that a PostgreSQL backend that ends during the
    // load still counts (its time moves to the postmaster's)
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined;
  }
}

function allProcTimes(): Map<number, ProcTimes> {
  const procs = new Map<number, ProcTimes>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const times = procTimes(Number(name));
    if (times) procs.set(Number(name), times);
  }
  return procs;
}

/** CPU ticks of `root` and of every process whose parent chain leads to it. */
function treeTicks(root: number, procs: Map<number, ProcTimes>): number {
  let ticks = 0;
  for (const [pid, times] of procs) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = procs.get(p)?.ppid) {
      if (p === root) {
        ticks += times.ticks;
        break;
      }
    }
  }
  return ticks;
}

/** Busy CPU ticks of the whole machine (/proc/stat: all but idle and iowait), to see what else ran. */
function machineBusyTicks(): number {
  const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return user! + nice! + system! + irq! + softirq! + (steal ?? 0);
}

type CpuSnapshot = { at: number; servers: number[]; postgres?: number; loadMicros: number; machine: number };

/** CPU time so far of each server, of the PostgreSQL cluster, and of this process (seconds). */
async function cpuSnapshot(servers: Server[], postmaster: number | undefined, clockTicks: number): Promise<CpuSnapshot> {
  const procs = allProcTimes();
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    servers: servers.map((s) => treeTicks(s.child.pid!, procs) / clockTicks),
    postgres: postmaster === undefined ? undefined : treeTicks(postmaster, procs) / clockTicks,
    loadMicros: usage.user + usage.system,
    machine: machineBusyTicks() / clockTicks,
  };
}

async function clockTicksPerSecond(): Promise<number> {
  const { stdout } = await run("getconf", ["CLK_TCK"]);
  return Number(stdout.trim()) || 100;
}

async function json(url: string, init: RequestInit & { auth: string }): Promise<any> {
  const res = await fetch(url, {
    ...init,
    headers: { "Content-Type": "application/json", Authorization: init.auth },
    signal: AbortSignal.timeout(60_000),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: number[]) => sum(xs) / Math.max(1, xs.length);

type Gql = (auth: string, query: string, variables?: unknown) => Promise<any>;
type Tenant = { tag: string; admin: string; auth: string; base: string; gql: Gql };

/** A domain, a member with an API key (cheap to check, unlike Basic's scrypt), and cases to read. */
async function prepareTenant(url: string, tag: string, adminPassword: string): Promise<Tenant> {
  const admin = `Basic ${Buffer.from(`${tag}:${adminPassword}`).toString("base64")}`;
  const gql: Gql = (auth, query, variables) => json(`${url}/graphql`, { method: "POST", auth, body: JSON.stringify({ query, variables }) });
  await gql(admin, "mutation ($d: String!) { createDomain(name: $d) { id } }", { d: tag });
  await gql(admin, "mutation ($i: CreateUserInput!) { createUser(input: $i) { id } }", {
    i: { username: `${tag}-w`, password: randomBytes(12).toString("hex"), domain: tag, permissions: ["ACCESS_API", "EDIT_DATA"] },
  });
  const key = (await gql(admin, "mutation ($u: String!) { createApiKey(username: $u) { key } }", { u: `${tag}-w` })).data.createApiKey.key;
  const auth = `ApiKey ${tag}-w:${key}`;
  const base = `/a/${tag}/api/case/v2/`;
  const seed = Array.from({ length: 100 }, (_, i) => ({
    create: true,
    case_type: "seed",
    case_name: `seed ${i}`,
    owner_id: "soak",
    external_id: `seed-${i}`,
    properties: { district: i % 2 ? "north" : "south" },
  }));
  await json(`${url}${base}`, { method: "POST", auth, body: JSON.stringify(seed) });
  return { tag, admin, auth, base, gql };
}

/** What the load's responses told: acknowledged creates, unexpected answers, answers per server. */
type LoadRecord = {
  acknowledged: Map<string, string>;
  unexpected: Map<string, number>;
  samples: string[];
  /** host:port → responses */
  perServer: Map<string, number>;
};

/**
 * The mix, per request: 40% create (unique external_id), 25% list, 15% read by external id (a
 * recent write of this connection, else a seed), 10% bulk-fetch, 10% GraphQL cases query.
 * Connection i goes to servers[i mod N] (autocannon with an array of URLs).
 */
function startLoad(servers: Server[], tenant: Tenant, record: LoadRecord) {
  const { auth, base, tag } = tenant;
  let seq = 0;
  const pick = (): string => {
    const r = Math.random();
    return r < 0.4 ? "create" : r < 0.65 ? "list" : r < 0.8 ? "ext" : r < 0.9 ? "bulk" : "graphql";
  };
  const HEADERS = { "content-type": "application/json", authorization: auth, "user-agent": "soak" };
  type Context = { kind?: string; externalId?: string; recent?: string[]; host?: string };
  const setupRequest = (original: any, context: Context) => {
    // autocannon writes Content-Length into the headers object it is given: a fresh one per
    // request, or a GET would inherit the last POST's length and hang waiting for a body.
    const req = { ...original, headers: { ...HEADERS } };
    const kind = pick();
    context.kind = kind;
    context.recent ??= [];
    // the connection's server (the request defaults autocannon made from its URL)
    context.host = original.host;
    if (kind === "create") {
      const externalId = `w-${seq++}-${randomBytes(3).toString("hex")}`;
      context.externalId = externalId;
      const body = { case_type: "visit", case_name: externalId, owner_id: "soak", external_id: externalId, properties: { n: String(seq) } };
      return { ...req, method: "POST", path: base, body: JSON.stringify(body) };
    }
    if (kind === "list") return { ...req, method: "GET", path: `${base}?limit=20&case_type=seed&properties.district=north`, body: undefined };
    if (kind === "ext") {
      const id = context.recent.length
        ? context.recent[Math.floor(Math.random() * context.recent.length)]
        : `seed-${Math.floor(Math.random() * 100)}`;
      return { ...req, method: "GET", path: `${base}ext/${encodeURIComponent(id)}/`, body: undefined };
    }
    if (kind === "bulk") {
      const ids = Array.from({ length: 10 }, () => `seed-${Math.floor(Math.random() * 100)}`);
      return { ...req, method: "POST", path: `${base}bulk-fetch/`, body: JSON.stringify({ external_ids: ids }) };
    }
    const query = `{ cases(domain: "${tag}", first: 10, filter: { caseType: ["seed"] }) { totalCount nodes { caseId caseName } } }`;
    return { ...req, method: "POST", path: "/graphql", body: JSON.stringify({ query }) };
  };
  const onResponse = (status: number, body: string, context: Context) => {
    record.perServer.set(context.host!, (record.perServer.get(context.host!) ?? 0) + 1);
    if (status < 200 || status >= 300 || (context.kind === "graphql" && body.includes('"errors"'))) {
      const k = `${context.kind} ${status}`;
      record.unexpected.set(k, (record.unexpected.get(k) ?? 0) + 1);
      if (record.samples.length < 5) record.samples.push(`${k} (${context.host}): ${body.slice(0, 200)}`);
      return;
    }
    if (context.kind === "create" && context.externalId) {
      record.acknowledged.set(context.externalId, JSON.parse(body).case.case_id);
      context.recent!.push(context.externalId);
      if (context.recent!.length > 20) context.recent!.shift();
    }
  };
  return autocannon({
    url: servers.map((s) => s.url),
    connections: CONNECTIONS,
    duration: SECONDS,
    timeout: 30,
    headers: { ...HEADERS },
    requests: [{ setupRequest, onResponse }],
  } as unknown as autocannon.Options);
}

type MemorySample = { t: number; mib: number; majorGcs: number | undefined };

/** Full collections so far, from the server's /metrics (prom-client's GC histogram), if it answers. */
async function majorGcs(url: string): Promise<number | undefined> {
  try {
    const token = process.env.METRICS_TOKEN;
    const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    const res = await fetch(`${url}/metrics`, { headers, signal: AbortSignal.timeout(5_000) });
    const m = /^nodejs_gc_duration_seconds_count\{kind="major"\} (\d+)$/m.exec(await res.text());
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** RSS and full collections of every server every ~2 s (more often on short runs, for enough samples). */
function sampleMemory(servers: Server[]): { everyMs: number; samples: MemorySample[][]; stop(): void } {
  const everyMs = Math.max(250, Math.min(2000, (SECONDS * 1000) / 30));
  const samples = servers.map(() => [] as MemorySample[]);
  const started = Date.now();
  const take = (s: Server, i: number) =>
    void Promise.all([rssMiB(s.child.pid!), majorGcs(s.url)]).then(([mib, gcs]) => samples[i]!.push({ t: Date.now() - started, mib, majorGcs: gcs }));
  servers.forEach(take);
  const timer = setInterval(() => servers.forEach(take), everyMs);
  return { everyMs, samples, stop: () => clearInterval(timer) };
}

/**
 * Memory of one server after its warm-up (the first third, or until its first full collection
 * under load when that comes later), cut in two halves by time.
 */
function memoryAfterWarmUp(all: MemorySample[]) {
  const samples = all.toSorted((a, b) => a.t - b.t);
  // the sample times at which the count of full collections had gone up since the sample before
  const fullGcs: number[] = [];
  let counted = samples[0]?.majorGcs;
  for (const s of samples) {
    if (s.majorGcs === undefined) continue;
    if (counted !== undefined && s.majorGcs > counted) fullGcs.push(s.t);
    counted = s.majorGcs;
  }
  const firstFullGc = fullGcs[0];
  const warmUp = Math.max((SECONDS * 1000) / 3, firstFullGc ?? 0);
  const settled = samples.filter((s) => s.t >= warmUp);
  const split = (warmUp + SECONDS * 1000) / 2;
  const earlier = settled.filter((s) => s.t < split).map((s) => s.mib);
  const later = settled.filter((s) => s.t >= split).map((s) => s.mib);
  const mibs = samples.map((s) => s.mib);
  return { fullGcs, firstFullGc, warmUp, earlier, later, growth: mean(later) / mean(earlier) - 1, min: Math.min(...mibs), max: Math.max(...mibs) };
}

/**
 * Lost writes: every acknowledged create read back by external id (bulk-fetch, 5000 at a time)
 * through every server, so that each process is seen to serve what any process acknowledged.
 */
async function readBack(servers: Server[], tenant: Tenant, acknowledged: Map<string, string>) {
  const ids = [...acknowledged.keys()];
  const perServer: { missing: number; mismatched: number }[] = [];
  for (const server of servers) {
    let missing = 0;
    let mismatched = 0;
    for (let i = 0; i < ids.length; i += 5000) {
      const chunk = JSON.stringify({ external_ids: ids.slice(i, i + 5000) });
      const body = await json(`${server.url}${tenant.base}bulk-fetch/`, { method: "POST", auth: tenant.auth, body: chunk });
      for (const c of body.cases as { case_id: string; external_id?: string; error?: string }[]) {
        if (c.error) missing += 1;
        else if (acknowledged.get(c.external_id!) !== c.case_id) mismatched += 1;
      }
    }
    perServer.push({ missing, mismatched });
  }
  return perServer;
}

/** CPU seconds between two snapshots, and cores used over `elapsed` seconds. */
function cpuSummary(start: CpuSnapshot, end: CpuSnapshot, elapsed: number): string {
  const cores = os.availableParallelism();
  const fmt = (label: string, seconds: number) =>
    `${label} ${seconds.toFixed(1)} s = ${(seconds / elapsed).toFixed(2)} cores (${((seconds / elapsed / cores) * 100).toFixed(0)}%)`;
  const servers = end.servers.map((s, i) => s - start.servers[i]!);
  const postgres = end.postgres === undefined ? undefined : end.postgres - start.postgres!;
  const load = (end.loadMicros - start.loadMicros) / 1e6;
  const machine = end.machine - start.machine;
  const parts = [fmt("servers", sum(servers))];
  if (servers.length > 1) parts.push(...servers.map((s, i) => fmt(`  #${i + 1}`, s)));
  parts.push(postgres === undefined ? "postgres not measured (DATABASE_URL given)" : fmt("postgres", postgres));
  parts.push(fmt("load generator", load), fmt("machine busy", machine));
  // whatever else ran meanwhile (another test suite, a build) took cores from the soak: a run to discard
  parts.push(fmt("rest of machine", machine - sum(servers) - (postgres ?? 0) - load));
  return `  CPU        over ${elapsed.toFixed(1)} s, of ${cores} cores × ${elapsed.toFixed(1)} s:\n             ${parts.join(",\n             ")}`;
}

async function main(): Promise<boolean> {
  const given = process.env.DATABASE_URL;
  const cluster = given ? undefined : await throwawayPostgres();
  const databaseUrl = given || cluster!.url;
  const tag = `soak-${randomBytes(4).toString("hex")}`;
  const adminPassword = randomBytes(12).toString("base64url");
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-soak-data-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const servers = await startServers({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    BOOTSTRAP_ADMIN: `${tag}:${adminPassword}`,
    WORKERS: "0",
    // the soak measures the service, not the per-user rate limit
    RATE_LIMIT_REQUESTS: "0",
  });
  const where = given ? "DATABASE_URL" : `a throwaway PostgreSQL cluster, ${databaseUrl} (postmaster pid ${cluster!.postmaster})`;
  for (const s of servers) console.log(`soak: server ${s.url} (pid ${s.child.pid}) on ${where}`);

  const tenant = await prepareTenant(servers[0]!.url, tag, adminPassword);
  const hostile = HOSTILE ? await startHostile(servers[0]!.url, tenant, dataDir) : undefined;
  const record: LoadRecord = { acknowledged: new Map(), unexpected: new Map(), samples: [], perServer: new Map() };
  const clockTicks = await clockTicksPerSecond();

  const cpuStart = await cpuSnapshot(servers, cluster?.postmaster, clockTicks);
  const sampler = sampleMemory(servers);
  const result = await startLoad(servers, tenant, record);
  const cpuEnd = await cpuSnapshot(servers, cluster?.postmaster, clockTicks);
  sampler.stop();
  const elapsed = (cpuEnd.at - cpuStart.at) / 1000;
  const attacks = await hostile?.stop();
  const leftovers = hostile ? await leftBehind(dataDir) : [];
  const readBacks = await readBack(servers, tenant, record.acknowledged);
  const memory = sampler.samples.map(memoryAfterWarmUp);

  const failures = judge(servers, result, record, readBacks, memory, attacks, leftovers);
  console.log(
    summary({ servers, result, record, elapsed, readBacks, cpu: cpuSummary(cpuStart, cpuEnd, elapsed), rss: sampler, memory, attacks, failures }),
  );
  return failures.length === 0;
}

/** What the run did and found, and PASSED or FAILED with the reasons. */
function summary(run: {
  servers: Server[];
  result: autocannon.Result;
  record: LoadRecord;
  elapsed: number;
  readBacks: { missing: number; mismatched: number }[];
  cpu: string;
  rss: ReturnType<typeof sampleMemory>;
  memory: ReturnType<typeof memoryAfterWarmUp>[];
  attacks: HostileReport | undefined;
  failures: string[];
}): string {
  const { servers, result, record, elapsed, readBacks, rss, memory, attacks, failures } = run;
  const lat = result.latency;
  const ids = record.acknowledged.size;
  return [
    `soak: ${SECONDS} s, ${CONNECTIONS} connections over ${servers.length} server process${servers.length > 1 ? "es" : ""} on one PostgreSQL, ` +
      `mixed 40% create / 25% list / 15% ext read / 10% bulk-fetch / 10% GraphQL${attacks ? "; hostile mix aimed at the first process" : ""}`,
    `  requests   ${result.requests.total} in ${elapsed.toFixed(1)} s = ${(result.requests.total / elapsed).toFixed(0)}/s, ` +
      `2xx ${result["2xx"]}, 4xx ${result["4xx"]}, 5xx ${result["5xx"]}, errors ${result.errors}, timeouts ${result.timeouts}`,
    ...(servers.length > 1
      ? [`  per server ${servers.map((s) => `${new URL(s.url).host} ${record.perServer.get(new URL(s.url).host) ?? 0}`).join(", ")}`]
      : []),
    `  latency    p50 ${lat.p50} ms, p99 ${lat.p99} ms, max ${lat.max} ms`,
    ...readBacks.map(
      (r, i) =>
        `  writes     ${ids} acknowledged; read back through #${i + 1}: ${ids - r.missing - r.mismatched} found, ${r.missing} missing, ${r.mismatched} mismatched`,
    ),
    run.cpu,
    ...memory.flatMap((m, i) => [
      `  RSS #${i + 1} (MiB) ${rss.samples[i]!.length} samples every ${rss.everyMs} ms: min ${m.min.toFixed(0)}, max ${m.max.toFixed(0)}; ` +
        `full GCs under load ${m.fullGcs.length ? `by ${m.fullGcs.map((t) => (t / 1000).toFixed(0)).join(", ")} s` : "none seen"}, warm-up ${(m.warmUp / 1000).toFixed(0)} s; ` +
        `after it, earlier-half mean ${mean(m.earlier).toFixed(1)}, later-half mean ${mean(m.later).toFixed(1)} ` +
        `(${m.growth >= 0 ? "+" : ""}${(m.growth * 100).toFixed(1)}%, limit +${RSS_TOLERANCE * 100}%)`,
      `  samples    ${rss.samples[i]!.map((s) => s.mib.toFixed(0)).join(" ")}`,
    ]),
    ...(attacks ? [hostileSummary(attacks)] : []),
    ...record.samples.map((s) => `  answer     ${s}`),
    failures.length
      ? `soak: FAILED\n  - ${failures.join("\n  - ")}`
      : `soak: PASSED (zero 5xx, zero lost writes, memory flat${attacks ? ", every hostile request refused, nothing left behind" : ""})`,
  ].join("\n");
}

/** The checks of the header comment; returns what failed. */
function judge(
  servers: Server[],
  result: autocannon.Result,
  record: LoadRecord,
  readBacks: { missing: number; mismatched: number }[],
  memory: ReturnType<typeof memoryAfterWarmUp>[],
  attacks: HostileReport | undefined,
  leftovers: string[],
): string[] {
  const failures: string[] = [];
  if (result["5xx"] > 0) failures.push(`${result["5xx"]} responses were 5xx`);
  if (result.non2xx > 0) failures.push(`${result.non2xx} responses were not 2xx`);
  if (result.errors > 0 || result.timeouts > 0) failures.push(`${result.errors} request errors, ${result.timeouts} timeouts`);
  if (record.unexpected.size > 0) failures.push(`unexpected answers: ${JSON.stringify(Object.fromEntries(record.unexpected))}`);
  readBacks.forEach((r, i) => {
    if (r.missing > 0 || r.mismatched > 0)
      failures.push(`lost writes through #${i + 1}: ${r.missing} acknowledged creates missing, ${r.mismatched} with another case id`);
  });
  if (record.acknowledged.size === 0) failures.push("no write was acknowledged");
  servers.forEach((s, i) => {
    const m = memory[i]!;
    if (servers.length > 1 && !record.perServer.get(new URL(s.url).host)) failures.push(`server #${i + 1} answered no request`);
    if (m.earlier.length < 3 || m.later.length < 3)
      failures.push(`too few RSS samples of #${i + 1} after its warm-up (${(m.warmUp / 1000).toFixed(0)} s) to judge memory: run longer (--seconds)`);
    else if (m.growth > RSS_TOLERANCE)
      failures.push(
        `memory of #${i + 1} grew ${(m.growth * 100).toFixed(1)}% (later half vs earlier half after warm-up; limit ${RSS_TOLERANCE * 100}%)`,
      );
    if (s.child.exitCode !== null) failures.push(`server #${i + 1} exited (${s.child.exitCode}):\n${s.output()}`);
  });
  if (attacks?.failures.length) failures.push(`hostile requests not refused with a 4xx:\n    ${attacks.failures.join("\n    ")}`);
  if (leftovers.length) failures.push(`left in the temporary directory: ${leftovers.join(", ")}`);
  return failures;
}

/** The attackers' user (edit_apps, for the uploads), their set-up, and a handle that stops them. */
async function startHostile(url: string, tenant: Tenant, dataDir: string): Promise<{ stop(): Promise<HostileReport> }> {
  const { tag, gql, admin } = tenant;
  await gql(admin, "mutation ($i: CreateUserInput!) { createUser(input: $i) { id } }", {
    i: { username: `${tag}-apps`, password: randomBytes(12).toString("hex"), domain: tag, permissions: ["EDIT_APPS"] },
  });
  const key = (await gql(admin, "mutation ($u: String!) { createApiKey(username: $u) { key } }", { u: `${tag}-apps` })).data.createApiKey.key;
  const target = { url, domain: tag, dataAuth: tenant.auth, appsAuth: `ApiKey ${tag}-apps:${key}`, dataDir };
  const prepared = await prepareHostile(target);
  const stopping = new AbortController();
  const running = runHostile(target, prepared, stopping.signal);
  return {
    stop() {
      stopping.abort();
      return running;
    },
  };
}

function hostileSummary(report: HostileReport): string {
  const sent = Object.entries(report.sent)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(", ");
  const answers = Object.entries(report.answers)
    .map(([key, n]) => `${key}: ${n}`)
    .join(", ");
  return `  hostile    (at #1) sent ${sent}; answers ${answers}`;
}

let ok = false;
try {
  ok = await main();
} catch (error) {
  console.error("soak: error:", error);
} finally {
  await cleanup();
}
process.exit(ok ? 0 : 1);
