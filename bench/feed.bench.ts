/**
 * Part 7, the dashboard feed (issue #14, CONTRACT §7.4): 10,000 subscribers (quick: 1,000) of one
 * domain's `Subscription.multimediaJobs`, half on each of two server processes sharing one
 * throwaway PostgreSQL, from load-generator child processes of their own; then a 5,000-entry
 * archive (quick: 500) is uploaded to an app of that domain on the first process and runs on
 * whichever worker takes it. For every subscriber and event: the delay from the moment a server
 * published the event (recorded around the PubSub in the benchmark's server process) to its
 * arrival, apart for progress and final events; and the servers' memory per subscriber (VmRSS from
 * /proc and heap used, after a full collection, before the subscriptions and once they are idle).
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import yazl from "yazl";
import { LIB, log, startCluster, startService, table, type PartResult, type Service } from "./lib/harness.ts";
import { spawnChild, type Child } from "./lib/rpc.ts";
import { int, ms, percentile } from "./lib/stats.ts";

/** Load generators for the full run (quick: 2); BENCH_FEED_LOADERS overrides. */
const LOADERS = 4;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
const ID3 = Buffer.from([0x49, 0x44, 0x33, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a]);

interface LoaderReport {
  arrivals: (readonly [string, Float64Array])[];
  progressEvents: Int32Array;
  finishedAt: [string, string][];
  failures: number;
  failureReasons: [string, number][];
  reconnections: number;
  errors: [string, number][];
  cpuMs: number;
  wallMs: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

interface Memory {
  rss: number;
  heapUsed: number;
  /** V8's committed heap: RSS counts it whether used or not */
  heapTotal: number;
  /** memory outside the V8 heap held by JavaScript objects (Buffers, sockets' buffers) */
  external: number;
}

/** Entry i: an image (four in five) or an audio file of about 1 KB, unique, as the processor sniffs them. */
function entryOf(i: number): { name: string; data: Buffer } {
  const unique = Buffer.alloc(1000, i % 251);
  unique.write(String(i).padStart(8, "0"), 0, "latin1");
  if (i % 5 === 4) {
    const frame = Buffer.alloc(417);
    frame.set([0xff, 0xfb, 0x90, 0x64]);
    return { name: `commcare/audio/f${i}.mp3`, data: Buffer.concat([ID3, unique.subarray(0, 10), frame, frame, unique]) };
  }
  return { name: `commcare/image/f${i}.png`, data: Buffer.concat([PNG, unique]) };
}

async function buildArchive(file: string, entries: number): Promise<string[]> {
  const zip = new yazl.ZipFile();
  const names: string[] = [];
  for (let i = 0; i < entries; i++) {
    const { name, data } = entryOf(i);
    names.push(name);
    zip.addBuffer(data, name, { compress: i % 10 === 0 });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  await writeFile(file, Buffer.concat(chunks));
  return names;
}

/** An app whose form refers to every entry of the archive (jr://file/ paths in its XML). */
async function importApp(service: Service, names: string[]): Promise<string> {
  const { base, authorization, domain } = service.ready;
  const xml = names.map((n, i) => `<text id="q${i}"><value form="image">jr://file/${n}</value></text>`).join("");
  const source = {
    doc_type: "Application",
    name: "Dashboard bench",
    modules: [{ name: { en: "Module" }, forms: [{ unique_id: "form-1" }] }],
    _attachments: { "form-1.xml": `<?xml version="1.0"?><h:html><itext>${xml}</itext></h:html>` },
  };
  const form = new FormData();
  form.append("app_name", "feed bench");
  form.append("app_file", new Blob([JSON.stringify(source)]), "app.json");
  const res = await fetch(`${base}/a/${domain}/apps/api/import_app/`, { method: "POST", headers: { Authorization: authorization }, body: form });
  if (res.status !== 201) throw new Error(`import_app: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { app_id: string }).app_id;
}

/** VmRSS of a process, from /proc (what the kernel charges it), in bytes. */
function vmRss(pid: number): number {
  const kb = /^VmRSS:\s*(\d+)\s*kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

async function memoryOf(server: Service): Promise<Memory> {
  const { heapUsed, heapTotal, external, collected } = await server.call<Memory & { collected: boolean }>("memory");
  if (!collected) throw new Error("the server process was not started with --expose-gc");
  return { rss: vmRss(server.process.pid!), heapUsed, heapTotal, external };
}

async function until(what: string, timeoutMs: number, test: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await test())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const maxOf = (values: ArrayLike<number>) => {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) if (values[i] > max) max = values[i];
  return values.length ? max : NaN;
};
const minOf = (values: ArrayLike<number>) => -maxOf(Array.from(values, (v) => -v));

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** What an event of the feed is, from its key (job, state, attempt, progress). */
function kindOf(key: string): "state" | "progress" | "final" {
  const [, state, , current] = key.split(" ");
  if (state === "complete" || state === "failed") return "final";
  return state === "running" && Number(current) > 0 ? "progress" : "state";
}

export async function feed(quick: boolean): Promise<PartResult> {
  // BENCH_FEED_SUBSCRIBERS and BENCH_FEED_ENTRIES override the sizes (a quick look between the two)
  const subscribers = Number(process.env.BENCH_FEED_SUBSCRIBERS) || (quick ? 1000 : 10_000);
  const entries = Number(process.env.BENCH_FEED_ENTRIES) || (quick ? 500 : 5000);
  const loaders = Number(process.env.BENCH_FEED_LOADERS) || (quick ? 2 : LOADERS);
  // BENCH_FEED_WORKER=separate: the job runs on a third process (WORKERS=0 on the two serving)
  const separateWorker = process.env.BENCH_FEED_WORKER === "separate";
  const loadAtStart = loadAverage();
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-feed-"));
  const cluster = await startCluster();
  const servers: Service[] = [];
  let worker: Service | undefined;
  const children: Child<unknown>[] = [];
  try {
    // One user holds every subscription (a dashboard wall signed in as one account): its per-user
    // bound is raised to the subscriber count; each subscriber has a WebSocket of its own, so the
    // per-socket bound (100) is not reached. Coalescing stays at its default (10 a second).
    const config = { WS_MAX_SUBSCRIPTIONS_PER_USER: String(subscribers), PROGRESS_EVENTS_PER_SECOND: "10" };
    log(`  feed: two server processes on one PostgreSQL (one after the other: both migrate at start)`);
    servers.push(await startService("postgres", cluster.url, { config, workers: !separateWorker, exposeGc: true }));
    servers.push(await startService("postgres", cluster.url, { join: true, config, workers: !separateWorker, exposeGc: true }));
    if (separateWorker) {
      log(`  feed: a third process runs the jobs (WORKERS=0 on the two that serve the subscribers)`);
      worker = await startService("postgres", cluster.url, { join: true, config, workers: true });
    }
    // every process that may publish the job's events
    const publishers = worker ? [...servers, worker] : servers;
    const [first] = servers;
    const { authorization, domain } = first.ready;

    log(`  feed: a ${entries.toLocaleString("en")}-entry archive and an app that refers to every entry`);
    const archive = path.join(dir, "media.zip");
    const names = await buildArchive(archive, entries);
    const appId = await importApp(first, names);

    const before = await Promise.all(servers.map(memoryOf));
    log(`  feed: ${subscribers.toLocaleString("en")} subscribers from ${loaders} load-generator processes`);
    const connectStart = performance.now();
    const perLoader = Array.from({ length: loaders }, (_, i) => Math.floor(subscribers / loaders) + (i < subscribers % loaders ? 1 : 0));
    const perServer = servers.map((_, s) => perLoader.filter((_, i) => i % servers.length === s).reduce((a, b) => a + b, 0));
    children.push(
      ...(await Promise.all(
        perLoader.map((count, i) => {
          const wsUrl = `${servers[i % servers.length].ready.base.replace(/^http/, "ws")}/graphql`;
          return spawnChild(path.join(LIB, "feed-subscriber-process.ts"), [wsUrl, authorization, domain, String(count)]);
        }),
      )),
    );
    // every loader has had each of its sockets acknowledged (or failed for good); the subscribe
    // messages follow: wait until the servers count them all, or until the count stops growing
    // (a socket that failed or dropped meanwhile), and measure on what is live
    let active = servers.map(() => 0);
    let stableSince = performance.now();
    await until("the subscriptions", 600_000, async () => {
      const now = await Promise.all(servers.map((s) => s.call<number>("subscriptionsActive")));
      if (now.some((n, s) => n !== active[s])) stableSince = performance.now();
      active = now;
      return now.every((n, s) => n >= perServer[s]) || performance.now() - stableSince > 15_000;
    });
    const connectMs = performance.now() - connectStart;
    // idle for a moment: what the handshakes left behind (buffers, parse results) is collected
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = await Promise.all(servers.map(memoryOf));

    const completed = Promise.all(children.map((child) => new Promise<void>((resolve) => child.onEvent(() => resolve()))));
    await Promise.all(publishers.map((s) => s.call("emissions")));
    await Promise.all(children.map((c) => c.call("measure")));
    const cpuBefore = await Promise.all(servers.map((s) => s.call<NodeJS.CpuUsage>("cpuUsage")));
    log(`  feed: uploading the archive to the first process; waiting for every subscriber's final event`);
    const runStart = performance.now();
    const form = new FormData();
    form.append("bulk_upload_file", new Blob([readFileSync(archive)], { type: "application/zip" }), "media.zip");
    const uploaded = await fetch(`${first.ready.base}/a/${domain}/apps/api/${appId}/multimedia/`, {
      method: "POST",
      headers: { Authorization: authorization },
      body: form,
    });
    const uploadBody = await uploaded.text();
    if (uploaded.status !== 200) throw new Error(`upload: ${uploaded.status} ${uploadBody}`);
    const uploadMs = performance.now() - runStart;
    const timeoutMs = 120_000 + entries * 100;
    const finished = await Promise.race([completed.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), timeoutMs))]);
    const runMs = performance.now() - runStart;
    if (!finished) log(`  feed: not every subscriber had the final event after ${(timeoutMs / 1000).toFixed(0)} s; reporting what arrived`);
    // a subscriber's held-back progress cannot follow the final event: nothing more is on its way
    const serverCpu = await Promise.all(
      servers.map((s, i) => s.call<NodeJS.CpuUsage>("cpuUsage").then((c) => (c.user + c.system - cpuBefore[i].user - cpuBefore[i].system) / 1000)),
    );
    const loadAtEnd = loadAverage();

