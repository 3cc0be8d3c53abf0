/**
 * Child process of the logging part: what the logger alone spends on one request's line, the
 * `request completed` line of a small authenticated GET with the fields the request log gives it,
 * written onto stderr (a pipe the parent reads, as a log shipper would). CPU time of the process
 * (user + system, so the write to the pipe counts), at `info` less at `silent` (what building the
 * fields costs, which a silent server pays too), alternated over rounds; replies µs a line.
 * A tight loop: the reader of the pipe is seldom asleep when a write comes, so what waking it costs
 * a server whose lines come one a request (about 10 µs a write) is not in this figure.
 *   argv: lines per round
 */
import { randomUUID } from "node:crypto";
import { log, setLogLevel } from "../../src/log.ts";
import { median } from "./stats.ts";

const lines = Number(process.argv[2] ?? 20_000);
const ROUNDS = 5;

const requestLine = () =>
  log.info("request completed", {
    requestId: randomUUID(),
    req: { method: "GET", path: "/a/bench/api/location_type/v1/" },
    res: { statusCode: 200 },
    route: "/a/:domain/api/location_type/v1/",
    username: "bench",
    durationMs: 2,
  });

/** CPU µs a call of requestLine at `level` */
function cpuPerLine(level: "info" | "silent"): number {
  setLogLevel(level);
  const before = process.cpuUsage();
  for (let i = 0; i < lines; i++) requestLine();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / lines;
}

cpuPerLine("info"); // warm-up: the JIT
const measured = { info: [] as number[], silent: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  measured.info.push(cpuPerLine("info"));
  measured.silent.push(cpuPerLine("silent"));
}
process.send!({ usPerLine: median(measured.info) - median(measured.silent), info: median(measured.info), silent: median(measured.silent) }, () =>
  process.exit(0),
);
