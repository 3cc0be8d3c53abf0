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
 * and the ratio is of the medians. The latency mode (the full run's second half, or
 * BENCH_DELIVERY_MODE=latency) measures the delay from a progress write to each subscriber with
 * 10,000 subscribers on two serving processes behind one bus, and projects it to one core per
 * 5,000 subscribers (latency() says how).
 */
import os from "node:os";
import { LIB, log, startCluster, startService, table, type PartResult, type Service } from "./lib/harness.ts";
import { jobFeedSubscription } from "./lib/queries.ts";
import { spawnChild, type Child } from "./lib/rpc.ts";
import { int, median, ms, percentile, ratio } from "./lib/stats.ts";

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

/** Subscribers split over `loaders` processes; loader i connects to `urls[i % urls.length]`; `timed`: they note arrival times. */
async function loadersFor(
  urls: string | string[],
  authorization: string,
  domain: string,
  subscribers: number,
  loaders: number,
  timed = false,
): Promise<Loader[]> {
  const per = Array.from({ length: loaders }, (_, i) => Math.floor(subscribers / loaders) + (i < subscribers % loaders ? 1 : 0));
  const to = typeof urls === "string" ? [urls] : urls;
  return Promise.all(
    per.map((n, i) =>
      spawnChild<{ subscribers: number }>(`${LIB}/delivery-subscriber-process.ts`, [
        to[i % to.length]!,
        authorization,
        String(n),
        QUERY,
        JSON.stringify({ domain }),
        ...(timed ? ["timed"] : []),
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

/** The latency mode's events: one a second (within the coalescing rate: none is held back for the rate). */
const LATENCY_EVENTS = 20;
const LATENCY_INTERVAL_MS = 1000;
/** The subscribers one core is to carry in the projection (issue #14's sizing: 10,000 on two cores). */
const PER_CORE = 5000;

const minOf = (values: number[]) => values.reduce((a, b) => Math.min(a, b), Infinity);
const maxOf = (values: number[]) => values.reduce((a, b) => Math.max(a, b), -Infinity);

interface LatencyResult {
  markdown: string;
  figures: Record<string, number>;
}

/**
 * The latency mode: `subscribers` split over two serving processes behind one bus (PostgreSQL
 * LISTEN/NOTIFY), held by the load generators (half of them on each process); `writer`, a third
 * process that serves none, writes a job's progress as a worker would, one event a second. Each
 * delivery's delay is from the moment just before the write (the writer's clock) to its arrival
 * (the load generator's clock: the same machine's wall clock). The projection to one core per
 * 5,000 subscribers: an event's delay to the first subscriber (bus and shared execution, measured)
 * plus the CPU a serving process spent per event, scaled to 5,000 subscribers, as if that process
 * had its core to itself (here two serving processes, PostgreSQL and the load generators share two).
 */
async function latency(
  clusterUrl: string,
  writer: Service,
  subscribers: number,
  loaderCount: number,
  config: Record<string, string>,
): Promise<LatencyResult> {
  const servers: Service[] = [];
  let loaders: Loader[] = [];
  try {
    log(`  delivery latency: two serving processes on one bus, ${int(subscribers)} subscribers from ${loaderCount} load-generator processes`);
    for (let i = 0; i < 2; i++) servers.push(await startService("postgres", clusterUrl, { join: true, config }));
    const { authorization, domain } = writer.ready;
    const urls = servers.map((s) => `${s.ready.base.replace(/^http/, "ws")}/graphql`);
    loaders = await loadersFor(urls, authorization, domain, subscribers, loaderCount, true);
    const asked = servers.map((_, s) => loaders.filter((_, i) => i % servers.length === s).reduce((sum, l) => sum + l.ready.subscribers, 0));
    const live: number[] = [];
    for (const [i, server] of servers.entries()) {
      live.push(await untilSteady(`the subscriptions of process ${i + 1}`, () => server.call<number>("subscriptionsActive"), asked[i]!));
    }
    const total = live.reduce((a, b) => a + b, 0);
    await writer.call("createJob", 1_000_000);
    await settle(loaders, total);
    await Promise.all(loaders.map((l) => l.call("reset")));
    const cpuBefore = await Promise.all(servers.map((s) => s.call<NodeJS.CpuUsage>("cpuUsage")));
    const written = new Map<number, number>();
    for (let e = 1; e <= LATENCY_EVENTS; e++) {
      const started = performance.now();
      written.set(e, await writer.call<number>("progress", e));
      await sleep(Math.max(0, LATENCY_INTERVAL_MS - (performance.now() - started)));
    }
    const counts = await settle(loaders, total * LATENCY_EVENTS);
    const cpuAfter = await Promise.all(servers.map((s) => s.call<NodeJS.CpuUsage>("cpuUsage")));
    const cpu = cpuAfter.map((c, i) => cpuMs(c) - cpuMs(cpuBefore[i]!));
    const byEvent = new Map<number, number[]>();
    for (const report of await Promise.all(loaders.map((l) => l.call<(readonly [number, Float64Array])[]>("arrivals")))) {
      for (const [current, times] of report) {
        const at = written.get(current);
        if (at === undefined) continue;
        const delays = byEvent.get(current) ?? [];
        for (const t of times) delays.push(t - at);
        byEvent.set(current, delays);
      }
    }
    const all = [...byEvent.values()].flat();
    const firsts = [...byEvent.values()].map(minOf);
    const lasts = [...byEvent.values()].map(maxOf);
    // a serving process's CPU per event, scaled to PER_CORE subscribers
    const perEventMs = cpu.map((c, i) => ((c / LATENCY_EVENTS) * PER_CORE) / live[i]!);
    const projectedP99 = percentile(firsts, 99) + maxOf(perEventMs);
    const row = [
      `${live.map(int).join(" + ")}`,
      `${int(counts.received)} of ${int(total * LATENCY_EVENTS)}`,
      ms(percentile(all, 50)),
      ms(percentile(all, 99)),
      `${ms(median(lasts))} (${ms(maxOf(lasts))})`,
      `${ms(median(firsts))} (${ms(maxOf(firsts))})`,
      cpu.map((c, i) => `${ms(c / LATENCY_EVENTS)} (${((1000 * c) / (LATENCY_EVENTS * live[i]!)).toFixed(1)} µs a delivery)`).join(", "),
      ms(projectedP99),
    ];
    const markdown = [
      `### Delivery latency: ${int(subscribers)} subscribers on two serving processes`,
      "",
      `Two serving processes behind one bus (PostgreSQL LISTEN/NOTIFY), each holding the subscribers of half of ${loaderCount} load-generator processes (the cost rounds' subscribers, selection and coalescing); ` +
        `a third process, serving none, writes ${LATENCY_EVENTS} progress events of one job, one a second. Delay: from just before the progress write to each \`next\` frame's arrival (same machine's clock). ` +
        `Projected p99 with one core per ${int(PER_CORE)} subscribers: the p99 over events of the delay to the first subscriber (bus and shared execution) plus the busier serving process's CPU per event scaled to ${int(PER_CORE)} subscribers (as if it had a core of its own; here ${os.availableParallelism()} cores carry both serving processes, the writer, PostgreSQL and the load generators).`,
      "",
      table(
        [
          "Subscribers (process 1 + 2)",
          "Delivered",
          "Delay p50 (ms)",
          "Delay p99 (ms)",
          "To the last subscriber: median (max) (ms)",
          "To the first: median (max) (ms)",
          "Serving CPU per event (ms), per process",
          "Projected p99, one core per 5,000 (ms)",
        ],
        [row],
      ),
    ].join("\n");
    return {
      markdown,
      figures: { latencyP99: percentile(all, 99), latencyLastMax: maxOf(lasts), latencyProjectedP99: projectedP99 },
    };
  } finally {
    await Promise.all(loaders.map((l) => l.stop()));
    for (const s of servers) await s.stop();
  }
}

export async function delivery(quick: boolean): Promise<PartResult> {
  // BENCH_DELIVERY_MODE: cost (the quick run's), latency, or both (the full run's)
  const mode = process.env.BENCH_DELIVERY_MODE ?? (quick ? "cost" : "both");
  const latencySubscribers = Number(process.env.BENCH_DELIVERY_LATENCY_SUBSCRIBERS) || (quick ? 1000 : 10_000);
  const sizes = mode === "latency" ? [] : (process.env.BENCH_DELIVERY_SUBSCRIBERS?.split(",").map(Number) ?? (quick ? [1000] : [1000, 10_000]));
  const rounds = Number(process.env.BENCH_DELIVERY_ROUNDS) || (quick ? 1 : ROUNDS);
  const loaders = Number(process.env.BENCH_DELIVERY_LOADERS) || LOADERS;
  const cluster = await startCluster();
  // one user holds every subscription; coalescing at its default rate
  const config = { WS_MAX_SUBSCRIPTIONS_PER_USER: String(Math.max(...sizes, latencySubscribers)), PROGRESS_EVENTS_PER_SECOND: "10" };
  const service = await startService("postgres", cluster.url, { config });
  const rows: string[][] = [];
  const figures: Record<string, number> = {};
  let latencySection: string | undefined;
  try {
    if (sizes.length > 0) {
      log(`  delivery: an untimed warm-up round at ${int(sizes[0]!)} subscribers`);
      await raw(sizes[0]!, loaders, (await ours(service, sizes[0]!, loaders)).sample);
    }
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
    if (mode !== "cost") {
      const measured = await latency(cluster.url, service, latencySubscribers, loaders, config);
      latencySection = measured.markdown;
      Object.assign(figures, measured.figures);
    }
  } finally {
    await service.stop();
    cluster.stop();
  }
  const cost = [
    `### Delivery: CPU per delivered subscription event, ours against the raw socket`,
    "",
    `One server process on PostgreSQL; N subscribers of one domain's \`multimediaJobs\` (one user, one selection, each on a WebSocket of its own, from ${loaders} load-generator processes); ` +
      `${EVENTS} progress events of one job, one every ${sizes.map((n) => `${intervalFor(n)} ms at ${int(n)}`).join(", ")}, \`PROGRESS_EVENTS_PER_SECOND\` 10. First an untimed round of each at the first size (the compilers warm up). The raw socket: a bare \`ws\` server sending the same subscribers the same \`next\` frames at the same pace. ` +
      `CPU of the serving process (user + system) over the deliveries ÷ \`next\` frames received; median of ${rounds} alternated round${rounds === 1 ? "" : "s"} (min–max).`,
    "",
    table(["Subscribers", "Raw `ws` (µs per delivery)", "Ours (µs per delivery)", "Ours ÷ raw", "Our deliveries (median)"], rows),
  ].join("\n");
  const markdown = [...(sizes.length > 0 ? [cost] : []), ...(latencySection ? [latencySection] : [])].join("\n\n");
  return { markdown, figures };
}
