import { randomUUID } from "node:crypto";
import { createPubSub } from "@graphql-yoga/subscription";
import type { Redis } from "ioredis";
import { log } from "../log.ts";
import { eventNotifications } from "../observability/metrics.ts";
import { closeRedis, redisConnection, START_TIMEOUT_MS } from "../db/redis.ts";
import { type EventBus, listenOn, publishingTarget, SeenBatches, TickBatches, type Topics, unboundedEventTarget } from "./bus.ts";

/**
 * The event bus across processes on Redis (REDIS_URL, CONTRACT §7.6), with the guarantees of the
 * PostgreSQL bus: what one tick publishes is one entry (XADD) of one Redis stream; every process
 * reads the stream from the last entry it delivered (XREAD BLOCK on a connection of its own), so
 * that a reader whose connection dropped, or whose Redis restarted, replays what it missed instead
 * of losing it. Entries are delivered in stream order, each batch once.
 *
 * One stream for the whole bus, not one per domain: every process must hear every event (the
 * credential revocations and job progress its caches and workers follow, and the case changes its
 * subscriptions filter by domain in the resolver), and the events of one tick must stay in order
 * across domains. Per-domain streams would need each reader to block on an open-ended set of keys
 * (every domain, new ones appearing) for no saving, since each process reads them all anyway.
 */

export const EVENT_STREAM = "gateway:events";
/**
 * How many batches the stream keeps (XADD MAXLEN ~, trimmed by whole nodes, so a little more): the
 * replay window of a reader that was away. At the rates measured for this bus, minutes of events.
 */
export const EVENT_STREAM_MAX_BATCHES = 10_000;
/** How long one XREAD blocks before it is sent again (a closed bus stops within this). */
const READ_BLOCK_MS = 5000;
const READ_COUNT = 500;
/** How much longer than its BLOCK a read may take to answer before it is given up and sent again. */
const READ_GRACE_MS = 5000;
/** After a read that failed other than by a lost connection (which ioredis waits out), before the next. */
const READ_RETRY_MS = 1000;
/** How long `delivered` waits for a batch to come back before giving up (Redis is away). */
const DELIVERY_WAIT_MS = 3000;
/**
 * How many reconnect attempts a publish made while Redis is away waits for before it is dropped
 * (and logged): with the connection's backoff (250 ms doubling to 5 s), about a minute.
 */
const PUBLISH_RETRIES = 15;

type BusEvent = { type: string; detail: unknown };
type StreamEntry = [id: string, fields: string[]];

/** Stream ids are `milliseconds-sequence`; true when `a` comes after `b`. */
function isAfter(a: string, b: string): boolean {
  const [am = 0n, as = 0n] = a.split("-").map(BigInt);
  const [bm = 0n, bs = 0n] = b.split("-").map(BigInt);
  return am > bm || (am === bm && as > bs);
}

function field(fields: string[], name: string): string | undefined {
  const at = fields.indexOf(name);
  return at >= 0 && at % 2 === 0 ? fields[at + 1] : undefined;
}

/**
 * The reader: one blocking XREAD after another, each from the last id delivered. When its
 * connection drops, ioredis reconnects and sends the unanswered XREAD again, from the same id: what
 * was added meanwhile is the replay.
 */
