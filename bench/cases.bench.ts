/**
 * Case benchmark (npm run bench [-- --quick] [-- --postgres]): pulls every case through REST `next`
 * links at limit=5000, and writes 100-case bulk requests, each beside its floor measured in the same
 * run on the same database: the same keyset query through the bare driver, rows turned into the
 * same JSON; one multi-row INSERT per 100 cases. Results are appended to bench/RESULTS.md.
 */
import "reflect-metadata";
import { execFileSync } from "node:child_process";
import { appendFile, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { loadConfig } from "../src/config.ts";
import { pgliteDatabase, postgresDatabase, type Database } from "../src/db/client.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { setLogLevel } from "../src/log.ts";
import { buildServer } from "../src/server.ts";
import { createServices } from "../src/services.ts";
import { caseDate } from "../src/util/dates.ts";

const args = new Set(process.argv.slice(2));
const QUICK = args.has("--quick");
const POSTGRES = args.has("--postgres");
const CASES = QUICK ? 10_000 : 100_000;
const BULK_REQUESTS = QUICK ? 10 : 50;
const ROOT = path.resolve(import.meta.dirname, "..");

type Query = (sql: string, params?: unknown[]) => Promise<{ rows: Record<string, any>[] }>;

async function openBenchDatabase(): Promise<{ db: Database; query: Query; stop: () => Promise<void>; label: string }> {
  if (POSTGRES) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "bench-pg-"));
    const port = String(45000 + Math.floor(Math.random() * 10000));
    const url = execFileSync(path.join(ROOT, "scripts/pg-cluster.sh"), ["start", dir, port]).toString().trim();
    const db = postgresDatabase(url);
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    return {
      db,
      query: (sql, params) => pool.query(sql, params as unknown[]),
      label: "PostgreSQL 15",
      stop: async () => {
        await pool.end();
        await db.close();
        execFileSync(path.join(ROOT, "scripts/pg-cluster.sh"), ["stop", dir]);
      },
    };
  }
  const pglite = await PGlite.create();
  const db = pgliteDatabase(pglite);
  return {
    db,
    query: (sql, params) => pglite.query(sql, params as unknown[]) as Promise<{ rows: Record<string, any>[] }>,
    label: "PGlite (embedded)",
    stop: () => db.close(),
  };
}

const now = () => performance.now();

