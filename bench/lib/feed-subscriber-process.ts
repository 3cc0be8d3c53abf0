/**
 * Child process: `count` dashboard subscribers, each on its own WebSocket (graphql-ws client,
 * credentials in connection_init), all subscribed to the domain's job feed
 * (`Subscription.multimediaJobs`). Every event's arrival (wall clock) is kept by the event's job,
 * state, attempt and progress, so that the parent can set it against the moment the server
 * published that event. Reports when every subscriber has had the final event of a job, and on
 * `report` what arrived and how busy this process was meanwhile (CPU, event-loop delay), to tell
 * whether the client side bounds the figures.
 *   argv: wsUrl authorization domain count
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { jobFeedSubscription } from "./queries.ts";
import { sendEvent, serveCalls } from "./rpc.ts";
import { wallClock } from "./stats.ts";

const [url, authorization, domain, countArg] = process.argv.slice(2);
const count = Number(countArg);

const FEED_QUERY = jobFeedSubscription("BenchFeed");

interface FeedEvent {
  multimediaJobs: { processingId: string; state: string; attempts: number; finishedAt: string | null; progress: { current: number } };
}

const arrivals = new Map<string, number[]>();
/** progress events (RUNNING, current > 0) each subscriber received */
const progressEvents = new Int32Array(count);
const clients: Client[] = [];
const finishedAt = new Map<string, string>();
let completed = 0;
let failures = 0;
/** connections that dropped and were opened again (graphql-ws retries): their events meanwhile are lost */
let reconnections = 0;
/** error messages of events, by message (an event with errors may still carry its job: it counts as arrived) */
const errors = new Map<string, number>();

/** Why a socket failed: its close code and reason, or the network error. */
function failureOf(error: unknown): string {
  // ws's CloseEvent and ErrorEvent keep their fields behind getters
  const e = error as { type?: string; code?: number; reason?: string; message?: string; error?: { message?: string } };
  return [e.type, e.code, e.reason, e.message ?? e.error?.message].filter((v) => v !== undefined && v !== "").join(" ") || String(error);
}
const failureReasons = new Map<string, number>();

/** One subscriber; resolves once its socket is acknowledged (or has failed for good). */
function subscriber(index: number): Promise<void> {
  let connections = 0;
  let ready: () => void;
  const acknowledged = new Promise<void>((resolve) => (ready = resolve));
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: authorization },
    lazy: false,
    // a handshake the loaded server reset is tried again (with graphql-ws's backoff)
    retryAttempts: 5,
    on: {
      connected: () => {
        if (++connections > 1) reconnections += 1;
        ready();
      },
    },
  });
  clients.push(client);
  client.subscribe<FeedEvent>(
    { query: FEED_QUERY, variables: { domain } },
    {
      next(result) {
        const at = wallClock();
        for (const error of result.errors ?? []) errors.set(error.message, (errors.get(error.message) ?? 0) + 1);
        const job = result.data?.multimediaJobs;
        if (!job) return;
        const state = job.state.toLowerCase();
        const key = `${job.processingId} ${state} ${job.attempts} ${job.progress.current}`;
        const list = arrivals.get(key);
        if (list) list.push(at);
        else arrivals.set(key, [at]);
        if (state === "running" && job.progress.current > 0) progressEvents[index] += 1;
        if (state === "complete" || state === "failed") {
          if (job.finishedAt) finishedAt.set(job.processingId, job.finishedAt);
          if (++completed === count) sendEvent({ completed });
        }
      },
      error(error) {
        failures += 1;
        const reason = failureOf(error);
        failureReasons.set(reason, (failureReasons.get(reason) ?? 0) + 1);
        ready();
      },
      complete() {},
    },
  );
  return acknowledged;
}

// in batches of 50 handshakes, each batch once the last is acknowledged: a loaded server that
// cannot accept them as fast as they come resets the connections over its listen backlog
const BATCH = 50;
for (let i = 0; i < count; i += BATCH) {
  await Promise.all(Array.from({ length: Math.min(BATCH, count - i) }, (_, j) => subscriber(i + j)));
}

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
let cpuStart = process.cpuUsage();
let wallStart = performance.now();

serveCalls(
  { subscribers: count },
  {
    /** subscribers whose socket failed for good */
    failed: () => failures,
    /** From now on CPU and event-loop delay are measured (the job's run). */
    measure() {
      loopDelay.reset();
      loopDelay.enable();
      cpuStart = process.cpuUsage();
      wallStart = performance.now();
    },
    report() {
      loopDelay.disable();
      const cpu = process.cpuUsage(cpuStart);
      return {
        arrivals: [...arrivals].map(([key, times]) => [key, Float64Array.from(times)] as const),
        progressEvents,
        finishedAt: [...finishedAt],
        failures,
        failureReasons: [...failureReasons],
        reconnections,
        errors: [...errors],
        cpuMs: (cpu.user + cpu.system) / 1000,
        wallMs: performance.now() - wallStart,
        loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
        loopDelayMaxMs: loopDelay.max / 1e6,
      };
    },
  },
  async () => {
    await Promise.all(clients.map((c) => c.dispose()));
  },
);