class StreamReader {
  private readonly seen = new SeenBatches();
  /** who waits for a batch this process published to come back, by batch id */
  private readonly awaiting = new Map<string, (() => void)[]>();
  private closed = false;
  private reconnected = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly local: EventTarget,
    private lastId: string,
  ) {
    // the connection is up already (the stream's end was read on it): each "ready" is a reconnect
    redis.on("ready", () => (this.reconnected = true));
  }

  start() {
    this.running = this.run();
  }

  async stop() {
    this.closed = true;
    this.redis.disconnect();
    await atMost(this.running, READ_BLOCK_MS);
  }

  /** Waits for a published batch to come back through the stream (at most DELIVERY_WAIT_MS). */
  async cameBack(batch: string) {
    if (this.seen.has(batch)) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DELIVERY_WAIT_MS).unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.awaiting.set(batch, [...(this.awaiting.get(batch) ?? []), done]);
    }).finally(() => this.awaiting.delete(batch));
  }

  private async run() {
    while (!this.closed) {
      try {
        const from = this.lastId;
        const reply = await this.redis.xread("COUNT", READ_COUNT, "BLOCK", READ_BLOCK_MS, "STREAMS", EVENT_STREAM, from);
        const entries = (reply?.[0]?.[1] ?? []) as StreamEntry[];
        if (this.reconnected) await this.afterReconnect(from, entries);
        for (const [id, fields] of entries) this.deliver(id, fields);
      } catch (error) {
        if (this.closed) return;
        // while Redis is away the connection has said so already; a read that fails on a live one is news
        if (this.redis.status === "ready") log.error("event stream read failed", { error });
        await new Promise((resolve) => setTimeout(resolve, READ_RETRY_MS));
      }
    }
  }

  /**
   * Says what the first read after a reconnect replayed, and warns when the stream no longer holds
   * the entry after the last one read (trimmed past this reader, or a Redis restarted empty).
   */
  private async afterReconnect(from: string, entries: StreamEntry[]) {
    this.reconnected = false;
    if (entries.length > 0) log.info("event listener replayed missed events", { batches: entries.length });
    const [oldest] = (await this.redis.xrange(EVENT_STREAM, "-", "+", "COUNT", 1)) as StreamEntry[];
    if (oldest && from !== "0-0" && isAfter(oldest[0], from)) {
      log.warn("event listener may have missed events: the stream no longer reaches back to its last read", { lastRead: from });
    }
  }

  private deliver(id: string, fields: string[]) {
    this.lastId = id;
    const batch = field(fields, "batch") ?? id;
    if (this.seen.has(batch)) return;
    this.seen.add(batch);
    eventNotifications.inc({ direction: "received" });
    for (const event of JSON.parse(field(fields, "events") ?? "[]") as BusEvent[]) {
      this.local.dispatchEvent(new CustomEvent(event.type, { detail: event.detail }));
    }
    for (const resolve of this.awaiting.get(batch) ?? []) resolve();
    this.awaiting.delete(batch);
  }
}

/**
 * What one tick publishes goes out in one XADD; commands on one connection run in order, so batches
 * enter the stream in the order they were published. Each batch carries an id of its own, so that
 * one ioredis sent again after a dropped connection (Redis may have added it already) is delivered once.
 */
class StreamPublisher {
  private readonly batches = new TickBatches((events) => this.flush(events));
  /** the id of the last batch this process published */
  lastPublished: string | undefined;

  constructor(private readonly redis: Redis) {}

  publish(message: string) {
    this.batches.add(message);
  }

  /** Resolves once what was published before this call has left (or was given up on). */
  flushed() {
    return this.batches.sent();
  }

  private async flush(events: string[]) {
    const batch = randomUUID();
    try {
      await this.redis.xadd(EVENT_STREAM, "MAXLEN", "~", EVENT_STREAM_MAX_BATCHES, "*", "batch", batch, "events", `[${events.join(",")}]`);
      this.lastPublished = batch;
      eventNotifications.inc({ direction: "sent" });
    } catch (error) {
      log.error("event publish failed", { error, events: events.length });
    }
  }
}

/** The last entry of the stream now: this bus delivers what comes after it. */
async function streamEnd(redis: Redis): Promise<string> {
  const [last] = (await redis.xrevrange(EVENT_STREAM, "+", "-", "COUNT", 1)) as StreamEntry[];
  return last?.[0] ?? "0-0";
}

/** Connects both connections; fails (as the PostgreSQL bus does) when Redis does not answer at start. */
export async function redisEventBus(url: string): Promise<EventBus> {
  const local = unboundedEventTarget();
  const publisherConnection = redisConnection(url, "events-publisher", { maxRetriesPerRequest: PUBLISH_RETRIES });
  // the reader's XREAD waits for Redis to come back, however long it is away
  // (a read that never answers, on a connection that died without closing, is given up and sent again)
  const readerConnection = redisConnection(url, "events-reader", { maxRetriesPerRequest: null, commandTimeout: READ_BLOCK_MS + READ_GRACE_MS });
  let reader: StreamReader;
  try {
    const started = await startsWithin(streamEnd(readerConnection), START_TIMEOUT_MS);
    reader = new StreamReader(readerConnection, local, started);
  } catch (error) {
    readerConnection.disconnect();
    publisherConnection.disconnect();
    throw error;
  }
  reader.start();
  const publisher = new StreamPublisher(publisherConnection);

  const eventTarget = publishingTarget(local, (message) => publisher.publish(message));
  return {
    pubsub: createPubSub<Topics>({ eventTarget: eventTarget as never }),
    listen: listenOn(local),
    async delivered() {
      await atMost(publisher.flushed(), DELIVERY_WAIT_MS);
      const batch = publisher.lastPublished;
      if (batch !== undefined) await reader.cameBack(batch);
    },
    async close() {
      await atMost(publisher.flushed(), DELIVERY_WAIT_MS);
      await reader.stop();
      await closeRedis(publisherConnection);
    },
  };
}

function startsWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis (REDIS_URL) did not answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function atMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}
