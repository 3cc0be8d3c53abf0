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
  const notifier = new pg.Pool({ connectionString: url, max: 1 });
  // An idle pooled connection the server closes (restart, shutdown) must not crash the process.
  notifier.on("error", (error) => log.error("event publisher connection lost", { error }));
  let listener: pg.Client | undefined;
  let closed = false;

  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url });
    client.on("notification", (message) => {
      try {
        const { type, detail } = JSON.parse(message.payload ?? "");
        local.dispatchEvent(new CustomEvent(type, { detail }));
      } catch (error) {
        log.error("malformed event notification", { error });
      }
    });
    client.on("error", (error) => {
      if (closed) return;
      log.error("event listener connection lost; reconnecting", { error });
      void client.end().catch(() => {});
      if (!closed) setTimeout(() => void connect().catch(() => {}), 1000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
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
