/**
 * Part `logging`: what logging at `info` (every request's line, as production logs) costs against
 * `LOG_LEVEL=silent`, for a small authenticated REST GET and a small GraphQL query. Two server
 * processes alike (fresh on PGlite; both on the run's database on PostgreSQL), each with its stderr
 * on a pipe that `wc -l` reads, a process of its own as a log shipper is (read in this process, the
 * lines would take their reading from the load generator, autocannon, that loads the server at
 * `info`). The level is the process's LOG_LEVEL, switched between rounds: in each round one server
 * is at `info` and the other at `silent`, and the next round swaps them, so that each level runs on
 * both processes alike (two processes differ in CPU per request by more than 5 % on a shared
 * machine, whatever they log). Target: `info` within 5 % of silent in requests/s. Each round also
 * reads the server's CPU time (user + system, from /proc) per request served, and that of the
 * reader of its lines.
 */
import { execFileSync, fork, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { Writable } from "node:stream";
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
  /** the CPU microseconds per request of the process reading the server's stderr */
  readerUs: number;
}

/** `wc -l` reading a server's stderr: the lines it counted, once the server has exited. */
interface Reader {
  pipe: Writable;
  pid: number | undefined;
  lines: Promise<number>;
}

function startReader(): Reader {
  const wc = spawn("wc", ["-l"], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  wc.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const lines = new Promise<number>((resolve, reject) => {
    wc.once("error", reject);
    wc.once("exit", () => resolve(Number(out.trim())));
  });
  return { pipe: wc.stdin, pid: wc.pid, lines };
}

interface Server {
  service: Service;
  reader: Reader;
}

/** `seconds` of load on one path of one server; any error or non-2xx fails the run. */
async function loadRound({ service, reader }: Server, path: Path, seconds: number): Promise<Round> {
  const [cpuBefore, readerBefore] = [cpuSeconds(service.process.pid), cpuSeconds(reader.pid)];
  const result = await autocannon({ ...path.request(service), connections: CONNECTIONS, duration: seconds, timeout: 30 });
  const [cpu, readerCpu] = [cpuSeconds(service.process.pid) - cpuBefore, cpuSeconds(reader.pid) - readerBefore];
  if (result.errors || result.non2xx || result.timeouts) {
    throw new Error(`${path.name}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`);
  }
  const requests = result.requests.total;
  return { rps: requests / result.duration, requests, cpuMs: (cpu * 1000) / requests, readerUs: (readerCpu * 1e6) / requests };
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
 * The two servers, at `silent` until a round sets their level, each writing onto its reader's pipe.
 * On PostgreSQL both join the run's database, where the run's service made the bench user: its key
 * serves both.
 */
async function startPair(ctx: DbContext): Promise<[Server, Server]> {
  const join = ctx.kind === "postgres";
  const start = async (): Promise<Server> => {
    const reader = startReader();
    const service = await startService(ctx.kind, ctx.databaseUrl, { join, stderr: reader.pipe });
    // the server holds its own end of the pipe: ours closed, the reader sees the end when the server exits
    reader.pipe.destroy();
    return { service: join ? { ...service, ready: { ...service.ready, authorization: ctx.service.ready.authorization } } : service, reader };
  };
  return [await start(), await start()];
}

const setLevels = (servers: Server[], level: (index: number) => "info" | "silent") =>
  Promise.all(servers.map((server, index) => server.service.call("logLevel", level(index))));

export async function logging(ctx: DbContext): Promise<PartResult> {
  // an even number: each server runs at each level as many rounds
  const rounds = ctx.quick ? 2 : 6;
  const seconds = ctx.quick ? 3 : 5;
  const servers = await startPair(ctx);
  const figures: Record<string, number> = {};
  const rows: (string | number)[][] = [];
  let infoRequests = 0;
  let lines = 0;
  try {
    for (const [p, path] of PATHS.entries()) {
      // warm-up at `info`: the JIT and the caches of both, untimed
      await setLevels(servers, () => "info");
      for (const server of servers) infoRequests += (await loadRound(server, path, 1)).requests;
      const measured = { info: [] as Round[], silent: [] as Round[] };
      for (let round = 0; round < rounds; round++) {
        const infoIndex = round % 2;
        await setLevels(servers, (index) => (index === infoIndex ? "info" : "silent"));
        // every other pair of rounds the `silent` one goes first, so that neither level always runs on the warmer machine
        const order = Math.floor(round / 2) % 2 === 0 ? [infoIndex, 1 - infoIndex] : [1 - infoIndex, infoIndex];
        for (const index of order) {
          const level = index === infoIndex ? "info" : "silent";
          measured[level].push(await loadRound(servers[index]!, path, seconds));
        }
      }
      infoRequests += measured.info.reduce((sum, round) => sum + round.requests, 0);
      const of = (level: "info" | "silent", key: "rps" | "cpuMs") => median(measured[level].map((round) => round[key]));
      // over all the rounds: in one, the reader of batched lines may use less than /proc's clock tick
      const readerUs =
        measured.info.reduce((sum, round) => sum + round.readerUs * round.requests, 0) /
        measured.info.reduce((sum, round) => sum + round.requests, 0);
      const [infoRps, silentRps] = [of("info", "rps"), of("silent", "rps")];
      const timeRatio = silentRps / infoRps;
      const cpuRatio = of("info", "cpuMs") / of("silent", "cpuMs");
      figures[`logging${p}`] = timeRatio;
      figures[`loggingCpu${p}`] = cpuRatio;
      figures[`loggingSilentCpuMs${p}`] = of("silent", "cpuMs");
      figures[`loggingReaderUs${p}`] = readerUs;
      rows.push([
        path.name,
        int(infoRps),
        int(silentRps),
        ratio(timeRatio),
        `${ms(of("info", "cpuMs"))} / ${ms(of("silent", "cpuMs"))}`,
        ratio(cpuRatio),
        readerUs.toFixed(1),
        measured.info.map((round) => int(round.rps)).join(" / "),
        measured.silent.map((round) => int(round.rps)).join(" / "),
      ]);
      log(
        `${ctx.label}: logging ${path.name}: info ${int(infoRps)} req/s, silent ${int(silentRps)} req/s; CPU ms a request ${ms(of("info", "cpuMs"))} / ${ms(of("silent", "cpuMs"))}; the reader ${readerUs.toFixed(1)} µs a request`,
      );
    }
  } finally {
    for (const { service } of servers) await service.stop();
    for (const { reader } of servers) lines += await reader.lines;
  }
  const perRequest = lines / infoRequests;
  const { usPerLine } = await lineCost(ctx.quick ? 5_000 : 20_000);
  figures.loggingLineUs = usPerLine;
  const lineShare = rows.map((row, p) => `${row[0]}: ${((100 * usPerLine) / (1000 * figures[`loggingSilentCpuMs${p}`]!)).toFixed(1)} %`);
  log(`${ctx.label}: logging: one request line costs the logger ${usPerLine.toFixed(1)} µs of CPU; ${perRequest.toFixed(2)} lines a request at info`);
  return {
    markdown: [
      "### Logging: `LOG_LEVEL=info` against `silent`",
      "",
      `Two server processes alike, each writing onto a pipe that \`wc -l\` reads (a process of its own, as a log shipper); in each round one is at \`info\` and the other at \`silent\`, swapped the next round. ${CONNECTIONS} connections (autocannon), ${rounds} rounds of ${seconds} s per level and path; medians, then each round. The server's CPU time (user + system) per request served is the figure a shared machine's load hardly moves; the reader's is what the log shipper pays for the lines.`,
      "",
      table(
        [
          "Request",
          "info (req/s)",
          "silent (req/s)",
          "Time ÷ silent",
          "Server CPU ms a request (info / silent)",
          "CPU ÷ silent",
          "Reader CPU µs a request (info, all rounds)",
          "info, each round",
          "silent, each round",
        ],
        rows,
      ),
      "",
      `Lines at \`info\`: ${perRequest >= 0.95 && perRequest < 1.1 ? "one a request" : `${perRequest.toFixed(2)} a request`} (${lines.toLocaleString("en")} lines, ${infoRequests.toLocaleString("en")} requests at \`info\`).`,
      `The logger alone, one request's line written to a pipe (CPU, at \`info\` less at \`silent\`, in a process of its own, in a tight loop: what a write that wakes the pipe's reader costs is not in it): ${usPerLine.toFixed(1)} µs, against the silent server's CPU a request: ${lineShare.join("; ")}.`,
    ].join("\n"),
    figures,
  };
}
