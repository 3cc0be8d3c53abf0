import { randomUUID } from "node:crypto";
import { createPubSub } from "@graphql-yoga/subscription";
import pg from "pg";
import { ConfigError } from "../config.ts";
import { log } from "../log.ts";
import { eventNotifications } from "../observability/metrics.ts";
import { type EventBus, listenOn, publishingTarget, SeenBatches, TickBatches, type Topics, unboundedEventTarget } from "./bus.ts";

/**
 * The event bus across processes on PostgreSQL. Events published in one tick leave in one
 * statement (a 100-case bulk write is one round trip, not 100) as a batch logged in the
 * event_payloads table, which carries a batch too large for a NOTIFY (a finished job's result) and
 * lets a listener that reconnects replay what it missed: events published while the database was
 * away are delivered late rather than lost. Three parts: the publisher (NOTIFY), the listener
 * (LISTEN, reconnecting) and the delivery (in order, each batch once, replays).
 *
 * LISTEN needs a session of its own: behind a transaction-pooling PgBouncer it goes to the direct
 * connection (DATABASE_DIRECT_URL), where the publisher's NOTIFY may stay on the pooled one (one
 * statement, sent at its commit; one at a time, so in order). A bus whose LISTEN hears nothing
 * refuses to start rather than drop every event in silence.
 */

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
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;
/** How long `delivered` waits for a batch to come back before giving up (the listener is down). */
const DELIVERY_WAIT_MS = 3000;
/** How long the start waits to hear its own probe: a direct connection hears it within milliseconds. */
const PROBE_WAIT_MS = 5000;

/**
 * One statement per batch: log it, then NOTIFY its id, with the events inline when they fit.
 * Both happen at commit, so a listener never hears of a batch it cannot read.
 */
const PUBLISH = `WITH logged AS (INSERT INTO event_payloads (payload) VALUES ($2::text) RETURNING id)
  SELECT id::text AS seq, pg_notify($1, CASE WHEN octet_length($2::text) <= ${MAX_INLINE_BYTES}
    THEN '{"seq":"' || id || '","events":' || $2::text || '}' ELSE '{"seq":"' || id || '"}' END) FROM logged`;

type BusEvent = { type: string; detail: unknown };

/**
 * Hands the batches heard to this process's listeners: one after another (one read from the table
 * does not let the next overtake it), each once (a replayed batch may also come by NOTIFY).
 */
class BatchDelivery {
  private readonly seen = new SeenBatches();
  /** who waits for a batch this process published to come back, by sequence number */
  private readonly awaiting = new Map<string, (() => void)[]>();
  /** batches up to here were published before this bus listened: never replayed */
  private floor: bigint | undefined;
  private lastSeq = 0n;
  private queue = Promise.resolve();

  constructor(
    private readonly local: EventTarget,
    private readonly notifier: pg.Pool,
  ) {}

  /** Called once the first LISTEN is up: what was logged before it is not this bus's to replay. */
  async startAfterLogged(client: pg.Client) {
    if (this.floor !== undefined) return;
    const { rows } = await client.query<{ seq: string }>("SELECT coalesce(max(id), 0)::text AS seq FROM event_payloads");
    this.floor = BigInt(rows[0]!.seq);
  }

  /** A NOTIFY's payload: the batch inline, or its sequence number to read from the log. */
  deliver(payload: string) {
    this.enqueue(async () => {
      const message = JSON.parse(payload) as { seq: string; events?: BusEvent[] };
      if (!this.seen.has(message.seq)) this.deliverBatch(message.seq, message.events ?? (await this.storedBatch(message.seq)));
    });
  }

  /** After a reconnect: the batches logged since the last one delivered, in order. */
  replay(client: pg.Client) {
    this.enqueue(async () => {
      const floor = this.floor!;
      const from = this.lastSeq - REPLAY_SLACK > floor ? this.lastSeq - REPLAY_SLACK : floor;
      const { rows } = await client.query<{ seq: string; payload: string }>(
        "SELECT id::text AS seq, payload FROM event_payloads WHERE id > $1 ORDER BY id",
        [from.toString()],
      );
      const missed = rows.filter((r) => !this.seen.has(r.seq));
      if (missed.length > 0) log.info("event listener replayed missed events", { batches: missed.length });
      for (const row of missed) this.deliverBatch(row.seq, JSON.parse(row.payload) as BusEvent[]);
    });
  }

