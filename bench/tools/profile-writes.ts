/**
 * Profiling aid for bulk writes (not part of `npm run bench`): our service in this process, on
 * PGlite or a throwaway PostgreSQL (--postgres), timing 100-case bulk creates and upserts through
 * the service call (no HTTP) and through HTTP. Run under `node --cpu-prof` to see where time goes:
 *   node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/tools/profile-writes.ts --postgres
 * Flags: --postgres, --rounds=N, --statements (PostgreSQL: every statement of one HTTP create and one
 * HTTP upsert with its server-side duration, from the server log), --events-off (the same requests
 * with caseChanged publishing stubbed). Ends with the floor: one multi-row INSERT per 100 cases.
 */
import "reflect-metadata";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { parseWriteBody } from "../../src/cases/case.payload.rest.ts";
import { loadConfig } from "../../src/config.ts";
import { pgliteDatabase, postgresDatabase } from "../../src/db/client.ts";
import { applyMigrations } from "../../src/db/migrate.ts";
import { setLogLevel } from "../../src/log.ts";
import { buildServer } from "../../src/server.ts";
import { createServices } from "../../src/services.ts";
import { startCluster } from "../lib/harness.ts";

const postgres = process.argv.includes("--postgres");
const rounds = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 40);
setLogLevel("silent");
const cluster = postgres ? await startCluster() : undefined;
const db = cluster ? postgresDatabase(cluster.url) : pgliteDatabase(await PGlite.create());
await applyMigrations(db.adapterFactory);
const dataDir = await mkdtemp(path.join(os.tmpdir(), "bench-profile-"));
const services = await createServices(db, loadConfig({ LOG_LEVEL: "silent", DATA_DIR: dataDir }));
const root = { userId: "", username: "bench", isSuperuser: true, scheme: "apikey" as const };
const domain = await services.admin.createDomain(root, "bench");
const user = await services.admin.createUser(root, {
  username: "bench",
  password: "bench-password",
  domain: "bench",
  permissions: ["access_api", "edit_data"],
});
const { key } = await services.admin.createApiKey(root, "bench");
const principal = { userId: (user as { id: string }).id, username: "bench", isSuperuser: false, scheme: "apikey" as const };
const server = await buildServer(services);
const base = await server.listen(0, "127.0.0.1");

const items = (set: string, r: number, create: boolean) =>
  Array.from({ length: 100 }, (_, i) => ({
    ...(create ? { create: true } : {}),
    case_type: "visit",
    case_name: `c ${set} ${r}-${i}`,
    owner_id: "o",
    external_id: `${set}-${r}-${i}`,
    properties: Object.fromEntries(Array.from({ length: 10 }, (_, p) => [`p${p}`, `v${p}-${i}-${create}`])),
  }));
/**
 * CPU seconds spent so far by this process and by every process of the PostgreSQL cluster (the
 * postmaster's children, from /proc): on a shared machine CPU per request moves far less with the
 * load than the time does.
 */
const [{ data_directory: dataDirectory }] = cluster
  ? await db.prisma.$queryRawUnsafe<{ data_directory: string }[]>("SHOW data_directory")
  : [{ data_directory: "" }];
