/**
 * What a dashboard subscriber costs the server's heap, by constructor:
 * `npx tsx bench/tools/feed-heap.ts [subscribers] [--keep DIR]` (default 10,000).
 * One server process as the feed part starts it (bench/lib/service-process.ts on a throwaway
 * PostgreSQL, the multimedia worker on, `--expose-gc`), two heap snapshots of it
 * (`--heapsnapshot-signal`), before the subscribers connect and once they are all subscribed and idle,
 * the subscribers made by the feed part's load generators (bench/lib/feed-subscriber-process.ts,
 * each on its own WebSocket). Prints heap used and committed per subscriber (and RSS, which the
 * snapshots inflate: see snapshotOf), and the snapshots' self sizes
 * summed by node type and constructor (or function name, for closures), the difference divided by
 * the subscribers: what each one adds, largest first, as markdown. `--keep DIR` keeps the snapshots
 * (open them in Chrome's DevTools, Memory, Comparison, for retainers). The server process has
 * scripts/start.sh's memory settings, as every service process of the benchmark (START_MEMORY).
 */
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { LIB, machine, startCluster, startService, table, type Service } from "../lib/harness.ts";
import { spawnChild, type Child } from "../lib/rpc.ts";

const args = process.argv.slice(2);
const SUBSCRIBERS = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 10_000);
const keepAt = args.indexOf("--keep");
const KEEP = keepAt >= 0 ? path.resolve(args[keepAt + 1]!) : undefined;
const LOADERS = Math.max(1, Math.min(4, Math.ceil(SUBSCRIBERS / 2500)));

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] }; node_count: number };
  nodes: number[];
  strings: string[];
}

/** Self size and count per "type constructor" key. */
function bySelfSize(file: string): Map<string, { size: number; count: number }> {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = snap.snapshot.meta.node_types[0];
  const totals = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    let name = snap.strings[snap.nodes[i + nameAt]!]!;
    // strings and numbers by their type only; the rest by constructor or function name
    if (type === "string" || type === "concatenated string" || type === "sliced string" || type === "number") name = "";
    if (name.length > 80) name = `${name.slice(0, 77)}...`;
    const key = `${type} ${name}`;
    const total = totals.get(key) ?? { size: 0, count: 0 };
    total.size += snap.nodes[i + sizeAt]!;
    total.count += 1;
    totals.set(key, total);
  }
  return totals;
}

function vmRss(pid: number): number {
  return Number(/^VmRSS:\s*(\d+)\s*kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
}

/**
 * Signals the server for a heap snapshot and waits until its file is written whole; then its
 * memory (after a full collection). Writing a snapshot leaves native allocations in the process,
 * more for a larger heap, so the RSS difference counts them too: for RSS per subscriber, the
 * feed part (bench/feed.bench.ts, no snapshots) is the figure; here the heap is.
 */
async function snapshotOf(server: Service, dir: string, label: string): Promise<{ file: string; rss: number; heapUsed: number; heapTotal: number }> {
  const known = new Set(await readdir(dir));
  server.process.kill("SIGUSR2");
  let file: string | undefined;
  let lastSize = -1;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    file ??= (await readdir(dir)).find((f) => f.endsWith(".heapsnapshot") && !known.has(f));
    if (!file) continue;
    const { size } = await stat(path.join(dir, file));
    // V8 writes the snapshot while the process stands still: the process answering again means it is done
    if (size === lastSize && size > 0) {
      await server.call("subscriptionsActive");
      break;
    }
    lastSize = size;
  }
  const { heapUsed, heapTotal } = await server.call<{ heapUsed: number; heapTotal: number }>("memory");
  const rss = vmRss(server.process.pid!);
  console.error(`  ${label}: ${file}, RSS ${(rss / 2 ** 20).toFixed(0)} MB, heap used ${(heapUsed / 2 ** 20).toFixed(0)} MB`);
  return { file: path.join(dir, file), rss, heapUsed, heapTotal };
}

const dir = KEEP ?? (await mkdtemp(path.join(os.tmpdir(), "feed-heap-")));
await mkdir(dir, { recursive: true });
const cluster = await startCluster();
const children: Child<unknown>[] = [];
let server: Service | undefined;
try {
  const config = { WS_MAX_SUBSCRIPTIONS_PER_USER: String(SUBSCRIBERS), PROGRESS_EVENTS_PER_SECOND: "10" };
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${dir}`;
  server = await startService("postgres", cluster.url, { config, workers: true, exposeGc: true });
  const { base, authorization, domain } = server.ready;
  const before = await snapshotOf(server, dir, "0 subscribers");
  const wsUrl = `${base.replace(/^http/, "ws")}/graphql`;
  const perLoader = Array.from({ length: LOADERS }, (_, i) => Math.floor(SUBSCRIBERS / LOADERS) + (i < SUBSCRIBERS % LOADERS ? 1 : 0));
  children.push(
    ...(await Promise.all(
      perLoader.map((count) =>
        spawnChild(path.join(LIB, "feed-subscriber-process.ts"), [wsUrl, authorization, domain, String(count)], {
          env: { NODE_OPTIONS: "" },
        }),
      ),
    )),
  );
  let active = 0;
  for (let stable = 0; active < SUBSCRIBERS && stable < 60; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await server.call<number>("subscriptionsActive");
    stable = now === active ? stable + 1 : 0;
    active = now;
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const after = await snapshotOf(server, dir, `${active} subscribers`);

  const [a, b] = [bySelfSize(before.file), bySelfSize(after.file)];
  const rows: { key: string; size: number; count: number }[] = [];
  for (const [key, { size, count }] of b) {
    const was = a.get(key) ?? { size: 0, count: 0 };
    rows.push({ key, size: size - was.size, count: count - was.count });
  }
  rows.sort((x, y) => y.size - x.size);
  const total = rows.reduce((sum, r) => sum + r.size, 0);
  console.log(
    `### Heap per subscriber by constructor: ${active.toLocaleString("en")} subscribers on one process (${machine()}, load ${os.loadavg()[0]!.toFixed(2)})\n`,
  );
  console.log(
    `RSS ${(before.rss / 2 ** 20).toFixed(0)} → ${(after.rss / 2 ** 20).toFixed(0)} MB (${((after.rss - before.rss) / active / 1024).toFixed(1)} KB per subscriber); ` +
      `heap used ${(before.heapUsed / 2 ** 20).toFixed(0)} → ${(after.heapUsed / 2 ** 20).toFixed(0)} MB (${((after.heapUsed - before.heapUsed) / active / 1024).toFixed(1)} KB); ` +
      `heap committed ${(before.heapTotal / 2 ** 20).toFixed(0)} → ${(after.heapTotal / 2 ** 20).toFixed(0)} MB (${((after.heapTotal - before.heapTotal) / active / 1024).toFixed(1)} KB); ` +
      `the snapshots' self sizes differ by ${(total / active / 1024).toFixed(1)} KB per subscriber.\n`,
  );
  console.log(
    table(
      ["Node type and constructor", "Objects per subscriber", "Bytes per subscriber", "Share"],
      rows
        .filter((r) => Math.abs(r.size) / active >= 8)
        .slice(0, 60)
        .map((r) => [`\`${r.key}\``, (r.count / active).toFixed(2), (r.size / active).toFixed(0), `${((100 * r.size) / total).toFixed(1)} %`]),
    ),
  );
} finally {
  await Promise.all(children.map((c) => c.stop()));
  await server?.stop();
  cluster.stop();
  if (!KEEP) await rm(dir, { recursive: true, force: true });
}
