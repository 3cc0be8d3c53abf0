/**
 * The filtered list of the benchmark (bench/case-filter.bench.ts) in each `cases(orderBy)`, measured
 * in the case repository itself, without HTTP: `npx tsx bench/tools/explain-orders.ts [cases]`
 * (default 1,000,000). Starts a throwaway PostgreSQL 15 cluster (or uses `DATABASE_URL`, seeding a
 * `bench-orders` domain there only when it has fewer cases), seeds it as the benchmark does, then
 * for each order prints the median time of a first page (count remembered, as a repeated request
 * finds it), and the page statement's EXPLAIN ANALYZE: the index it scans, its rows and buffers.
 * What an order's index costs or saves shows here before a full benchmark run.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { CaseRepository } from "../../src/cases/case.repository.ts";
import { checkFilter, ORDER_FIELDS, type CaseOrder } from "../../src/cases/case.query.ts";
import { postgresDatabase } from "../../src/db/client.ts";
import { migrateToCurrent } from "../../src/db/migration-gate.ts";
import { Prisma } from "../../src/generated/prisma/client.ts";
import { SEED_CASES_SQL, SEED_INDICES_SQL } from "../lib/seed.ts";
import { clock, median } from "../lib/stats.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CASES = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = 11;
const DOMAIN = "bench-orders";

async function freePort(): Promise<string> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(String(port)));
    });
  });
}

let stopCluster = () => {};
let url = process.env.DATABASE_URL;
if (!url) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "explain-orders-"));
  url = execFileSync(path.join(ROOT, "scripts/pg-cluster.sh"), ["start", dir, await freePort()], { encoding: "utf8" }).trim();
  stopCluster = () => execFileSync(path.join(ROOT, "scripts/pg-cluster.sh"), ["stop", dir]);
}
const db = postgresDatabase(url);
try {
  await migrateToCurrent(db);
  const domain = (await db.prisma.domain.findUnique({ where: { name: DOMAIN } })) ?? (await db.prisma.domain.create({ data: { name: DOMAIN } }));
  const [{ count }] = await db.prisma.$queryRawUnsafe<{ count: bigint }[]>(
    "SELECT count(*) AS count FROM cases WHERE domain_id = $1::uuid",
    domain.id,
  );
  if (Number(count) < CASES) {
    const start = clock();
    await db.prisma.$executeRawUnsafe(SEED_CASES_SQL, domain.id, CASES - Number(count), Number(count));
    await db.prisma.$executeRawUnsafe(SEED_INDICES_SQL, domain.id, Number(count));
    await db.prisma.$executeRawUnsafe("VACUUM ANALYZE cases, case_indices");
    console.log(`seeded ${CASES.toLocaleString("en")} cases in ${((clock() - start) / 1000).toFixed(0)} s`);
  }
  // the benchmark's filter: patients of district-5 modified after the first tenth
  const since = new Date(Date.UTC(2024, 0, 1) + Math.floor(CASES / 10)).toISOString();
  const filter = checkFilter({
    exact: { case_type: ["patient"] },
    properties: new Map([["p3", ["district-5"]]]),
    indices: new Map(),
    ranges: [{ field: "last_modified", op: "gte", values: [since] }],
  });
  const scope = { id: domain.id, name: DOMAIN };
  console.log("order | median ms (page, count remembered) | index | rows scanned | buffers | execution ms");
  for (const field of ORDER_FIELDS) {
    for (const direction of ["asc", "desc"] as const) {
      const order: CaseOrder = { field, direction };
      let page: Prisma.Sql | undefined;
      const repository = new CaseRepository({
        $queryRaw: (strings: TemplateStringsArray, ...values: unknown[]) => {
          const statement = Prisma.sql(strings, ...(values as Prisma.Sql[]));
          if (/ORDER BY/.test(statement.sql)) page ??= statement;
          return db.prisma.$queryRaw(statement);
        },
      } as unknown as ConstructorParameters<typeof CaseRepository>[0]);
      const slice = { order, size: 100, backward: false };
      await repository.slice(scope, filter, slice);
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const start = clock();
        await repository.slice(scope, filter, slice);
        times.push(clock() - start);
      }
      const [row] = await db.prisma.$queryRaw<{ "QUERY PLAN": unknown }[]>(Prisma.sql`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${page!}`);
      const [{ Plan: plan, "Execution Time": executionMs }] = row!["QUERY PLAN"] as { Plan: PlanNode; "Execution Time": number }[];
      const scans = nodes(plan).filter((n) => n["Relation Name"] === "cases");
      const index = scans.map((n) => n["Index Name"] ?? n["Node Type"]).join(" + ");
      const scanned = scans.reduce((sum, n) => sum + (n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0), 0);
      const buffers = (plan["Shared Hit Blocks"] ?? 0) + (plan["Shared Read Blocks"] ?? 0);
      console.log(`${field} ${direction} | ${median(times).toFixed(1)} | ${index} | ${scanned} | ${buffers} | ${executionMs.toFixed(1)}`);
    }
  }
  const sizes = await db.prisma.$queryRawUnsafe<{ name: string; mb: number }[]>(
    "SELECT indexrelname AS name, round(pg_relation_size(indexrelid) / 1048576.0)::int AS mb FROM pg_stat_user_indexes WHERE relname = 'cases' ORDER BY 1",
  );
  console.log(`indexes of cases (MB): ${sizes.map((s) => `${s.name} ${s.mb}`).join(", ")}`);
} finally {
  await db.close();
  stopCluster();
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Rows Removed by Filter"?: number;
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}
