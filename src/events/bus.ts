import { setMaxListeners } from "node:events";
import { createPubSub } from "@graphql-yoga/subscription";
import pg from "pg";
import type { CredentialsChangedEvent } from "../auth/credential.events.ts";
import type { CaseChangedEvent } from "../cases/case.events.ts";
import { log } from "../log.ts";
import { eventNotifications } from "../observability/metrics.ts";
import type { MultimediaStatus } from "../multimedia/job.events.ts";

/**
 * The one PubSub of the process, with typed topics. Embedded mode delivers in process; PostgreSQL
 * mode sends every event through NOTIFY and delivers what LISTEN receives, so that a subscriber on
 * any process sees the events published on every process. Events published in one tick leave in
 * one statement (a 100-case bulk write is one round trip, not 100); each batch is logged in the
 * event_payloads table, which carries a batch too large for a NOTIFY (a finished job's result) and
 * lets a listener that reconnects replay what it missed.
 */
export type Topics = {
  caseChanged: [CaseChangedEvent];
  /** keyed by domain id: a job's own feed and its domain's dashboards read the same events */
  multimediaProgress: [string, MultimediaStatus];
  credentialsChanged: [CredentialsChangedEvent];
};

export type PubSub = ReturnType<typeof createPubSub<Topics>>;

/** The topics published without a routing id, whose events carry one payload. */
export type PlainTopic = { [K in keyof Topics]: Topics[K] extends [unknown] ? K : never }[keyof Topics];
/** The topics published with a routing id (a domain's), whose subscribers hear the events of one id. */
export type RoutedTopic = { [K in keyof Topics]: Topics[K] extends [string, unknown] ? K : never }[keyof Topics];

export interface EventBus {
  pubsub: PubSub;
  /**
   * Calls `handler` for each event of the topic as this process receives it, synchronously (no
   * iterator in between): what must be in effect before this process handles its next request.
   */
  listen<K extends PlainTopic>(topic: K, handler: (payload: Topics[K][0]) => void): () => void;
  /**
   * The same for the events of one routing id of a routed topic. What thousands of subscriptions
   * of one domain follow: a handler each costs a fraction of a subscription iterator each (a
   * Repeater's promises per event per subscriber were an eighth of a busy feed's CPU).
   */
  listen<K extends RoutedTopic>(topic: K, id: string, handler: (payload: Topics[K][1]) => void): () => void;
  /**
   * Resolves once what this process has published so far has been delivered: in PostgreSQL mode,
   * once the batch came back through this process's own LISTEN, by which time PostgreSQL has handed
   * it to every listening process (waits at most a few seconds while the listener is down).
   */
  delivered(): Promise<void>;
  close(): Promise<void>;
}

/** How long `delivered` waits for a batch to come back before giving up (the listener is down). */
const DELIVERY_WAIT_MS = 3000;

function listenOn(target: EventTarget): EventBus["listen"] {
  return (topic: string, ...rest: unknown[]) => {
    const handler = rest.pop() as (payload: unknown) => void;
    // the event type graphql-yoga's PubSub gives a routed topic's events: "topic:id"
    const type = rest.length ? `${topic}:${rest[0] as string}` : topic;
    const listener = (event: Event) => handler((event as CustomEvent).detail);
    target.addEventListener(type, listener);
    return () => target.removeEventListener(type, listener);
  };
}

const CHANNEL = "gateway_events";
/** NOTIFY payloads must stay under 8000 bytes; a larger batch is read from event_payloads */
const MAX_INLINE_BYTES = 7000;
/**
 * How long a published batch stays in event_payloads: long enough for every listener to read a
 * large one, or to replay it after its LISTEN connection came back (within the 5 s backoff).
 */
const EVENT_LOG_LIFETIME = "2 minutes";
const PRUNE_EVERY_MS = 30_000;
/**
 * Batches of concurrent publishers may commit a little out of id order: a replay starts this many
 * ids before the last one delivered, and the batches already delivered are skipped.
 */
const REPLAY_SLACK = 1000n;
const SEEN_CAPACITY = 10_000;
const RETRY_MAX_MS = 5000;

/**
 * One statement per batch: log it, then NOTIFY its id, with the events inline when they fit.
 * Both happen at commit, so a listener never hears of a batch it cannot read.
 */
