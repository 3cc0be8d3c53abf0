/**
 * Part `logging`: what logging at `info` (every request's line, as production logs) costs against
 * `LOG_LEVEL=silent`, for a small authenticated REST GET and a small GraphQL query. Two server
 * processes alike but for the level (fresh on PGlite; both on the run's database on PostgreSQL), the
 * lines of the `info` one read from its stderr pipe as a log shipper would; requests/s from
 * autocannon, the two servers alternated within each round. Target: `info` within 5 % of silent.
 * Each round also reads the server's CPU time (user + system, from /proc) per request served: on a
 * machine others share, requests/s moves with their load by far more than 5 %, CPU time per
 * request hardly, so that is the figure that shows what a line costs.
 */
import { execFileSync, fork } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import autocannon from "autocannon";
import { log, startService, table, type DbContext, type PartResult, type Service } from "./lib/harness.ts";
import { int, median, ms, ratio } from "./lib/stats.ts";

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

/** Clock ticks a second of /proc's CPU times; none where there is no /proc (not Linux). */
const CLOCK_TICKS = existsSync("/proc/self/stat") ? Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" })) : undefined;

/** CPU seconds (user + system) process `pid` has used so far, NaN where /proc cannot tell. */
function cpuSeconds(pid: number | undefined): number {
  if (!CLOCK_TICKS || pid === undefined) return NaN;
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // the fields after the command's name (in parentheses) begin at the third: utime is the 14th, stime the 15th
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

interface Round {
  rps: number;
  requests: number;
  /** the server's CPU milliseconds per request served */
  cpuMs: number;
}

/** `seconds` of load on one path of one server; any error or non-2xx fails the run. */
async function loadRound(service: Service, path: Path, seconds: number): Promise<Round> {
  const cpuBefore = cpuSeconds(service.process.pid);
  const result = await autocannon({ ...path.request(service), connections: CONNECTIONS, duration: seconds, timeout: 30 });
  const cpu = cpuSeconds(service.process.pid) - cpuBefore;
  if (result.errors || result.non2xx || result.timeouts) {
    throw new Error(`${path.name}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`);
  }
  return { rps: result.requests.total / result.duration, requests: result.requests.total, cpuMs: (cpu * 1000) / result.requests.total };
}

/**
 * CPU µs the logger alone spends on one request's line (bench/lib/log-line.ts, in a child whose
 * stderr is a pipe read here, as the servers' are).
 */
async function lineCost(lines: number): Promise<{ usPerLine: number }> {
  const child = fork(new URL("./lib/log-line.ts", import.meta.url).pathname, [String(lines)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "pipe", "ipc"],
  });
  child.stderr!.resume();
  const [reply] = await Promise.all([
    new Promise<{ usPerLine: number }>((resolve, reject) => {
      child.once("message", (message) => resolve(message as { usPerLine: number }));
      child.once("exit", (code) => reject(new Error(`log-line.ts exited with code ${code}`)));
    }),
    new Promise((resolve) => child.once("exit", resolve)),
  ]);
  return reply;
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
      for (const server of [servers.info, servers.silent]) await loadRound(server, path, 1);
      const measured = { info: [] as Round[], silent: [] as Round[] };
      const linesBefore = lines();
      for (let round = 0; round < rounds; round++) {
        // alternate which goes first, so that neither always runs on the warmer machine
        const order = round % 2 === 0 ? (["info", "silent"] as const) : (["silent", "info"] as const);
        for (const level of order) measured[level].push(await loadRound(servers[level], path, seconds));
      }
      const of = (level: "info" | "silent", key: "rps" | "cpuMs") => median(measured[level].map((round) => round[key]));
      const [infoRps, silentRps] = [of("info", "rps"), of("silent", "rps")];
      const infoRequests = measured.info.reduce((sum, round) => sum + round.requests, 0);
      const timeRatio = silentRps / infoRps;
      const cpuRatio = of("info", "cpuMs") / of("silent", "cpuMs");
      figures[`logging${p}`] = timeRatio;
      figures[`loggingCpu${p}`] = cpuRatio;
      figures[`loggingSilentCpuMs${p}`] = of("silent", "cpuMs");
      const perRequest = (lines() - linesBefore) / infoRequests;
      rows.push([
        path.name,
        int(infoRps),
        int(silentRps),
        ratio(timeRatio),
        `${ms(of("info", "cpuMs"))} / ${ms(of("silent", "cpuMs"))}`,
        ratio(cpuRatio),
        perRequest >= 0.95 ? "one a request" : `${perRequest.toFixed(2)} a request`,
        measured.info.map((round) => int(round.rps)).join(" / "),
        measured.silent.map((round) => int(round.rps)).join(" / "),
      ]);
      log(
        `${ctx.label}: logging ${path.name}: info ${int(infoRps)} req/s, silent ${int(silentRps)} req/s; CPU ms a request ${ms(of("info", "cpuMs"))} / ${ms(of("silent", "cpuMs"))}`,
      );
    }
  } finally {
    await info.stop();
    await silent.stop();
  }
  const { usPerLine } = await lineCost(ctx.quick ? 5_000 : 20_000);
  figures.loggingLineUs = usPerLine;
  const lineShare = rows.map((row, p) => `${row[0]}: ${((100 * usPerLine) / (1000 * figures[`loggingSilentCpuMs${p}`]!)).toFixed(1)} %`);
  log(`${ctx.label}: logging: one request line costs the logger ${usPerLine.toFixed(1)} µs of CPU`);
  return {
    markdown: [
      "### Logging: `LOG_LEVEL=info` against `silent`",
      "",
      `Two server processes alike but for the level; the \`info\` one's lines read from its stderr pipe. ${CONNECTIONS} connections (autocannon), ${rounds} round${rounds > 1 ? "s" : ""} of ${seconds} s per server and path, the two alternated; medians, then each round. The server's CPU time (user + system) per request served is the figure a shared machine's load hardly moves.`,
      "",
      table(
        [
          "Request",
          "info (req/s)",
          "silent (req/s)",
          "Time ÷ silent",
          "Server CPU ms a request (info / silent)",
          "CPU ÷ silent",
          "Lines at info",
          "info, each round",
          "silent, each round",
        ],
        rows,
      ),
      "",
      `The logger alone, one request's line written to a pipe (CPU, at \`info\` less at \`silent\`, in a process of its own): ${usPerLine.toFixed(1)} µs, against the silent server's CPU a request: ${lineShare.join("; ")}.`,
    ].join("\n"),
    figures,
  };
}
