/**
 * Prints the functions with the most self time in a V8 .cpuprofile (node --cpu-prof): file [count]
 * [from to], from and to cutting it to a window of the monotonic clock in µs (the delivery part
 * logs its windows so under BENCH_CPU_PROF).
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, count = "30", from, to] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number };
let at = profile.startTime;
const inWindow = profile.timeDeltas.map((dt) => {
  at += dt;
  return from === undefined || (at >= Number(from) && at <= Number(to));
});
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  if (!inWindow[i]) return;
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const short = url.replace(/^.*node_modules\//, "~/").replace(/^file:\/\/.*\/main\//, "");
  const key = `${functionName || "(anonymous)"} ${short}:${lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  const pkg = url.includes("node_modules/")
    ? url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, "$1")
    : url
      ? short.split("/").slice(0, 2).join("/")
      : functionName;
  byFile.set(pkg, (byFile.get(pkg) ?? 0) + dt);
});
const show = (m: Map<string, number>, n: number) => {
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    console.log(`${(v / 1000).toFixed(0).padStart(7)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
  }
};
console.log(`total ${(total / 1000).toFixed(0)} ms\n-- by package/folder`);
show(byFile, 25);
console.log("-- by function (self)");
show(self, Number(count));