  /** Waits for a published batch to come back through LISTEN (at most DELIVERY_WAIT_MS). */
  async cameBack(seq: string) {
    if (this.seen.has(seq)) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DELIVERY_WAIT_MS).unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.awaiting.set(seq, [...(this.awaiting.get(seq) ?? []), done]);
    }).finally(() => this.awaiting.delete(seq));
  }

  /** Resolves once every batch heard so far has been handed on. */
  settled() {
    return this.queue;
  }

  private enqueue(task: () => Promise<void>) {
    this.queue = this.queue.then(task).catch((error: unknown) => log.error("undeliverable event notification", { error }));
  }

  private deliverBatch(seq: string, events: BusEvent[]) {
    if (this.seen.has(seq)) return;
    this.seen.add(seq);
    eventNotifications.inc({ direction: "received" });
    if (BigInt(seq) > this.lastSeq) this.lastSeq = BigInt(seq);
    for (const event of events) this.local.dispatchEvent(new CustomEvent(event.type, { detail: event.detail }));
    for (const resolve of this.awaiting.get(seq) ?? []) resolve();
    this.awaiting.delete(seq);
  }

  private async storedBatch(seq: string) {
    const { rows } = await this.notifier.query<{ payload: string }>("SELECT payload FROM event_payloads WHERE id = $1", [seq]);
    return rows[0] ? (JSON.parse(rows[0].payload) as BusEvent[]) : [];
  }
}

/**
 * The LISTEN connection: when it drops (PostgreSQL restarted, network), it reconnects with backoff
 * until it is back, for as long as the bus is open, and at once when a publish shows that the
 * database answers. Each connection replays what was missed before it delivers what it hears.
 */
class NotifyListener {
  private client: pg.Client | undefined;
  private closed = false;
  private connecting = false;
  private retryMs = RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  /** a channel of this listener alone, which the start's probe notifies */
  private readonly probeChannel = `gateway_probe_${randomUUID().replace(/-/g, "")}`;
  private probeHeard: (() => void) | undefined;

  constructor(
    private readonly url: string,
    private readonly delivery: BatchDelivery,
  ) {}

