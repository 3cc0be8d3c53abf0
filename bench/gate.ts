/**
 * The benchmark gate CI runs: `npm run bench:gate [-- --update]`. A quick run of the pull and
 * delivery parts on a throwaway PostgreSQL; each ratio (ours ÷ a baseline measured in the same
 * run: the floor, PostGraphile, the raw socket) must stay within 30 % of the one committed in
 * bench/gate-baseline.json, so that a regression shows in the change that made it. Ratios, not
 * times: the machine's speed cancels out of them, its noise does not, so a ratio over its bound is
 * measured again (up to three runs in all) and the gate fails only when its best run is over.
 * `--update` measures three runs and commits their medians as the new baseline.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { log, machine, ROOT } from "./lib/harness.ts";
import { median, ratio } from "./lib/stats.ts";

const BASELINE = path.join(ROOT, "bench", "gate-baseline.json");
const TOLERANCE = 0.3;
const RUNS = 3;

/** The ratios gated, by their path in the figures the run writes (`--figures`), and what they compare. */
const GATED: Record<string, string> = {
  "postgres.pull.restRatio": "REST pull ÷ the floor",
  "postgres.pull.gqlRatio": "GraphQL pull ÷ the floor",
  "postgres.pull.gqlVsPeer": "GraphQL pull ÷ PostGraphile",
  "apart.delivery.ratio1000": "CPU per delivered event ÷ the raw socket's (1,000 subscribers)",
};

interface Baseline {
  measured: string;
  ratios: Record<string, number>;
}

/** One quick run of the gated parts: each gated ratio. */
async function measure(): Promise<Record<string, number>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-gate-"));
  try {
    const figures = path.join(dir, "figures.json");
    execFileSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "bench/run.ts",
        "--quick",
        "--postgres",
        "--only",
        "pull,delivery",
        "--out",
        path.join(dir, "RESULTS.md"),
        "--figures",
        figures,
      ],
      { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] },
    );
    const all = JSON.parse(await readFile(figures, "utf8"));
    return Object.fromEntries(
      Object.keys(GATED).map((key) => {
        const value = key.split(".").reduce((node, part) => node?.[part], all);
        if (typeof value !== "number") throw new Error(`the run measured no ${key}`);
        return [key, value];
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function update(): Promise<void> {
  const runs: Record<string, number>[] = [];
  for (let run = 1; run <= RUNS; run++) {
    log(`gate baseline: run ${run}/${RUNS}`);
    runs.push(await measure());
  }
  const ratios = Object.fromEntries(Object.keys(GATED).map((key) => [key, Number(median(runs.map((r) => r[key]!)).toFixed(3))]));
  const baseline: Baseline = {
    measured: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, median of ${RUNS} quick runs; ${machine()}`,
    ratios,
  };
  await writeFile(BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
  for (const [key, value] of Object.entries(ratios)) log(`${GATED[key]}: ${ratio(value)}`);
  log(`wrote ${path.relative(process.cwd(), BASELINE)}`);
}

async function gate(): Promise<boolean> {
  const baseline = JSON.parse(await readFile(BASELINE, "utf8")) as Baseline;
  const best: Record<string, number> = {};
  const over = () => Object.keys(GATED).filter((key) => best[key]! > baseline.ratios[key]! * (1 + TOLERANCE));
  for (let run = 1; run <= RUNS; run++) {
    log(`gate: run ${run}${run > 1 ? ` (again for ${over().join(", ")})` : ""}`);
    const measured = await measure();
    for (const [key, value] of Object.entries(measured)) best[key] = Math.min(best[key] ?? Infinity, value);
    if (over().length === 0) break;
  }
  const failed = new Set(over());
  console.log(`\nBenchmark gate: each ratio at most ${ratio(1 + TOLERANCE)} its baseline (${baseline.measured})`);
  for (const [key, what] of Object.entries(GATED)) {
    const bound = baseline.ratios[key]! * (1 + TOLERANCE);
    console.log(
      `  ${failed.has(key) ? "OVER" : "ok  "} ${what}: ${ratio(best[key]!)} (baseline ${ratio(baseline.ratios[key]!)}, bound ${ratio(bound)})`,
    );
  }
  return failed.size === 0;
}

if (process.argv.includes("--update")) await update();
else if (!(await gate())) process.exit(1);
