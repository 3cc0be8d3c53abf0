/**
 * Part `delivery` (PostgreSQL): the CPU a server process spends per delivered subscription event,
 * ours against the raw socket's, in one run. N subscribers (1,000 and 10,000; quick: 1,000), each
 * on a WebSocket of its own, held by load-generator processes of their own
 * (lib/delivery-subscriber-process.ts), all with the same selection of one domain's
 * `Subscription.multimediaJobs` as one user, coalescing at its default (10 a second per job);
 * then a running job writes `EVENTS` progress events, paced by `intervalFor` (within the
 * coalescing rate, so none is held back for the rate). The baseline (lib/raw-ws-process.ts) is a
 * bare `ws` server sending the same subscribers the same `next` frames (our server's own bytes,
 * each subscriber's id spliced in) at the same pace. Each figure is the serving process's CPU
 * (process.cpuUsage, user + system) from the first event to the last delivery, divided by the
 * `next` frames the subscribers received. Rounds alternate baseline and ours (ROUNDS; quick: 1),
 * and the ratio is of the medians.
 */
import { LIB, log, startCluster, startService, table, type PartResult, type Service } from "./lib/harness.ts";
import { jobFeedSubscription } from "./lib/queries.ts";
import { spawnChild, type Child } from "./lib/rpc.ts";
import { int, median, ratio } from "./lib/stats.ts";

const EVENTS = 20;
/**
 * One event every 120 ms (within the coalescing rate), and no faster than 0.1 ms per subscriber:
 * an event every 120 ms to 10,000 subscribers is more than this machine's cores deliver, and a
 * feed that falls behind replaces the progress it has not sent (latest wins), so most events
 * would be heard and never delivered, and the figure would no longer be per delivery.
 */
const intervalFor = (subscribers: number) => Math.max(120, subscribers / 10);
const ROUNDS = 3;
const LOADERS = 4;

/** A dashboard's selection (the feed part's). */
const QUERY = jobFeedSubscription("BenchDelivery");

interface Counts {
  received: number;
  failures: number;
  sample?: string;
}

type Loader = Child<{ subscribers: number }>;

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
/**
 * With BENCH_CPU_PROF, the measured window on the monotonic clock the profiles' timestamps use
 * (µs), logged so that a profile can be cut to it (bench/tools/cpuprofile-top.ts FILE N FROM TO).
 */