const { readFileSync, readdirSync } = await import("node:fs");
const ticks = (stat: string) => {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(fields[1]), cpu: Number(fields[11]) + Number(fields[12]) };
};
const postgresCpuMs = () => {
  if (!cluster) return 0;
  const postmaster = Number(readFileSync(path.join(dataDirectory, "postmaster.pid"), "utf8").split("\n")[0]);
  let total = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const t = ticks(readFileSync(`/proc/${pid}/stat`, "utf8"));
      if (t.ppid === postmaster || Number(pid) === postmaster) total += t.cpu;
    } catch {
      // the process ended meanwhile
    }
  }
  return total * 10; // clock ticks of 10 ms
};
const nodeCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const time = async (name: string, fn: (r: number) => Promise<unknown>) => {
  await fn(-1);
  const cpuBefore = { node: nodeCpuMs(), postgres: postgresCpuMs() };
  const start = performance.now();
  const each: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    await fn(r);
    each.push(performance.now() - t);
  }
  each.sort((a, b) => a - b);
  // on a shared machine the mean follows the load; the median and the fastest quarter less so
  const quartile = each[Math.floor(rounds / 4)].toFixed(2);
  const cpu = `CPU: node ${((nodeCpuMs() - cpuBefore.node) / rounds).toFixed(2)}, postgres ${((postgresCpuMs() - cpuBefore.postgres) / rounds).toFixed(2)} ms`;
  console.log(
    `${name}: ${((performance.now() - start) / rounds).toFixed(2)} ms per 100 cases (median ${each[Math.floor(rounds / 2)].toFixed(2)}, first quartile ${quartile}; ${cpu})`,
  );
};
const writes = await services.caseWrites.in(principal, "bench");
/** the service call REST makes for a POST of a list: the body's rules, then the write */
const serviceWrite = (body: unknown[]) => writes.write(parseWriteBody(body, { kind: "create" }).actions, { deviceId: "profile", bulk: true });
if (cluster && process.argv.includes("--statements")) {
  // every statement of one HTTP create and one HTTP upsert, from the server's log
  const [setting] = await db.prisma.$queryRawUnsafe<{ data_directory: string }[]>("SHOW data_directory");
  const logFile = path.join(path.dirname(setting.data_directory), "log");
  const { readFile } = await import("node:fs/promises");
  const show = async (name: string, fn: () => Promise<unknown>) => {
    await db.prisma.$executeRawUnsafe("ALTER SYSTEM SET log_min_duration_statement = 0");
    await db.prisma.$queryRawUnsafe("SELECT pg_reload_conf()");
    await new Promise((r) => setTimeout(r, 300));
    const before = (await readFile(logFile, "utf8")).length;
    await fn();
    await db.prisma.$executeRawUnsafe("ALTER SYSTEM RESET log_min_duration_statement");
    await db.prisma.$queryRawUnsafe("SELECT pg_reload_conf()");
    const lines = (await readFile(logFile, "utf8"))
      .slice(before)
      .split("\n")
      .filter((l) => /LOG: {2}duration/.test(l));
    console.log(`--- ${name}: ${lines.length} statements`);
    for (const l of lines)
      console.log(
        l
          .replace(/^.*?LOG:\s+/, "")
          .replace(/\s+/g, " ")
          .slice(0, 160),
      );
  };
  const http1 = (body: unknown) =>
    fetch(`${base}/a/bench/api/case/v2/`, {
      method: "POST",
      headers: { Authorization: `ApiKey bench:${key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }).then((res) => res.text());
  await show("HTTP create", () => http1(items("log", 0, true)));
  await show("HTTP upsert", () => http1(items("log", 0, false)));
}
await time("service create", (r) => serviceWrite(items("s", r, true)));
await time("service upsert", (r) => serviceWrite(items("s", r, false)));
const http = (body: unknown) =>
  fetch(`${base}/a/bench/api/case/v2/`, {
    method: "POST",
    headers: { Authorization: `ApiKey bench:${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }).then(async (res) => {
    if (res.status !== 200) throw new Error(await res.text());
    return res.text();
  });
await time("HTTP create", (r) => http(items("h", r, true)));
await time("HTTP upsert", (r) => http(items("h", r, false)));
if (process.argv.includes("--events-off")) {
  // the same requests with event publishing stubbed, to see what the caseChanged events cost
  const publish = services.pubsub.publish;
  services.pubsub.publish = (() => {}) as typeof publish;
  await time("HTTP create, events off", (r) => http(items("n", r, true)));
  await time("HTTP upsert, events off", (r) => http(items("n", r, false)));
  services.pubsub.publish = publish;
  await time("HTTP create, events on again", (r) => http(items("m", r, true)));
}
const pool = cluster ? new pg.Pool({ connectionString: cluster.url, max: 1 }) : undefined;
const query = (text: string, params: unknown[]) => (pool ? pool.query(text, params) : db.pglite!.query(text, params));
await time("floor (one multi-row INSERT)", async (r) => {
  const values: string[] = [];
  const params: unknown[] = [domain.id];
  for (let i = 0; i < 100; i++) {
    params.push(`floor ${r}-${i}`, JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, p) => [`p${p}`, `v${p}-${i}`]))));
    values.push(`(gen_random_uuid(), $1::uuid, 'visit', $${params.length - 1}, 'o', now(), now(), now(), now(), $${params.length}::jsonb)`);
  }
  await query(
    `INSERT INTO cases (id, domain_id, case_type, case_name, owner_id, date_opened, last_modified, server_last_modified, indexed_on, properties) VALUES ${values.join(",")}`,
    params,
  );
});
await pool?.end();
await server.close();
await services.close();
await db.close();
cluster?.stop();
await rm(dataDir, { recursive: true, force: true });
process.exit(0);