async function main() {
  setLogLevel("silent");
  const { db, query, stop, label } = await openBenchDatabase();
  await applyMigrations(db.adapterFactory);
  const services = await createServices(db, loadConfig({ LOG_LEVEL: "silent" }));
  const root = { userId: "", username: "bench", isSuperuser: true, scheme: "apikey" as const };
  const domain = await services.admin.createDomain(root, "bench");
  await services.admin.createUser(root, { username: "bench", password: "bench", domain: "bench", permissions: ["access_api", "edit_data"] });
  const { key } = await services.admin.createApiKey(root, "bench");
  const authorization = `ApiKey bench:${key}`;
  const server = await buildServer(services);
  const base = await server.listen(0, "127.0.0.1");

  // 10 properties each; a third of the cases have a parent index.
  const seedStart = now();
  await query(
    `INSERT INTO cases (id, domain_id, case_type, case_name, owner_id, external_id, date_opened, last_modified,
                        server_last_modified, indexed_on, properties)
     SELECT gen_random_uuid(), $1::uuid, 'patient', 'case ' || n, 'owner-' || (n % 50), 'ext-' || n, t, t, t, t,
            jsonb_build_object('p0', md5(n::text), 'p1', 'value ' || n, 'p2', (n % 97)::text, 'p3', 'district-' || (n % 13),
                               'p4', 'yes', 'p5', '2024-01-01', 'p6', repeat('x', 20), 'p7', (n * 7)::text,
                               'p8', 'lorem ipsum dolor', 'p9', md5((n * 3)::text))
     FROM generate_series(1, $2::int) AS n,
          LATERAL (SELECT timestamptz '2024-01-01' + n * interval '1 millisecond' AS t) AS times`,
    [domain.id, CASES],
  );
  await query(
    `INSERT INTO case_indices (case_id, name, domain_id, referenced_id, referenced_type, relationship)
     SELECT c.id, 'parent', c.domain_id, p.id, 'patient', 'child'
     FROM (SELECT id, domain_id, row_number() OVER (ORDER BY indexed_on, id) AS n FROM cases) c
     JOIN (SELECT id, row_number() OVER (ORDER BY indexed_on, id) AS n FROM cases) p ON p.n = c.n - 1
     WHERE c.n % 3 = 0`,
  );
  await query("ANALYZE");
  const seedMs = now() - seedStart;

  // --- pull through REST next links
  let pulled = 0;
  let url: string | undefined = `${base}/a/bench/api/case/v2/?limit=5000`;
  const restStart = now();
  while (url) {
    const res = await fetch(url, { headers: { Authorization: authorization } });
    const body = (await res.json()) as { cases: unknown[]; next?: string };
    pulled += body.cases.length;
    url = body.next;
  }
  const restMs = now() - restStart;
  if (pulled !== CASES) throw new Error(`REST pull returned ${pulled} cases, expected ${CASES}`);

  // --- the floor: the same keyset query through the bare driver, rows turned into the same JSON
  let floorRows = 0;
  let after: [string, string] | undefined;
  const floorStart = now();
  for (;;) {
    const { rows } = await query(
      `SELECT c.*, COALESCE((SELECT json_object_agg(ci.name, json_build_object('case_id', ci.referenced_id,
                'case_type', ci.referenced_type, 'relationship', ci.relationship)) FROM case_indices ci
                WHERE ci.case_id = c.id), '{}') AS idx
       FROM cases c WHERE c.domain_id = $1 ${after ? "AND (c.indexed_on, c.id) > ($2::timestamptz, $3::uuid)" : ""}
       ORDER BY c.indexed_on, c.id LIMIT 5001`,
      after ? [domain.id, ...after] : [domain.id],
    );
    const page = rows.slice(0, 5000);
    JSON.stringify({
      matching_records: page.length,
      cases: page.map((r) => ({
        domain: "bench", case_id: r.id, case_type: r.case_type, case_name: r.case_name, external_id: r.external_id,
        owner_id: r.owner_id, date_opened: caseDate(new Date(r.date_opened)), last_modified: caseDate(new Date(r.last_modified)),
        server_last_modified: caseDate(new Date(r.server_last_modified)), indexed_on: caseDate(new Date(r.indexed_on)),
        closed: r.closed, date_closed: r.date_closed, properties: r.properties, indices: r.idx,
      })),
    });
    floorRows += page.length;
    if (rows.length <= 5000) break;
    const last = page[page.length - 1];
    after = [new Date(last.indexed_on).toISOString(), last.id];
  }
  const floorMs = now() - floorStart;

  // --- 100-case bulk creates through REST, and the floor: one multi-row INSERT per 100
  const bulkBody = (r: number) =>
    JSON.stringify(Array.from({ length: 100 }, (_, i) => ({
      create: true, case_type: "visit", case_name: `bulk ${r}-${i}`, owner_id: "o", external_id: `b-${r}-${i}`,
      properties: Object.fromEntries(Array.from({ length: 10 }, (_, p) => [`p${p}`, `v${p}-${i}`])),
    })));
  const bulkStart = now();
  for (let r = 0; r < BULK_REQUESTS; r++) {
    const res = await fetch(`${base}/a/bench/api/case/v2/`, { method: "POST", headers: { Authorization: authorization, "Content-Type": "application/json" }, body: bulkBody(r) });
    if (res.status !== 200) throw new Error(`bulk write failed: ${res.status} ${await res.text()}`);
  }
  const bulkMs = now() - bulkStart;
  const insertStart = now();
  for (let r = 0; r < BULK_REQUESTS; r++) {
    const values: string[] = [];
    const params: unknown[] = [domain.id];
    for (let i = 0; i < 100; i++) {
      params.push(`floor ${r}-${i}`, JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, p) => [`p${p}`, `v${p}-${i}`]))));
      values.push(`(gen_random_uuid(), $1::uuid, 'visit', $${params.length - 1}, 'o', now(), now(), now(), now(), $${params.length}::jsonb)`);
    }
    await query(`INSERT INTO cases (id, domain_id, case_type, case_name, owner_id, date_opened, last_modified, server_last_modified, indexed_on, properties) VALUES ${values.join(",")}`, params);
  }
  const insertMs = now() - insertStart;

  await server.close();
  await stop();

  const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  const lines = [
    `## Cases — ${label}${QUICK ? " (quick)" : ""}`,
    "",
    `${new Date().toISOString().slice(0, 10)}, ${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}. Seeded ${CASES.toLocaleString("en")} cases in ${(seedMs / 1000).toFixed(1)} s.`,
    "",
    "| Measure | Ours | Floor | Ours ÷ floor (time) |",
    "|---|---|---|---|",
    `| Pull ${CASES.toLocaleString("en")} cases, limit=5000 (cases/s) | ${rate(CASES, restMs).toLocaleString("en")} | ${rate(floorRows, floorMs).toLocaleString("en")} | ${(restMs / floorMs).toFixed(2)} |`,
    `| ${BULK_REQUESTS} sequential 100-case bulk creates (cases/s) | ${rate(BULK_REQUESTS * 100, bulkMs).toLocaleString("en")} | ${rate(BULK_REQUESTS * 100, insertMs).toLocaleString("en")} | ${(bulkMs / insertMs).toFixed(2)} |`,
    "",
    "Floor: pull = the same keyset query through the bare driver, rows turned into the same JSON; bulk = one multi-row INSERT per 100 cases.",
    "",
  ];
  console.log(lines.join("\n"));
  await appendFile(path.join(ROOT, "bench", "RESULTS.md"), `${lines.join("\n")}\n`);
  process.exit(0);
}

await main();
