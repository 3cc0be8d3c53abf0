/**
 * Start time and memory of the server as production starts it, on each database:
 * `npx tsx bench/tools/start-footprint.ts [runs] [--pglite|--postgres] [--baseline DIR]`.
 * Without --baseline: the TypeScript sources through tsx against the compiled JavaScript under dist/
 * (RUN_COMPILED=true), as the part `start` of `npm run bench` does. With --baseline DIR (another
 * checkout, e.g. a worktree of an older commit, with its node_modules): that checkout's compiled
 * build against this one's, so a change's before/after is measured in one run. Builds dist/ first
 * (`npm run build`, in both checkouts). What a start measures: bench/start.bench.ts.
 * Prints medians with the lowest and highest run, the ratios, the machine, date and load as markdown.
 */
import os from "node:os";
import path from "node:path";
import { ROOT, machine, table, type DbKind } from "../lib/harness.ts";
import { buildWays, measureStarts, SOURCES_AND_COMPILED, type StartWay } from "../start.bench.ts";

const args = process.argv.slice(2);
const RUNS = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 5);
const KINDS: DbKind[] = args.includes("--pglite") ? ["pglite"] : args.includes("--postgres") ? ["postgres"] : ["pglite", "postgres"];
const baselineAt = args.indexOf("--baseline");
const BASELINE_ROOT = baselineAt >= 0 ? path.resolve(args[baselineAt + 1]!) : undefined;

const WAYS: [StartWay, StartWay] = BASELINE_ROOT
  ? [
      { label: `baseline (${path.basename(BASELINE_ROOT)}, compiled)`, root: BASELINE_ROOT, compiled: true },
      { label: "this checkout (compiled)", root: ROOT, compiled: true },
    ]
  : SOURCES_AND_COMPILED;

const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");
buildWays(WAYS);
// machine() ends with the load average as it is now: at the start
const atStart = machine();
const rows: string[][] = [];
for (const kind of KINDS) rows.push(...(await measureStarts(kind, WAYS, RUNS)).rows);
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${atStart}, ${load()} at the end; ${RUNS} starts each way, alternating: medians (lowest–highest)\n`,
);
console.log(table(["", WAYS[0].label, WAYS[1].label, "second / first"], rows));