const PUBLISH = `WITH logged AS (INSERT INTO event_payloads (payload) VALUES ($2::text) RETURNING id)
  SELECT id::text AS seq, pg_notify($1, CASE WHEN octet_length($2::text) <= ${MAX_INLINE_BYTES}
    THEN '{"seq":"' || id || '","events":' || $2::text || '}' ELSE '{"seq":"' || id || '"}' END) FROM logged`;

/** An EventTarget that any number of subscribers may listen on (no MaxListenersExceededWarning). */
function unboundedEventTarget(): EventTarget {
  const target = new EventTarget();
  setMaxListeners(0, target);
  return target;
}

export function createLocalPubSub(): PubSub {
  return createPubSub<Topics>({ eventTarget: unboundedEventTarget() as never });
}

/** In process, an event is delivered while it is published. */
export function localEventBus(): EventBus {
  const target = unboundedEventTarget();
  return {
    pubsub: createPubSub<Topics>({ eventTarget: target as never }),
    listen: listenOn(target),
    delivered: async () => {},
    close: async () => {},
  };
}

type BusEvent = { type: string; detail: unknown };

/** Remembers the batches delivered lately (insertion order), so that a replay skips them. */
function seenBatches() {
  const seen = new Set<string>();
  return {
    has: (seq: string) => seen.has(seq),
    add(seq: string) {
      seen.add(seq);
      if (seen.size > SEEN_CAPACITY) seen.delete(seen.values().next().value!);
    },
  };
}

/**
 * An EventTarget whose dispatch is a NOTIFY and whose listeners hear the channel's LISTEN. Every
 * batch is also logged in event_payloads with a sequence number, so that a listener whose
 * connection dropped (PostgreSQL restarted) replays, once it listens again, the batches published
 * meanwhile: events published after the database is back are delivered, late rather than lost.
 */