    // emissions: the first time any process published each event
    const emitted = new Map<string, { at: number; server: number }>();
    const published = await Promise.all(publishers.map((s) => s.call<{ key: string; at: number }[]>("emissions")));
    published.forEach((list, server) => {
      for (const { key, at } of list) {
        const known = emitted.get(key);
        if (!known || at < known.at) emitted.set(key, { at, server });
      }
    });
    const reports = await Promise.all(children.map((c) => c.call<LoaderReport>("report")));

    const delays = { state: [] as number[], progress: [] as number[], final: [] as number[] };
    const received = { state: 0, progress: 0, final: 0 };
    let unknown = 0;
    for (const report of reports) {
      for (const [key, times] of report.arrivals) {
        const emission = emitted.get(key);
        if (!emission) {
          unknown += times.length;
          continue;
        }
        const kind = kindOf(key);
        received[kind] += times.length;
        for (const t of times) delays[kind].push(t - emission.at);
      }
    }
    const finalKey = [...emitted.keys()].find((k) => kindOf(k) === "final");
    const finishedAt = reports.flatMap((r) => r.finishedAt).find(([id]) => finalKey?.startsWith(`${id} `))?.[1];
    const sinceFinishedAt: number[] = [];
    if (finalKey && finishedAt) {
      const at = Date.parse(finishedAt);
      for (const r of reports) for (const [key, times] of r.arrivals) if (key === finalKey) for (const t of times) sinceFinishedAt.push(t - at);
    }
    const published_ = { state: 0, progress: 0, final: 0 };
    for (const key of emitted.keys()) published_[kindOf(key)] += 1;
    // the process that published the job's last event ran it (its latest attempt)
    const ranOn = [...emitted.values()].filter((e) => e.server >= 0).sort((a, b) => b.at - a.at)[0]?.server ?? -1;
    const attempts = new Set([...emitted.keys()].filter((k) => k.split(" ")[1] !== "queued").map((k) => k.split(" ")[2])).size;
    const started = [...emitted].find(([k]) => k.includes(" running ") && kindOf(k) === "state")?.[1].at;
    const jobSeconds = started && finalKey ? (emitted.get(finalKey)!.at - started) / 1000 : NaN;
    const perSubscriber = reports.flatMap((r) => [...r.progressEvents]);
    const failures = reports.reduce((sum, r) => sum + r.failures, 0);
    const reconnections = reports.reduce((sum, r) => sum + r.reconnections, 0);
    const failureReasons = new Map<string, number>();
    for (const r of reports) for (const [reason, n] of r.failureReasons) failureReasons.set(reason, (failureReasons.get(reason) ?? 0) + n);
    const errors = new Map<string, number>();
    for (const r of reports) for (const [message, n] of r.errors) errors.set(message, (errors.get(message) ?? 0) + n);
    const errorLine = errors.size
      ? `Errors in events (the event still counts as received when it carries its job): ${[...errors].map(([m, n]) => `${int(n)} × "${m}"`).join("; ")}.`
      : "No event carried an error.";

