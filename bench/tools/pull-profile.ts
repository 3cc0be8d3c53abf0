/**
 * A CPU profile of the case pull's pages alone: a throwaway PostgreSQL, our service (profiled:
 * BENCH_CPU_PROF must name a folder), 20,000 seeded cases, then `rounds` pulls at pages of 5,000
 * through one path (rest | graphql | floor), so that those pages fill the profile.
 *   BENCH_CPU_PROF=DIR npx tsx bench/tools/pull-profile.ts rest|graphql|floor [rounds]
 */
import { readFileSync } from "node:fs";
import { getJson, graphql, startCluster, startService } from "../lib/harness.ts";
import { seedCases } from "../lib/seed.ts";
import { clock } from "../lib/stats.ts";

const [path = "rest", roundsArg = "10"] = process.argv.slice(2);
const cluster = await startCluster();
const service = await startService("postgres", cluster.url);
try {
  await seedCases(service, 20_000);
  const { base, authorization, domain } = service.ready;
  const query = `query Pull($domain: String!, $after: String) {
  cases(domain: $domain, first: 5000, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { caseId caseType caseName externalId ownerId dateOpened lastModified serverLastModified indexedOn
            closed dateClosed properties indices { name caseId caseType relationship } }
  }
}`;
  const pull = async () => {
    if (path === "floor") return service.call("floorPull", 5000);
    if (path === "graphql") {
      let after: string | null = null;
      for (;;) {
        const page: any = (await graphql(`${base}/graphql`, query, { domain, after }, authorization)).cases;
        if (!page.pageInfo.hasNextPage) return;
        after = page.pageInfo.endCursor;
      }
    }
    let url: string | undefined = `${base}/a/${domain}/api/case/v2/?limit=5000`;
    while (url) url = (await getJson(url, authorization)).next;
  };
  // CPU of the server process and of PostgreSQL's backends (clock ticks of /proc/PID/stat): the
  // work a pull costs, which a loaded machine does not stretch as it stretches the time
  const backendTicks = async () => {
    const { rows } = await service.call<{ rows: { pid: number }[] }>("sql", "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'");
    const ticks = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
        ticks.set(pid, Number(fields[11]) + Number(fields[12]));
      } catch {
        // a backend that ended meanwhile
      }
    }
    return ticks;
  };
  let ticks0 = new Map<number, number>();
  const backendsMs = async (reset = false) => {
    const now = await backendTicks();
    if (reset) ticks0 = now;
    let total = 0;
    for (const [pid, t] of now) total += t - (ticks0.get(pid) ?? 0);
    return total * 10;
  };
  const serverMs = async () => {
    const { user, system } = await service.call<NodeJS.CpuUsage>("cpuUsage");
    return (user + system) / 1000;
  };
  await pull();
  const rounds = Number(roundsArg);
  const [server0, pg0] = [await serverMs(), await backendsMs(true)];
  const start = clock();
  for (let i = 0; i < rounds; i++) await pull();
  const wall = (clock() - start) / rounds;
  const [server, pg] = [((await serverMs()) - server0) / rounds, ((await backendsMs()) - pg0) / rounds];
  console.log(`${path}: per 20,000-case pull ${wall.toFixed(0)} ms, server CPU ${server.toFixed(0)} ms, PostgreSQL CPU ${pg.toFixed(0)} ms`);
} finally {
  await service.stop();
  cluster.stop();
}
