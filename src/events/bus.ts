import { setMaxListeners } from "node:events";
import { createPubSub } from "@graphql-yoga/subscription";
import pg from "pg";
import type { CredentialsChangedEvent } from "../auth/credential.events.ts";
import type { CaseChangedEvent } from "../cases/case.events.ts";
import { log } from "../log.ts";
import type { MultimediaStatus } from "../multimedia/job.events.ts";

/**
 * The one PubSub of the process, with typed topics. Embedded mode delivers in process; PostgreSQL
 * mode sends every event through NOTIFY and delivers what LISTEN receives, so that a subscriber on
 * any process sees the events published on every process. Events published in one tick leave in
 * one statement (a 100-case bulk write is one round trip, not 100), and an event too large for a
 * NOTIFY (a finished job's result) travels by the event_payloads table.
 */
export type Topics = {
  caseChanged: [CaseChangedEvent];
  /** keyed by processing id */
  multimediaProgress: [string, MultimediaStatus];
  credentialsChanged: [CredentialsChangedEvent];
};

export type PubSub = ReturnType<typeof createPubSub<Topics>>;

export interface EventBus {
  pubsub: PubSub;
  close(): Promise<void>;
}

const CHANNEL = "gateway_events";
/** NOTIFY payloads must stay under 8000 bytes; larger events go by the event_payloads table */
const MAX_INLINE_BYTES = 7000;
/** how long a large event's payload is kept for the listeners to read */
const PAYLOAD_LIFETIME = "5 minutes";

/** An EventTarget that any number of subscribers may listen on (no MaxListenersExceededWarning). */
function unboundedEventTarget(): EventTarget {
  const target = new EventTarget();
  setMaxListeners(0, target);
  return target;
}

export function createLocalPubSub(): PubSub {
  return createPubSub<Topics>({ eventTarget: unboundedEventTarget() as never });
}

export function localEventBus(): EventBus {
  return { pubsub: createLocalPubSub(), close: async () => {} };
}

/** An EventTarget whose dispatch is a NOTIFY and whose listeners hear the channel's LISTEN. */
export async function postgresEventBus(url: string): Promise<EventBus> {
  const local = unboundedEventTarget();
  // one connection, so that NOTIFYs (and so events) keep the order they were published in
  const notifier = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5000 });
  // An idle pooled connection the server closes (restart, shutdown) must not crash the process.
  notifier.on("error", (error) => log.error("event publisher connection lost", { error }));
  let listener: pg.Client | undefined;
  let closed = false;

  // The LISTEN connection: when it drops (PostgreSQL restarted, network), reconnect with backoff
  // until it is back, for as long as the bus is open. Events NOTIFYed while it was down are lost.
  let retryMs = 250;
  const reconnect = (client: pg.Client, error?: Error) => {
    if (closed || listener !== client) return;
    listener = undefined;
    log.error("event listener connection lost; reconnecting", { error: error && { name: error.name, message: error.message } });
    void client.end().catch(() => {});
    scheduleConnect();
  };
  const scheduleConnect = () => {
    if (closed) return;
    const delay = retryMs;
    retryMs = Math.min(retryMs * 2, 5000);
    setTimeout(() => {
      connect().then(
        () => {
          retryMs = 250;
          log.info("event listener reconnected");
        },
        () => scheduleConnect(),
      );
    }, delay).unref();
  };
  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, keepAlive: true });
    client.on("notification", (message) => deliver(message.payload ?? ""));
    client.on("error", (error) => reconnect(client, error));
    client.on("end", () => reconnect(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      void client.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    listener = client;
  };
  // Notifications are delivered one after another, so that one whose payload must first be read
  // from the table is not overtaken by the small ones behind it.
  let delivering = Promise.resolve();
  const deliver = (payload: string) => {
    delivering = delivering.then(async () => {
      try {
        const message = JSON.parse(payload) as { type: string; detail?: unknown; ref?: string };
        const event = message.ref === undefined ? message : await storedEvent(message.ref);
        if (event) local.dispatchEvent(new CustomEvent(event.type, { detail: event.detail }));
      } catch (error) {
        log.error("undeliverable event notification", { error });
      }
    });
  };
  const storedEvent = async (ref: string) => {
    const { rows } = await notifier.query<{ payload: string }>("SELECT payload FROM event_payloads WHERE id = $1", [ref]);
    return rows[0] ? (JSON.parse(rows[0].payload) as { type: string; detail: unknown }) : undefined;
  };
  await connect();

  // Publishing: what one tick publishes goes out in one statement, in order.
  let pending: string[] = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    try {
      const messages = await Promise.all(batch.map((m) => (Buffer.byteLength(m) > MAX_INLINE_BYTES ? storeLarge(m) : m)));
      // unnest yields the array in order, and the NOTIFYs of one statement are delivered in order
      await notifier.query("SELECT pg_notify($1, m) FROM unnest($2::text[]) AS m", [CHANNEL, messages]);
    } catch (error) {
      log.error("event publish failed", { error, events: batch.length });
    }
  };
  const storeLarge = async (message: string) => {
    await notifier.query(`DELETE FROM event_payloads WHERE created_at < now() - interval '${PAYLOAD_LIFETIME}'`);
    const { rows } = await notifier.query<{ id: string }>("INSERT INTO event_payloads (payload) VALUES ($1) RETURNING id", [message]);
    return JSON.stringify({ ref: rows[0]!.id });
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
  return {
    pubsub: createPubSub<Topics>({ eventTarget: eventTarget as never }),
    async close() {
      closed = true;
      await new Promise((resolve) => setImmediate(resolve));
      await flushing;
      await listener?.end().catch(() => {});
      await delivering;
      await notifier.end().catch(() => {});
    },
  };
}
