import { createPubSub } from "@graphql-yoga/subscription";
import pg from "pg";
import type { CaseChangedEvent } from "../cases/case.write.service.ts";
import { log } from "../log.ts";
import type { MultimediaStatus } from "../multimedia/job.service.ts";

/**
 * The one PubSub of the process, with typed topics. Embedded mode delivers in process; PostgreSQL
 * mode sends every event through NOTIFY and delivers what LISTEN receives, so that a subscriber on
 * any process sees the events published on every process.
 */
export type Topics = {
  caseChanged: [CaseChangedEvent];
  /** keyed by processing id */
  multimediaProgress: [string, MultimediaStatus & { failed: boolean }];
};

export type PubSub = ReturnType<typeof createPubSub<Topics>>;

export interface EventBus {
  pubsub: PubSub;
  close(): Promise<void>;
}

const CHANNEL = "gateway_events";

export function createLocalPubSub(): PubSub {
  return createPubSub<Topics>();
}

export function localEventBus(): EventBus {
  return { pubsub: createLocalPubSub(), close: async () => {} };
}

/** An EventTarget whose dispatch is a NOTIFY and whose listeners hear the channel's LISTEN. */
export async function postgresEventBus(url: string): Promise<EventBus> {
  const local = new EventTarget();
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
    client.on("notification", (message) => {
      try {
        const { type, detail } = JSON.parse(message.payload ?? "");
        local.dispatchEvent(new CustomEvent(type, { detail }));
      } catch (error) {
        log.error("malformed event notification", { error });
      }
    });
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
  await connect();

  const eventTarget = {
    addEventListener: local.addEventListener.bind(local),
    removeEventListener: local.removeEventListener.bind(local),
    dispatchEvent(event: Event) {
      const detail = (event as CustomEvent).detail;
      notifier
        .query("SELECT pg_notify($1, $2)", [CHANNEL, JSON.stringify({ type: event.type, detail })])
        .catch((error: unknown) => log.error("event publish failed", { error, type: event.type }));
      return true;
    },
  };
  return {
    pubsub: createPubSub<Topics>({ eventTarget: eventTarget as never }),
    async close() {
      closed = true;
      await listener?.end().catch(() => {});
      await notifier.end().catch(() => {});
    },
  };
}
