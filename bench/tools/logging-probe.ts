/**
 * Investigation aid for the logging part (not part of `npm run bench`): a throwaway PostgreSQL, a
 * server at `info` and one (or two, --aa) at `silent`, loaded in alternated rounds by autocannon in
 * this process; per round and server: requests/s, the server's CPU µs a request, this process's
 * (the load generator's) CPU µs a request, and with --strace the server's system calls a request
 * (`strace -c -f` attached during the round, which slows the server: counts, not times).
 *   npx tsx bench/tools/logging-probe.ts [--drain=bench|wc] [--path=rest|graphql] [--rounds=N]
 *     [--seconds=S] [--strace] [--aa]
 * --drain: who reads the `info` server's stderr pipe: this process, as the part did (`bench`), or
 * `wc -l`, a process of its own, as a log shipper is (`wc`).
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { startCluster, startService, type Service } from "../lib/harness.ts";

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const drain = arg("drain", "wc");
const which = arg("path", "rest");
const rounds = Number(arg("rounds", "3"));
const seconds = Number(arg("seconds", "5"));
const straced = process.argv.includes("--strace");
const aa = process.argv.includes("--aa");
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

const cluster = await startCluster();
const base = await startService("postgres", cluster.url);
const authorization = base.ready.authorization;
const wc = drain === "wc" ? spawn("wc", ["-l"], { stdio: ["pipe", "pipe", "inherit"] }) : undefined;
let wcOut = "";
wc?.stdout.on("data", (chunk: Buffer) => (wcOut += chunk.toString()));
const wcExited = wc ? new Promise((resolve) => wc.once("exit", resolve)) : undefined;
const info = await startService("postgres", cluster.url, { join: true, logLevel: "info", ...(wc ? { stderr: wc.stdin } : {}) });
// the server holds its own end of the pipe: ours closed, wc sees the end when the server exits
wc?.stdin.destroy();
let lines = 0;
info.process.stderr?.on("data", (chunk: Buffer) => {
  for (const byte of chunk) if (byte === 10) lines++;
});
const servers: [string, Service][] = [
  ["info", info],
  ["silent", await startService("postgres", cluster.url, { join: true })],
];
if (aa) servers.push(["silent2", await startService("postgres", cluster.url, { join: true })]);

const request = (service: Service) =>
  which === "rest"
    ? {
        url: `${service.ready.base}/a/bench/api/location_type/v1/`,
        method: "GET" as const,
        headers: { Authorization: authorization, Accept: "application/json" },
      }
    : {
        url: `${service.ready.base}/graphql`,
        method: "POST" as const,
        headers: { Authorization: authorization, "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ query: "{ me { username } }" }),
      };

async function round(name: string, service: Service, secs: number, trace: boolean) {
  const pid = service.process.pid!;
  const tracer = trace
    ? spawn("strace", ["-c", "-f", "-p", String(pid), "-o", `/tmp/logging-probe-strace-${name}.txt`], { stdio: "ignore" })
    : undefined;
  if (tracer) await new Promise((r) => setTimeout(r, 500));
  const [cpu0, own0, wc0] = [cpuSeconds(pid), process.cpuUsage(), wc ? cpuSeconds(wc.pid!) : 0];
  const result = await autocannon({ ...request(service), connections: 10, duration: secs, timeout: 30 });
  const [cpu, own, wcCpu] = [cpuSeconds(pid) - cpu0, process.cpuUsage(own0), wc ? cpuSeconds(wc.pid!) - wc0 : 0];
  if (tracer) {
    tracer.kill("SIGINT");
    await new Promise((r) => tracer.once("exit", r));
  }
  const n = result.requests.total;
  if (result.errors || result.non2xx) throw new Error(`${name}: errors ${result.errors} non2xx ${result.non2xx}`);
  return { name, rps: n / result.duration, requests: n, serverUs: (cpu * 1e6) / n, benchUs: (own.user + own.system) / n, wcUs: (wcCpu * 1e6) / n };
}

for (const [name, service] of servers) await round(name, service, 1, false);
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? servers : [...servers].reverse();
  for (const [name, service] of order) {
    const f = await round(name, service, seconds, straced && r === 0);
    console.log(
      `round ${r} ${f.name.padEnd(7)} ${f.rps.toFixed(0).padStart(5)} req/s  server ${f.serverUs.toFixed(0)} µs/req  bench ${f.benchUs.toFixed(0)} µs/req${wc && name === "info" ? `  wc ${f.wcUs.toFixed(1)} µs/req` : ""}  load ${load()}`,
    );
    if (straced && r === 0) {
      const text = readFileSync(`/tmp/logging-probe-strace-${name}.txt`, "utf8");
      const rows = text.split("\n").filter((l) => /^\s*[\d.]+\s+[\d.]+/.test(l));
      console.log(
        rows
          .map((l) => l.trim().split(/\s+/))
          .map(
            (c) =>
              `   ${c[c.length - 1].padEnd(16)} ${(Number(c[3]) / f.requests).toFixed(2)} calls/req  ${c[4] && /^\d+$/.test(c[4]) ? `${c[4]} errors` : ""}`,
          )
          .join("\n"),
      );
    }
  }
}
for (const [, service] of servers) await service.stop();
await base.stop();
cluster.stop();
if (wc) {
  await wcExited;
  console.log(`wc -l counted ${wcOut.trim()} lines`);
} else console.log(`read ${lines} lines`);
