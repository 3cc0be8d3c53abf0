/**
 * GraphQL execution of one case pull page, alone: the real schema and `Query.cases` resolver over
 * synthetic cases (no database, no HTTP), executed and serialised as Apollo does, so that changes
 * to the execution path can be timed and profiled in one process (`node --cpu-prof`) on a loaded
 * machine. `npx tsx bench/tools/graphql-pull-exec.ts [rounds]` prints the median CPU and wall time per page,
 * executed compiled (graphql-jit, as HTTP requests are: src/graphql/compiled-execution.ts), or with
 * PULL_EXEC_INTERPRETED=1 through graphql-js (as WebSocket operations are).
 */
import { execute, parse, type ExecutionResult } from "graphql";
import { compileQuery, isCompiledQuery } from "graphql-jit";
import { ExecutionBudget } from "../../src/graphql/budget.ts";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";
import type { CaseRecord } from "../../src/cases/case.record.ts";

const PAGE = 5000;
const rounds = Number(process.argv[2] ?? 15);

const QUERY = parse(`query Pull($domain: String!, $after: String) {
  cases(domain: $domain, first: ${PAGE}, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { caseId caseType caseName externalId ownerId dateOpened lastModified serverLastModified indexedOn
            closed dateClosed properties indices { name caseId caseType relationship } }
  }
}`);

/** A deterministic UUID, so that two builds' answers can be compared byte for byte. */
const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;

function syntheticCase(i: number): CaseRecord {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000);
  return {
    id: uuid(i),
    domainName: "bench",
    caseType: "patient",
    caseName: `case ${i}`,
    externalId: i % 3 ? `ext-${i}` : null,
    ownerId: uuid(1_000_000 + (i % 40)),
    dateOpened: at,
    lastModified: at,
    serverLastModified: at,
    indexedOn: at,
    closed: i % 5 === 0,
    dateClosed: i % 5 === 0 ? at : null,
    properties: { village: `v${i % 50}`, age: String(i % 90), status: "ok", visits: String(i % 7) },
    indices: i % 2 ? [{ name: "parent", referencedId: uuid(2_000_000 + i), referencedType: "household", relationship: "child" }] : [],
  };
}

const rows = Array.from({ length: PAGE + 1 }, (_, i) => {
  const record = syntheticCase(i);
  return { record, key: { indexedOn: `${record.indexedOn.toISOString().slice(0, 23)}000Z`, caseId: record.id } };
});
const scope = { slice: async () => ({ read: rows, total: 20_000, outside: { beforeAfter: false, afterBefore: false } }) };
const schema = await buildGatewaySchema();

const compiled = (() => {
  const query = compileQuery(schema, QUERY);
  if (!isCompiledQuery(query)) throw new Error(JSON.stringify(query));
  return query;
})();
const variableValues = { domain: "bench", after: null };

async function page(): Promise<string> {
  const contextValue = {
    budget: new ExecutionBudget({ maxObjects: 1_000_000, maxMs: 60_000, maxBytes: 64 * 1024 * 1024 }),
    loaders: { cases: { reads: async () => scope } },
  };
  const result = process.env.PULL_EXEC_INTERPRETED
    ? await execute({ schema, document: QUERY, variableValues, contextValue })
    : ((await compiled.query(undefined, contextValue, variableValues)) as ExecutionResult);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return `${JSON.stringify(result)}\n`;
}

const first = await page();
if (process.env.PULL_EXEC_DUMP) (await import("node:fs")).writeFileSync(process.env.PULL_EXEC_DUMP, first);
// CPU time as well as wall time: on a shared, loaded machine the CPU time of this one process is the steadier figure
const wall: number[] = [];
const cpu: number[] = [];
for (let i = 0; i < rounds; i++) {
  const start = performance.now();
  const used = process.cpuUsage();
  await page();
  const { user, system } = process.cpuUsage(used);
  wall.push(performance.now() - start);
  cpu.push((user + system) / 1000);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(1);
const quarter = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 4)]!.toFixed(1);
console.log(`per page: CPU median ${median(cpu)} ms, lower quartile ${quarter(cpu)} ms; wall median ${median(wall)} ms (${rounds} rounds)`);
