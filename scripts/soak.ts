/**
 * npm run soak [-- --seconds N] [-- --connections N]
 *
 * Soak test (issue #7 part 6): a server process on PostgreSQL under mixed reads and writes from
 * 32 autocannon clients on loopback for 60 s (SOAK_SECONDS or --seconds to change), then checks:
 *   1. zero 5xx — and no other failure either: every request gets a 2xx, none errors or times out;
 *   2. zero lost writes — every acknowledged case create (a unique external_id per request) is read
 *      back with the case id it was acknowledged with;
 *   3. memory flat — the server's RSS is sampled every ~2 s; the run is cut in thirds by time (the
 *      first is warm-up) and the mean of the last third must be within 15% of the middle third's
 *      (SOAK_RSS_TOLERANCE to change);
 *   4. beside that load, a hostile mix (scripts/soak-hostile.ts: fan-out GraphQL queries, deep JSON,
 *      bad logins, aborted uploads; `--no-hostile` to leave it out) is refused with 4xx only, and
 *      leaves nothing in the server's temporary directory.
 * Prints a summary and exits non-zero when a check fails.
 *
 * PostgreSQL: a throwaway cluster (scripts/pg-cluster.sh) is started and removed, unless
 * DATABASE_URL is given; then the run writes a domain `soak-…` and a superuser `soak-…` into that
 * database (use a throwaway one).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import autocannon from "autocannon";
import { leftBehind, prepareHostile, runHostile, type HostileReport } from "./soak-hostile.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const run = promisify(execFile);

const { values: args } = parseArgs({
  options: { seconds: { type: "string" }, connections: { type: "string" }, "no-hostile": { type: "boolean" } },
  allowPositionals: true,
});
const SECONDS = Number(args.seconds ?? process.env.SOAK_SECONDS ?? 60);
const CONNECTIONS = Number(args.connections ?? process.env.SOAK_CONNECTIONS ?? 32);
const RSS_TOLERANCE = Number(process.env.SOAK_RSS_TOLERANCE ?? 0.15);
const HOSTILE = !args["no-hostile"];
if (!(SECONDS > 0) || !(CONNECTIONS > 0)) {
  console.error("usage: npm run soak [-- --seconds N] [-- --connections N]");
  process.exit(2);
}

const cleanups: (() => Promise<void>)[] = [];
async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch((error: unknown) => console.error("cleanup:", error));
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)));
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function throwawayPostgres(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "gateway-soak-pg-"));
  const script = path.join(ROOT, "scripts/pg-cluster.sh");
  cleanups.push(async () => {
    await run("bash", [script, "stop", dir]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });
  const { stdout } = await run("bash", [script, "start", dir, String(await freePort())]);
  return stdout.trim().split("\n").pop()!;
}

async function startServer(env: Record<string, string>): Promise<{ url: string; child: ChildProcess; output: () => string }> {
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

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function main(): Promise<boolean> {
  const given = process.env.DATABASE_URL;
  const databaseUrl = given || (await throwawayPostgres());
  const tag = `soak-${randomBytes(4).toString("hex")}`;
  const adminPassword = randomBytes(12).toString("base64url");
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-soak-data-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const server = await startServer({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    BOOTSTRAP_ADMIN: `${tag}:${adminPassword}`,
    WORKERS: "0",
    // the soak measures the service, not the per-user rate limit
    RATE_LIMIT_REQUESTS: "0",
  });
  console.log(`soak: server ${server.url} (pid ${server.child.pid}) on ${given ? "DATABASE_URL" : `a throwaway PostgreSQL cluster, ${databaseUrl}`}`);

  // A domain, a member with an API key (cheap to check, unlike Basic's scrypt), and cases to read.
  const admin = `Basic ${Buffer.from(`${tag}:${adminPassword}`).toString("base64")}`;
  const gql = (auth: string, query: string, variables?: unknown) =>
    json(`${server.url}/graphql`, { method: "POST", auth, body: JSON.stringify({ query, variables }) });
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
  await json(`${server.url}${base}`, { method: "POST", auth, body: JSON.stringify(seed) });
  const hostile = HOSTILE ? await startHostile(server.url, tag, gql, admin, auth, dataDir) : undefined;

  // The mix, per request: 40% create (unique external_id), 25% list, 15% read by external id (a
  // recent write of this connection, else a seed), 10% bulk-fetch, 10% GraphQL cases query.
  const acknowledged = new Map<string, string>();
  const unexpected = new Map<string, number>();
  const samples: string[] = [];
  let seq = 0;
  const pick = (): string => {
    const r = Math.random();
    return r < 0.4 ? "create" : r < 0.65 ? "list" : r < 0.8 ? "ext" : r < 0.9 ? "bulk" : "graphql";
  };
  const HEADERS = { "content-type": "application/json", authorization: auth, "user-agent": "soak" };
  type Context = { kind?: string; externalId?: string; recent?: string[] };
  const instance = autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: SECONDS,
    timeout: 30,
    headers: { ...HEADERS },
    requests: [
      {
        setupRequest: (original: any, context: Context) => {
          // autocannon writes Content-Length into the headers object it is given: a fresh one per
          // request, or a GET would inherit the last POST's length and hang waiting for a body.
          const req = { ...original, headers: { ...HEADERS } };
          const kind = pick();
          context.kind = kind;
          context.recent ??= [];
          if (kind === "create") {
            const externalId = `w-${seq++}-${randomBytes(3).toString("hex")}`;
            context.externalId = externalId;
            return {
              ...req,
              method: "POST",
              path: base,
              body: JSON.stringify({
                case_type: "visit",
                case_name: externalId,
                owner_id: "soak",
                external_id: externalId,
                properties: { n: String(seq) },
              }),
            };
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
          return {
            ...req,
            method: "POST",
            path: "/graphql",
            body: JSON.stringify({
              query: `{ cases(domain: "${tag}", first: 10, filter: { caseType: ["seed"] }) { totalCount nodes { caseId caseName } } }`,
            }),
          };
        },
        onResponse: (status: number, body: string, context: Context) => {
          if (status < 200 || status >= 300 || (context.kind === "graphql" && body.includes('"errors"'))) {
            const k = `${context.kind} ${status}`;
            unexpected.set(k, (unexpected.get(k) ?? 0) + 1);
            if (samples.length < 5) samples.push(`${k}: ${body.slice(0, 200)}`);
            return;
          }
          if (context.kind === "create" && context.externalId) {
            acknowledged.set(context.externalId, JSON.parse(body).case.case_id);
            context.recent!.push(context.externalId);
            if (context.recent!.length > 20) context.recent!.shift();
          }
        },
      },
    ],
  } as autocannon.Options);

  // RSS every ~2 s (more often on short runs, so that each third has samples).
  const everyMs = Math.max(250, Math.min(2000, (SECONDS * 1000) / 30));
  const rss: { t: number; mib: number }[] = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    void rssMiB(server.child.pid!).then((mib) => rss.push({ t: Date.now() - started, mib }));
  }, everyMs);
  const result = await instance;
  clearInterval(sampler);
  const attacks = await hostile?.stop();
  const leftovers = hostile ? await leftBehind(dataDir) : [];

  // Lost writes: read every acknowledged create back by external id (bulk-fetch, 5000 at a time).
  const ids = [...acknowledged.keys()];
  let missing = 0;
  let mismatched = 0;
  for (let i = 0; i < ids.length; i += 5000) {
    const chunk = ids.slice(i, i + 5000);
    const body = await json(`${server.url}${base}bulk-fetch/`, { method: "POST", auth, body: JSON.stringify({ external_ids: chunk }) });
    for (const c of body.cases as { case_id: string; external_id?: string; error?: string }[]) {
      if (c.error) missing += 1;
      else if (acknowledged.get(c.external_id!) !== c.case_id) mismatched += 1;
    }
  }

  // Memory: thirds by time; warm-up third ignored.
  const span = SECONDS * 1000;
  const middle = rss.filter((s) => s.t >= span / 3 && s.t < (2 * span) / 3).map((s) => s.mib);
  const last = rss.filter((s) => s.t >= (2 * span) / 3).map((s) => s.mib);
  const growth = mean(last) / mean(middle) - 1;

  const fivexx = result["5xx"];
  const failures: string[] = [];
  if (fivexx > 0) failures.push(`${fivexx} responses were 5xx`);
  if (result.non2xx > 0) failures.push(`${result.non2xx} responses were not 2xx`);
  if (result.errors > 0 || result.timeouts > 0) failures.push(`${result.errors} request errors, ${result.timeouts} timeouts`);
  if (unexpected.size > 0) failures.push(`unexpected answers: ${JSON.stringify(Object.fromEntries(unexpected))}`);
  if (missing > 0 || mismatched > 0) failures.push(`lost writes: ${missing} acknowledged creates missing, ${mismatched} with another case id`);
  if (acknowledged.size === 0) failures.push("no write was acknowledged");
  if (middle.length === 0 || last.length === 0) failures.push("too few RSS samples to judge memory");
  else if (growth > RSS_TOLERANCE)
    failures.push(`memory grew ${(growth * 100).toFixed(1)}% (last third vs middle third; limit ${RSS_TOLERANCE * 100}%)`);
  if (attacks?.failures.length) failures.push(`hostile requests not refused with a 4xx:\n    ${attacks.failures.join("\n    ")}`);
  if (leftovers.length) failures.push(`left in the temporary directory: ${leftovers.join(", ")}`);
  if (server.child.exitCode !== null) failures.push(`the server exited (${server.child.exitCode}):\n${server.output()}`);

  const lat = result.latency;
  console.log(
    [
      `soak: ${SECONDS} s, ${CONNECTIONS} connections, mixed 40% create / 25% list / 15% ext read / 10% bulk-fetch / 10% GraphQL`,
      `  requests   ${result.requests.total} (${result.requests.average.toFixed(0)}/s), 2xx ${result["2xx"]}, 4xx ${result["4xx"]}, 5xx ${fivexx}, errors ${result.errors}, timeouts ${result.timeouts}`,
      `  latency    p50 ${lat.p50} ms, p99 ${lat.p99} ms, max ${lat.max} ms`,
      `  writes     ${acknowledged.size} acknowledged, ${ids.length - missing - mismatched} read back, ${missing} missing, ${mismatched} mismatched`,
      `  RSS (MiB)  ${rss.length} samples every ${everyMs} ms: min ${Math.min(...rss.map((s) => s.mib)).toFixed(0)}, max ${Math.max(...rss.map((s) => s.mib)).toFixed(0)}, ` +
        `middle-third mean ${mean(middle).toFixed(1)}, last-third mean ${mean(last).toFixed(1)} (${growth >= 0 ? "+" : ""}${(growth * 100).toFixed(1)}%, limit +${RSS_TOLERANCE * 100}%)`,
      `  samples    ${rss.map((s) => s.mib.toFixed(0)).join(" ")}`,
      ...(attacks ? [hostileSummary(attacks)] : []),
      ...samples.map((s) => `  answer     ${s}`),
      failures.length
        ? `soak: FAILED\n  - ${failures.join("\n  - ")}`
        : `soak: PASSED (zero 5xx, zero lost writes, memory flat${attacks ? ", every hostile request refused, nothing left behind" : ""})`,
    ].join("\n"),
  );
  return failures.length === 0;
}

/** The attackers' user (edit_apps, for the uploads), their set-up, and a handle that stops them. */
async function startHostile(
  url: string,
  tag: string,
  gql: (auth: string, query: string, variables?: unknown) => Promise<any>,
  admin: string,
  dataAuth: string,
  dataDir: string,
): Promise<{ stop(): Promise<HostileReport> }> {
  await gql(admin, "mutation ($i: CreateUserInput!) { createUser(input: $i) { id } }", {
    i: { username: `${tag}-apps`, password: randomBytes(12).toString("hex"), domain: tag, permissions: ["EDIT_APPS"] },
  });
  const key = (await gql(admin, "mutation ($u: String!) { createApiKey(username: $u) { key } }", { u: `${tag}-apps` })).data.createApiKey.key;
  const target = { url, domain: tag, dataAuth, appsAuth: `ApiKey ${tag}-apps:${key}`, dataDir };
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
  return `  hostile    sent ${sent}; answers ${answers}`;
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