  /**
   * Whether a NOTIFY sent through `notifier` reaches this listener. Through a transaction pooler it
   * never does: the session that ran LISTEN serves other clients, and what it hears goes nowhere.
   */
  async hears(notifier: pg.Pool): Promise<boolean> {
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), PROBE_WAIT_MS).unref();
      this.probeHeard = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    await notifier.query("SELECT pg_notify($1, '')", [this.probeChannel]);
    return heard.finally(() => (this.probeHeard = undefined));
  }

  get listening() {
    return this.client !== undefined;
  }

  async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000, keepAlive: true });
    // what arrives before the replay is queued waits for it, so that events keep their order
    let early: string[] | undefined = [];
    client.on("notification", (message) => {
      if (message.channel === this.probeChannel) this.probeHeard?.();
      else if (early) early.push(message.payload ?? "");
      else this.delivery.deliver(message.payload ?? "");
    });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}; LISTEN ${this.probeChannel}`);
      await this.delivery.startAfterLogged(client);
    } catch (error) {
      void client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.delivery.replay(client);
    for (const payload of early) this.delivery.deliver(payload);
    early = undefined;
  }

  /** Tries again after `delay`, unless already listening or trying. */
  retry(delay: number) {
    if (this.closed || this.connecting || this.client) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connecting = true;
      this.connect().then(
        () => {
          this.connecting = false;
          this.retryMs = RETRY_FIRST_MS;
          log.info("event listener reconnected");
        },
        () => {
          this.connecting = false;
          this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
          this.retry(this.retryMs);
        },
      );
    }, delay).unref();
  }

  /** No more reconnecting: the bus is closing. */
  stop() {
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  async close() {
    this.stop();
    await this.client?.end().catch(() => {});
  }

  private lost(client: pg.Client, error?: Error) {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    log.error("event listener connection lost; reconnecting", { error: error && { name: error.name, message: error.message } });
    void client.end().catch(() => {});
    this.retry(this.retryMs);
  }
}

/**
 * What one tick publishes goes out in one statement; statements run one at a time, so batches
 * leave in the order they were published. Prunes the event log now and then on the way.
 */
class BatchPublisher {
  private readonly batches = new TickBatches((batch) => this.flush(batch));
  private prunedAt = Date.now();
  /** the sequence number of the last batch this process published */
  lastPublished: string | undefined;

  constructor(
    private readonly notifier: pg.Pool,
    private readonly listener: NotifyListener,
  ) {}

  publish(message: string) {
    this.batches.add(message);
  }

  /** Resolves once what was published before this call has left. */
  flushed() {
    return this.batches.sent();
  }

  private async flush(batch: string[]) {
    try {
      const { rows } = await this.notifier.query<{ seq: string }>(PUBLISH, [CHANNEL, `[${batch.join(",")}]`]);
      this.lastPublished = rows[0]?.seq;
      eventNotifications.inc({ direction: "sent" });
    } catch (error) {
      log.error("event publish failed", { error, events: batch.length });
      return;
    }
    // the database answers again: listen again now rather than at the end of the backoff
    if (!this.listener.listening) this.listener.retry(0);
    if (Date.now() - this.prunedAt > PRUNE_EVERY_MS) {
      this.prunedAt = Date.now();
      await this.notifier
        .query(`DELETE FROM event_payloads WHERE created_at < now() - interval '${EVENT_LOG_LIFETIME}'`)
        .catch((error: unknown) => log.error("event log prune failed", { error }));
    }
  }
}

/** Why a bus whose LISTEN hears nothing refuses to start, naming the setting to fix. */
function deafListenerMessage(url: string, listenUrl: string): string {
  const waited = `a NOTIFY did not reach the event bus's LISTEN in ${PROBE_WAIT_MS / 1000} s`;
  return listenUrl === url
    ? `DATABASE_DIRECT_URL must be set: ${waited} through DATABASE_URL, which looks like a transaction-pooling PgBouncer (LISTEN needs a direct connection)`
    : `DATABASE_DIRECT_URL must be a direct connection (or a session-mode pool): ${waited} through it`;
}

/** The bus publishing through `url` and listening on `listenUrl` (a direct connection behind a transaction pooler). */
export async function postgresEventBus(url: string, listenUrl = url): Promise<EventBus> {
  const local = unboundedEventTarget();
  // one connection, so that NOTIFYs (and so events) keep the order they were published in
  const notifier = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5000 });
  // An idle pooled connection the server closes (restart, shutdown) must not crash the process.
  notifier.on("error", (error) => log.error("event publisher connection lost", { error }));
  const delivery = new BatchDelivery(local, notifier);
  const listener = new NotifyListener(listenUrl, delivery);
  await listener.connect();
  if (!(await listener.hears(notifier))) {
    await listener.close();
    await notifier.end().catch(() => {});
    throw new ConfigError(deafListenerMessage(url, listenUrl));
  }
  const publisher = new BatchPublisher(notifier, listener);

  const eventTarget = publishingTarget(local, (message) => publisher.publish(message));
  return {
    pubsub: createPubSub<Topics>({ eventTarget: eventTarget as never }),
    listen: listenOn(local),
    async delivered() {
      await publisher.flushed();
      const seq = publisher.lastPublished;
      if (seq !== undefined) await delivery.cameBack(seq);
    },
    async close() {
      listener.stop();
      await publisher.flushed();
      await listener.close();
      await delivery.settled();
      await notifier.end().catch(() => {});
    },
  };
}