    const live = active.reduce((a, b) => a + b, 0);
    const rssPer = servers.map((_, i) => (after[i].rss - before[i].rss) / active[i]);
    const heapPer = servers.map((_, i) => (after[i].heapUsed - before[i].heapUsed) / active[i]);
    const kb = (n: number) => (n / 1024).toFixed(1);
    const mb = (n: number) => (n / 2 ** 20).toFixed(0);
    const row = (label: string, kind: "state" | "progress" | "final", expected: number) => [
      label,
      int(published_[kind]),
      int(expected),
      int(received[kind]),
      ms(percentile(delays[kind], 50)),
      ms(percentile(delays[kind], 99)),
      ms(maxOf(delays[kind])),
    ];
    const markdown = [
      `### Dashboard feed: ${subscribers.toLocaleString("en")} subscribers of one domain's \`multimediaJobs\`, two processes on PostgreSQL, a ${entries.toLocaleString("en")}-entry archive`,
      "",
      `Two server processes (${separateWorker ? "`WORKERS=0`: the jobs run on a third process, which serves no subscriber" : "multimedia worker on in both"}, \`PROGRESS_EVENTS_PER_SECOND\` 10, \`WS_MAX_SUBSCRIPTIONS_PER_USER\` raised to ${subscribers.toLocaleString("en")}: one \`edit_apps\` user holds every subscription) on one throwaway PostgreSQL; ` +
        `${perServer.map((n) => n.toLocaleString("en")).join(" + ")} subscribers asked for, each on a WebSocket of its own, from ${loaders} load-generator processes; ${active.map((n) => n.toLocaleString("en")).join(" + ")} subscriptions live after ${(connectMs / 1000).toFixed(1)} s (expected deliveries below count the live ones). ` +
        `The archive (${entries.toLocaleString("en")} entries of about 1 KB, images and audio, all referred to by the app) was uploaded to process 1 (${(uploadMs / 1000).toFixed(1)} s to its 200) and ran on process ${ranOn + 1} ` +
        `(${attempts} attempt${attempts === 1 ? "" : "s"}${Number.isFinite(jobSeconds) ? `, ${jobSeconds.toFixed(1)} s from its RUNNING event to its final one` : ", no final event"}); every final event was in ${(runMs / 1000).toFixed(1)} s after the upload began${finished ? "" : " (**timed out**: not every subscriber had it)"}.`,
      "",
      "Delay from the moment a server published the event (the `PubSub.publish` call, timed in the benchmark's server process) to its arrival at each subscriber (the graphql-ws client's `next`), same machine clock:",
      "",
      table(
        ["Events", "Published", "Expected deliveries", "Received", "p50 (ms)", "p99 (ms)", "max (ms)"],
        [
          row("State changes (QUEUED, RUNNING)", "state", published_.state * live),
          row("Progress (RUNNING, current > 0)", "progress", published_.progress * live),
          row("Final (COMPLETE)", "final", published_.final * live),
          [
            "Final, from its `finishedAt` (the server's own timestamp: set before the completing transaction)",
            "—",
            "—",
            int(sinceFinishedAt.length),
            ms(percentile(sinceFinishedAt, 50)),
            ms(percentile(sinceFinishedAt, 99)),
            ms(maxOf(sinceFinishedAt)),
          ],
        ],
      ),
      "",
      `Progress events per subscriber: min ${int(minOf(perSubscriber))}, median ${int(percentile(perSubscriber, 50))}, max ${int(maxOf(perSubscriber))} ` +
        `(${Number.isFinite(jobSeconds) ? `${(percentile(perSubscriber, 50) / jobSeconds).toFixed(1)} a second over the job's run; ` : ""}the publisher sends at most 10 a second, each subscription passes at most 10 in any one-second window). ` +
        `Subscribers whose socket failed for good: ${failures}${failureReasons.size ? ` (${[...failureReasons].map(([r, n]) => `${int(n)} × ${r}`).join("; ")})` : ""}; sockets that dropped and reconnected: ${reconnections}; arrivals of events no server recorded: ${unknown}. ${errorLine}`,
      "",
      table(
        [
          "Server process",
          "Subscribers",
          "RSS before (MB)",
          "RSS idle with them (MB)",
          "RSS per subscriber (KB)",
          "Heap used before → with (MB)",
          "Heap per subscriber (KB)",
          "Heap committed, external before → with (MB)",
          "CPU during the job (s)",
        ],
        servers.map((_, i) => [
          `${i + 1}${i === ranOn ? " (ran the job)" : ""}`,
          `${int(active[i])} of ${int(perServer[i])}`,
          mb(before[i].rss),
          mb(after[i].rss),
          kb(rssPer[i]),
          `${mb(before[i].heapUsed)} → ${mb(after[i].heapUsed)}`,
          kb(heapPer[i]),
          `${mb(before[i].heapTotal)} → ${mb(after[i].heapTotal)}, ${mb(before[i].external)} → ${mb(after[i].external)}`,
          (serverCpu[i] / 1000).toFixed(1),
        ]),
      ),
      "",
      "Memory: VmRSS from `/proc/<pid>/status` and V8's heap used, each after a full collection (`--expose-gc`), before the subscribers connected and once they were all subscribed and idle.",
      "",
      table(
        ["Load generator", "Subscribers", "CPU (share of one core)", "Event-loop delay p99 (ms)", "max (ms)"],
        reports.map((r, i) => [
          `${i + 1} → process ${(i % servers.length) + 1}`,
          int(perLoader[i]),
          `${((100 * r.cpuMs) / r.wallMs).toFixed(0)} %`,
          ms(r.loopDelayP99Ms),
          ms(r.loopDelayMaxMs),
        ]),
      ),
      "",
      `Load average at the part's start ${loadAtStart}, at the job's end ${loadAtEnd} (${os.availableParallelism()} cores: servers, PostgreSQL and load generators share them).`,
    ].join("\n");
    return {
      markdown,
      figures: {
        progressP99: percentile(delays.progress, 99),
        finalP99: percentile(delays.final, 99),
        stateP99: percentile(delays.state, 99),
        rssPerSubscriberKb: Math.max(...rssPer) / 1024,
        heapPerSubscriberKb: Math.max(...heapPer) / 1024,
        finalReceived: received.final,
        finalExpected: published_.final * subscribers,
        liveSubscribers: live,
        completedAll: finished ? 1 : 0,
        failedSubscribers: failures + reconnections,
        eventErrors: [...errors.values()].reduce((a, b) => a + b, 0),
      },
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await worker?.stop();
    for (const s of servers.reverse()) await s.stop();
    cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
