/**
 * Part 6, subscriptions: 1,000 WebSocket subscribers (quick: 200) to one multimedia job's
 * `multimediaProgress`, in two child processes; the service writes the job's progress (the row
 * update, then the event), one value at a time, and for each value we take the time from just
 * before the write to the moment the last (and the first) subscriber received it.
 */
import path from "node:path";
import { LIB, log, table, type DbContext, type PartResult } from "./lib/harness.ts";
import { spawnChild, type Child } from "./lib/rpc.ts";
import { ms, percentile } from "./lib/stats.ts";

const PROCESSES = 2;

interface Arrival {
  current: number;
  first: number;
  last: number;
}

export async function subscriptions(ctx: DbContext): Promise<PartResult> {
  const { base, authorization, domain } = ctx.service.ready;
  const subscribers = ctx.quick ? 200 : 1000;
  const events = ctx.quick ? 20 : 100;
  const processingId = await ctx.service.call<string>("createJob", events + 1);
  const wsUrl = `${base.replace(/^http/, "ws")}/graphql`;

  log(`  subscriptions: ${subscribers} subscribers in ${PROCESSES} processes`);
  const children: Child<unknown>[] = [];
  const waiting = new Map<number, { arrivals: Arrival[]; done: (a: Arrival[]) => void }>();
  const expect = (current: number) =>
    new Promise<Arrival[]>((done) => {
      const entry = waiting.get(current) ?? { arrivals: [], done };
      entry.done = done;
      waiting.set(current, entry);
      if (entry.arrivals.length === PROCESSES) done(entry.arrivals);
    });
  try {
    const connectStart = performance.now();
    children.push(
      ...(await Promise.all(
        Array.from({ length: PROCESSES }, () =>
          spawnChild(path.join(LIB, "subscriber-process.ts"), [wsUrl, authorization, domain, processingId, String(subscribers / PROCESSES)]),
        ),
      )),
    );
    const connectMs = performance.now() - connectStart;
    for (const child of children) {
      child.onEvent((a: Arrival) => {
        const entry = waiting.get(a.current) ?? { arrivals: [], done: () => {} };
        entry.arrivals.push(a);
        waiting.set(a.current, entry);
        if (entry.arrivals.length === PROCESSES) entry.done(entry.arrivals);
      });
    }

    log(`  subscriptions: ${events} progress writes`);
    const last: number[] = [];
    const first: number[] = [];
    // the first write is a warm-up, not counted
    for (let current = 1; current <= events + 1; current++) {
      const delivered = expect(current);
      const writtenAt = await ctx.service.call<number>("progress", current);
      const arrivals = await delivered;
      if (current === 1) continue;
      last.push(Math.max(...arrivals.map((a) => a.last)) - writtenAt);
      first.push(Math.min(...arrivals.map((a) => a.first)) - writtenAt);
    }
    const markdown = [
      `### Subscriptions: ${subscribers.toLocaleString("en")} subscribers on one job, ${events} progress writes`,
      "",
      `Subscribers: ${PROCESSES} child processes, one WebSocket each (graphql-ws, credentials in \`connection_init\`); all connected and subscribed in ${(connectMs / 1000).toFixed(1)} s. ` +
        `Events travel ${ctx.kind === "postgres" ? "through PostgreSQL `NOTIFY`/`LISTEN`" : "through the in-process PubSub"}. Time from just before the progress write (an UPDATE of the job row, then the event) to delivery:`,
      "",
      table(
        ["Delivery", "p50 (ms)", "p99 (ms)", "max (ms)"],
        [
          ["First subscriber", ms(percentile(first, 50)), ms(percentile(first, 99)), ms(Math.max(...first))],
          [`Last of ${subscribers.toLocaleString("en")} subscribers`, ms(percentile(last, 50)), ms(percentile(last, 99)), ms(Math.max(...last))],
        ],
      ),
    ].join("\n");
    return { markdown, figures: { lastP50: percentile(last, 50), lastP99: percentile(last, 99) } };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}