export async function postgresEventBus(url: string): Promise<EventBus> {
  const local = unboundedEventTarget();
  // one connection, so that NOTIFYs (and so events) keep the order they were published in
  const notifier = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5000 });
  // An idle pooled connection the server closes (restart, shutdown) must not crash the process.
  notifier.on("error", (error) => log.error("event publisher connection lost", { error }));
  let listener: pg.Client | undefined;
  let closed = false;

  // Delivery: batches one after another (one read from the table does not let the next overtake
  // it), each once (a replayed batch may also come by NOTIFY).
  const seen = seenBatches();
  /** who waits for a batch this process published to come back, by sequence number */
  const awaiting = new Map<string, (() => void)[]>();
  let lastPublished: string | undefined;
  /** batches up to here were published before this bus listened: never replayed */
  let floor: bigint | undefined;
  let lastSeq = 0n;
  let delivering = Promise.resolve();
  const enqueue = (task: () => Promise<void>) => {
    delivering = delivering.then(task).catch((error: unknown) => log.error("undeliverable event notification", { error }));
  };
  const deliverBatch = (seq: string, events: BusEvent[]) => {
    if (seen.has(seq)) return;
    seen.add(seq);
    eventNotifications.inc({ direction: "received" });
    if (BigInt(seq) > lastSeq) lastSeq = BigInt(seq);
    for (const event of events) local.dispatchEvent(new CustomEvent(event.type, { detail: event.detail }));
    for (const resolve of awaiting.get(seq) ?? []) resolve();
    awaiting.delete(seq);
  };
  const storedBatch = async (seq: string) => {
    const { rows } = await notifier.query<{ payload: string }>("SELECT payload FROM event_payloads WHERE id = $1", [seq]);
    return rows[0] ? (JSON.parse(rows[0].payload) as BusEvent[]) : [];
  };
  const deliver = (payload: string) =>
    enqueue(async () => {
      const message = JSON.parse(payload) as { seq: string; events?: BusEvent[] };
      if (!seen.has(message.seq)) deliverBatch(message.seq, message.events ?? (await storedBatch(message.seq)));
    });
  /** After a reconnect: the batches logged since the last one delivered, in order. */
  const replay = (client: pg.Client) =>
    enqueue(async () => {
      const from = lastSeq - REPLAY_SLACK > floor! ? lastSeq - REPLAY_SLACK : floor!;
      const { rows } = await client.query<{ seq: string; payload: string }>(
        "SELECT id::text AS seq, payload FROM event_payloads WHERE id > $1 ORDER BY id",
        [from.toString()],
      );
      const missed = rows.filter((r) => !seen.has(r.seq));
      if (missed.length > 0) log.info("event listener replayed missed events", { batches: missed.length });
      for (const row of missed) deliverBatch(row.seq, JSON.parse(row.payload) as BusEvent[]);
    });

  // The LISTEN connection: when it drops (PostgreSQL restarted, network), reconnect with backoff
  // until it is back, for as long as the bus is open; at once when a publish shows the database answers.
  let retryMs = 250;
  let retryTimer: NodeJS.Timeout | undefined;
  let connecting = false;
  const reconnect = (client: pg.Client, error?: Error) => {
    if (closed || listener !== client) return;
    listener = undefined;
    log.error("event listener connection lost; reconnecting", { error: error && { name: error.name, message: error.message } });
    void client.end().catch(() => {});
    scheduleConnect(retryMs);
  };
  const scheduleConnect = (delay: number) => {
    if (closed || connecting || listener) return;
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      connecting = true;
      connect().then(
        () => {
          connecting = false;
          retryMs = 250;
          log.info("event listener reconnected");
        },
        () => {
          connecting = false;
          retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
          scheduleConnect(retryMs);
        },
      );
    }, delay).unref();
  };
  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, keepAlive: true });
    // what arrives before the replay is queued waits for it, so that events keep their order
    let early: string[] | undefined = [];
    client.on("notification", (message) => (early ? early.push(message.payload ?? "") : deliver(message.payload ?? "")));
    client.on("error", (error) => reconnect(client, error));
    client.on("end", () => reconnect(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (floor === undefined) {
        const { rows } = await client.query<{ seq: string }>("SELECT coalesce(max(id), 0)::text AS seq FROM event_payloads");
        floor = BigInt(rows[0]!.seq);
      }
    } catch (error) {
      void client.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    listener = client;
    replay(client);
    for (const payload of early) deliver(payload);
    early = undefined;
  };
  await connect();

  // Publishing: what one tick publishes goes out in one statement, in order.
  let pending: string[] = [];
  let prunedAt = Date.now();
  const flush = async () => {
    const batch = pending;
    pending = [];
    try {
      const { rows } = await notifier.query<{ seq: string }>(PUBLISH, [CHANNEL, `[${batch.join(",")}]`]);
      lastPublished = rows[0]?.seq;
      eventNotifications.inc({ direction: "sent" });
    } catch (error) {
      log.error("event publish failed", { error, events: batch.length });
      return;
    }
    // the database answers again: listen again now rather than at the end of the backoff
    if (!listener) scheduleConnect(0);
    if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = Date.now();
      await notifier
        .query(`DELETE FROM event_payloads WHERE created_at < now() - interval '${EVENT_LOG_LIFETIME}'`)
        .catch((error: unknown) => log.error("event log prune failed", { error }));
    }
  };
  // flushes run one at a time, so batches leave in the order they were published
  let flushing = Promise.resolve();
  const publish = (message: string) => {
    if (pending.length === 0) setImmediate(() => (flushing = flushing.then(flush)));
    pending.push(message);
  };

  const eventTarget = {
    addEventListener: local.addEventListener.bind(local),
    removeEventListener: local.removeEventListener.bind(local),
    dispatchEvent(event: Event) {
      publish(JSON.stringify({ type: event.type, detail: (event as CustomEvent).detail }));
      return true;
    },
  };
  /** Waits for the batch to come back through LISTEN (at most DELIVERY_WAIT_MS). */
  const cameBack = (seq: string) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DELIVERY_WAIT_MS).unref();
      awaiting.set(seq, [...(awaiting.get(seq) ?? []), () => (clearTimeout(timer), resolve())]);
    }).finally(() => awaiting.delete(seq));
  return {
    pubsub: createPubSub<Topics>({ eventTarget: eventTarget as never }),
    listen: listenOn(local),
    async delivered() {
      // what this tick published is flushed on the next turn of the loop (publish): let it be queued
      await new Promise((resolve) => setImmediate(resolve));
      await flushing;
      const seq = lastPublished;
      if (seq !== undefined && !seen.has(seq)) await cameBack(seq);
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      await new Promise((resolve) => setImmediate(resolve));
      await flushing;
      await listener?.end().catch(() => {});
      await delivering;
      await notifier.end().catch(() => {});
    },
  };
}