function profileWindow(): { end(what: string): void } {
  const from = process.hrtime.bigint() / 1000n;
  return {
    end(what) {
      if (process.env.BENCH_CPU_PROF) log(`  delivery: profile window of ${what}: ${from} ${process.hrtime.bigint() / 1000n}`);
    },
  };
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function loadersFor(url: string, authorization: string, domain: string, subscribers: number, loaders: number): Promise<Loader[]> {
  const per = Array.from({ length: loaders }, (_, i) => Math.floor(subscribers / loaders) + (i < subscribers % loaders ? 1 : 0));
  return Promise.all(
    per.map((n) =>
      spawnChild<{ subscribers: number }>(`${LIB}/delivery-subscriber-process.ts`, [
        url,
        authorization,
        String(n),
        QUERY,
        JSON.stringify({ domain }),
      ]),
    ),
  );
}

async function countsOf(loaders: Loader[]): Promise<Counts> {
  const all = await Promise.all(loaders.map((l) => l.call<Counts>("counts")));
  return {
    received: all.reduce((s, c) => s + c.received, 0),
    failures: all.reduce((s, c) => s + c.failures, 0),
    sample: all.find((c) => c.sample)?.sample,
  };
}

/** Polls `count` until it reaches `target` or stays the same for 15 s; its last value. */
async function untilSteady(what: string, count: () => Promise<number>, target: number): Promise<number> {
  let last = -1;
  let since = performance.now();
  for (;;) {
    const n = await count();
    if (n >= target) return n;
    if (n !== last) {
      last = n;
      since = performance.now();
    } else if (performance.now() - since > 15_000) {
      if (n === 0) throw new Error(`none of ${what} came`);
      return n;
    }
    await sleep(200);
  }
}

/** Waits until `expected` frames arrived, or until none arrived for `quietMs`; the count. */
async function settle(loaders: Loader[], expected: number, quietMs = 3000): Promise<Counts> {
  let last = -1;
  let since = performance.now();
  for (;;) {
    const counts = await countsOf(loaders);
    if (counts.received >= expected) return counts;
    if (counts.received !== last) {
      last = counts.received;
      since = performance.now();
    } else if (performance.now() - since > quietMs) return counts;
    await sleep(100);
  }
}

interface Measure {
  cpuMs: number;
  delivered: number;
  usPerDelivery: number;
}

/** Our server: subscribers connect, a job starts (its first event primes every feed), then its progress is written. */
async function ours(service: Service, subscribers: number, loaderCount: number): Promise<Measure & { sample: string }> {
  // the last round's subscriptions are gone
  for (let i = 0; (await service.call<number>("subscriptionsActive")) > 0; i++) {
    if (i > 600) throw new Error("the last round's subscriptions did not end");
    await sleep(100);
  }
  const { base, authorization, domain } = service.ready;
  const loaders = await loadersFor(`${base.replace(/^http/, "ws")}/graphql`, authorization, domain, subscribers, loaderCount);
  try {
    const live = await untilSteady("the subscriptions", () => service.call<number>("subscriptionsActive"), subscribers);
    if (live < subscribers) log(`  delivery: ${int(live)} of ${int(subscribers)} subscriptions went live; measuring those`);
    await service.call("createJob", 1_000_000);
    const primed = await settle(loaders, live);
    if (primed.received < live) log(`  delivery: only ${primed.received} of ${live} had the job's start`);
    const sample = primed.sample!;
    await Promise.all(loaders.map((l) => l.call("reset")));
    const before = await service.call<NodeJS.CpuUsage>("cpuUsage");
    const window = profileWindow();
    for (let e = 1; e <= EVENTS; e++) {
      const started = performance.now();
      await service.call("progress", e);
      await sleep(Math.max(0, intervalFor(subscribers) - (performance.now() - started)));
    }
    const counts = await settle(loaders, live * EVENTS);
    const cpu = cpuMs(await service.call<NodeJS.CpuUsage>("cpuUsage")) - cpuMs(before);
    window.end(`ours, ${int(subscribers)} subscribers`);
    return { cpuMs: cpu, delivered: counts.received, usPerDelivery: (1000 * cpu) / counts.received, sample };
  } finally {
    await Promise.all(loaders.map((l) => l.stop()));
  }
}

/** The raw socket: the same subscribers, frames and pace, through a bare `ws` server. */
async function raw(subscribers: number, loaderCount: number, sample: string): Promise<Measure> {
  const server = await spawnChild<{ url: string }>(`${LIB}/raw-ws-process.ts`, []);
  const loaders = await loadersFor(server.ready.url, "", "", subscribers, loaderCount);
  try {
    const live = await untilSteady("the raw subscribers", () => server.call<number>("subscribers"), subscribers);
    if (live < subscribers) log(`  delivery: ${int(live)} of ${int(subscribers)} raw subscribers subscribed; measuring those`);
    const payload = sample.slice(sample.indexOf('"payload":') + '"payload":'.length, -1);
    const before = await server.call<NodeJS.CpuUsage>("cpuUsage");
    const window = profileWindow();
    await server.call("fanout", payload, EVENTS, intervalFor(subscribers));
    const counts = await settle(loaders, live * EVENTS);
    const cpu = cpuMs(await server.call<NodeJS.CpuUsage>("cpuUsage")) - cpuMs(before);
    window.end(`raw, ${int(subscribers)} subscribers`);
    return { cpuMs: cpu, delivered: counts.received, usPerDelivery: (1000 * cpu) / counts.received };
  } finally {
    await Promise.all(loaders.map((l) => l.stop()));
    await server.stop();
  }
}

export async function delivery(quick: boolean): Promise<PartResult> {
  const sizes = process.env.BENCH_DELIVERY_SUBSCRIBERS?.split(",").map(Number) ?? (quick ? [1000] : [1000, 10_000]);
  const rounds = Number(process.env.BENCH_DELIVERY_ROUNDS) || (quick ? 1 : ROUNDS);
  const loaders = Number(process.env.BENCH_DELIVERY_LOADERS) || LOADERS;
  const cluster = await startCluster();
  // one user holds every subscription; coalescing at its default rate
  const config = { WS_MAX_SUBSCRIPTIONS_PER_USER: String(Math.max(...sizes)), PROGRESS_EVENTS_PER_SECOND: "10" };
  const service = await startService("postgres", cluster.url, { config });
  const rows: string[][] = [];
  const figures: Record<string, number> = {};
  try {
    log(`  delivery: an untimed warm-up round at ${int(sizes[0])} subscribers`);
    await raw(sizes[0], loaders, (await ours(service, sizes[0], loaders)).sample);
    for (const n of sizes) {
      const oursRuns: Measure[] = [];
      const rawRuns: Measure[] = [];
      for (let r = 0; r < rounds; r++) {
        log(`  delivery: ${int(n)} subscribers, round ${r + 1} of ${rounds}: ours`);
        const mine = await ours(service, n, loaders);
        oursRuns.push(mine);
        log(`  delivery: ${int(n)} subscribers, round ${r + 1}: ${mine.usPerDelivery.toFixed(1)} µs; raw socket`);
        const floor = await raw(n, loaders, mine.sample);
        rawRuns.push(floor);
        log(`  delivery: ${int(n)} subscribers, round ${r + 1}: raw ${floor.usPerDelivery.toFixed(1)} µs`);
      }
      const us = (runs: Measure[]) => runs.map((m) => m.usPerDelivery);
      const [oursUs, rawUs] = [median(us(oursRuns)), median(us(rawRuns))];
      const spread = (runs: Measure[]) => `${Math.min(...us(runs)).toFixed(1)}–${Math.max(...us(runs)).toFixed(1)}`;
      figures[`ratio${n}`] = oursUs / rawUs;
      figures[`ours${n}`] = oursUs;
      figures[`raw${n}`] = rawUs;
      rows.push([
        int(n),
        `${rawUs.toFixed(1)} (${spread(rawRuns)})`,
        `${oursUs.toFixed(1)} (${spread(oursRuns)})`,
        ratio(oursUs / rawUs),
        `${int(median(oursRuns.map((m) => m.delivered)))} of ${int(n * EVENTS)}`,
      ]);
    }
  } finally {
    await service.stop();
    cluster.stop();
  }
  const markdown = [
    `### Delivery: CPU per delivered subscription event, ours against the raw socket`,
    "",
    `One server process on PostgreSQL; N subscribers of one domain's \`multimediaJobs\` (one user, one selection, each on a WebSocket of its own, from ${loaders} load-generator processes); ` +
      `${EVENTS} progress events of one job, one every ${sizes.map((n) => `${intervalFor(n)} ms at ${int(n)}`).join(", ")}, \`PROGRESS_EVENTS_PER_SECOND\` 10. First an untimed round of each at the first size (the compilers warm up). The raw socket: a bare \`ws\` server sending the same subscribers the same \`next\` frames at the same pace. ` +
      `CPU of the serving process (user + system) over the deliveries ÷ \`next\` frames received; median of ${rounds} alternated round${rounds === 1 ? "" : "s"} (min–max).`,
    "",
    table(["Subscribers", "Raw `ws` (µs per delivery)", "Ours (µs per delivery)", "Ours ÷ raw", "Our deliveries (median)"], rows),
  ].join("\n");
  return { markdown, figures };
}
