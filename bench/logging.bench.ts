/**
 * Part `logging`: what logging at `info` (every request's line, as production logs) costs against
 * `LOG_LEVEL=silent`, for a small authenticated REST GET and a small GraphQL query. Two server
 * processes alike but for the level (fresh on PGlite; both on the run's database on PostgreSQL), the
 * lines of the `info` one read from its stderr pipe as a log shipper would; requests/s from
 * autocannon, the two servers alternated within each round. Target: `info` within 5 % of silent.
 */
import autocannon from "autocannon";
import { log, startService, table, type DbContext, type PartResult, type Service } from "./lib/harness.ts";
import { int, median, ratio } from "./lib/stats.ts";

const CONNECTIONS = 10;

interface Path {
  name: string;
  request: (service: Service) => { url: string; method: "GET" | "POST"; headers: Record<string, string>; body?: string };
}

const PATHS: Path[] = [
  {
    name: "REST `GET …/location_type/v1/` (API key)",
    request: ({ ready }) => ({
      url: `${ready.base}/a/${ready.domain}/api/location_type/v1/`,
      method: "GET",
      headers: { Authorization: ready.authorization, Accept: "application/json" },
    }),
  },
  {
    name: "GraphQL `{ me { username } }` (API key)",
    request: ({ ready }) => ({
      url: `${ready.base}/graphql`,
      method: "POST",
      headers: { Authorization: ready.authorization, "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ query: "{ me { username } }" }),
    }),
  },
];

/** Requests/s of `seconds` of load on one path of one server; any error or non-2xx fails the run. */
async function requestsPerSecond(service: Service, path: Path, seconds: number): Promise<number> {
  const result = await autocannon({ ...path.request(service), connections: CONNECTIONS, duration: seconds, timeout: 30 });
  if (result.errors || result.non2xx || result.timeouts) {
    throw new Error(`${path.name}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`);
  }
  return result.requests.total / result.duration;
}

/**
 * The two servers. On PostgreSQL both join the run's database, where the run's service made the
 * bench user: its key serves both.
 */
async function startPair(ctx: DbContext): Promise<{ info: Service; silent: Service; lines: () => number }> {
  const join = ctx.kind === "postgres";
  const withKey = (service: Service): Service =>
    join ? { ...service, ready: { ...service.ready, authorization: ctx.service.ready.authorization } } : service;
  const info = await startService(ctx.kind, ctx.databaseUrl, { join, logLevel: "info" });
  const silent = await startService(ctx.kind, ctx.databaseUrl, { join });
  let count = 0;
  info.process.stderr!.on("data", (chunk: Buffer) => {
    for (const byte of chunk) if (byte === 10) count++;
  });
  return { info: withKey(info), silent: withKey(silent), lines: () => count };
}

export async function logging(ctx: DbContext): Promise<PartResult> {
  const rounds = ctx.quick ? 1 : 5;
  const seconds = ctx.quick ? 3 : 5;
  const { info, silent, lines } = await startPair(ctx);
  const servers = { info, silent };
  const figures: Record<string, number> = {};
  const rows: (string | number)[][] = [];
  try {
    for (const [p, path] of PATHS.entries()) {
      // warm-up: the JIT and the caches of both, untimed
      for (const server of [servers.info, servers.silent]) await requestsPerSecond(server, path, 1);
      const measured = { info: [] as number[], silent: [] as number[] };
      const linesBefore = lines();
      let infoRequests = 0;
      for (let round = 0; round < rounds; round++) {
        // alternate which goes first, so that neither always runs on the warmer machine
        const order = round % 2 === 0 ? (["info", "silent"] as const) : (["silent", "info"] as const);
        for (const level of order) {
          const rps = await requestsPerSecond(servers[level], path, seconds);
          measured[level].push(rps);
          if (level === "info") infoRequests += rps * seconds;
        }
      }
      const [infoRps, silentRps] = [median(measured.info), median(measured.silent)];
      const timeRatio = silentRps / infoRps;
      figures[`logging${p}`] = timeRatio;
      rows.push([
        path.name,
        int(infoRps),
        int(silentRps),
        ratio(timeRatio),
        (lines() - linesBefore) / infoRequests >= 0.95 ? "one a request" : `${((lines() - linesBefore) / infoRequests).toFixed(2)} a request`,
        measured.info.map(int).join(" / "),
        measured.silent.map(int).join(" / "),
      ]);
      log(`${ctx.label}: logging ${path.name}: info ${int(infoRps)} req/s, silent ${int(silentRps)} req/s`);
    }
  } finally {
    await info.stop();
    await silent.stop();
  }
  return {
    markdown: [
      "### Logging: `LOG_LEVEL=info` against `silent`",
      "",
      `Two server processes alike but for the level; the \`info\` one's lines read from its stderr pipe. ${CONNECTIONS} connections (autocannon), ${rounds} round${rounds > 1 ? "s" : ""} of ${seconds} s per server and path, the two alternated; medians, then each round.`,
      "",
      table(["Request", "info (req/s)", "silent (req/s)", "Time ÷ silent", "Lines at info", "info, each round", "silent, each round"], rows),
    ].join("\n"),
    figures,
  };
}
