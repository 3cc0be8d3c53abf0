import { setMaxListeners } from "node:events";
import { createPubSub } from "@graphql-yoga/subscription";

/**
 * The one PubSub of the process, with typed topics. Embedded mode delivers in process (here);
 * PostgreSQL mode sends every event through NOTIFY and delivers what LISTEN receives
 * (postgres-bus.ts), Redis mode through a Redis stream (redis-bus.ts), so that a subscriber on any
 * process sees the events published on every process.
 */
export type Topics = { [K in keyof TopicRegistry]: TopicRegistry[K] };

/**
 * Each topic's name and what an event of it carries: `[payload]`, or `[routing id, payload]`.
 * Every feature adds its topics from its leaf `*.events.ts` (`declare module "../events/bus.ts"`),
 * so that the bus imports no feature. (Topics, above, is this as a type literal: graphql-yoga's
 * PubSub takes only a type with an index signature, which an interface is not.)
 * @public (extended by declaration merging, which knip does not follow)
 */
// biome-ignore lint/suspicious/noEmptyInterface: empty here by design; each feature declares its topics into it
export interface TopicRegistry {}

export type PubSub = ReturnType<typeof createPubSub<Topics>>;

/** The topics published without a routing id, whose events carry one payload. */
type PlainTopic = { [K in keyof Topics]: Topics[K] extends [unknown] ? K : never }[keyof Topics];
/** The topics published with a routing id (a domain's), whose subscribers hear the events of one id. */
type RoutedTopic = { [K in keyof Topics]: Topics[K] extends [string, unknown] ? K : never }[keyof Topics];

export interface EventBus {
  pubsub: PubSub;
  /**
   * Calls `handler` for each event of the topic as this process receives it, synchronously (no
   * iterator in between): what must be in effect before this process handles its next request.
   */
  listen<K extends PlainTopic>(topic: K, handler: (payload: Topics[K][0]) => void): () => void;
  /**
   * The same for the events of one routing id of a routed topic. What thousands of subscriptions
   * of one domain follow: a plain handler each, rather than a subscription iterator each, whose
   * promises per event per subscriber would cost more than the delivery itself.
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

export function listenOn(target: EventTarget): EventBus["listen"] {
  return (topic: string, ...rest: unknown[]) => {
    const handler = rest.pop() as (payload: unknown) => void;
    // the event type graphql-yoga's PubSub gives a routed topic's events: "topic:id"
    const type = rest.length ? `${topic}:${rest[0] as string}` : topic;
    const listener = (event: Event) => handler((event as CustomEvent).detail);
    target.addEventListener(type, listener);
    return () => target.removeEventListener(type, listener);
  };
}

/** An EventTarget that any number of subscribers may listen on (no MaxListenersExceededWarning). */
export function unboundedEventTarget(): EventTarget {
  const target = new EventTarget();
  setMaxListeners(0, target);
  return target;
}

const SEEN_CAPACITY = 10_000;

/**
 * Remembers the batches a bus across processes delivered lately (insertion order), so that one
 * heard twice (a replay overlapping what arrived live, a publish resent after a dropped
 * connection) is delivered once.
 */
export class SeenBatches {
  private readonly seen = new Set<string>();
  has(id: string) {
    return this.seen.has(id);
  }
  add(id: string) {
    this.seen.add(id);
    if (this.seen.size > SEEN_CAPACITY) this.seen.delete(this.seen.values().next().value!);
  }
}

/**
 * Gathers what one tick of the loop publishes into one batch, and hands the batches to `send` one at
 * a time in the order they were published: a 100-case bulk write is one message on a bus across
 * processes, not 100. `send` reports its own failures (it never rejects), so that one failed batch
 * does not stop the next.
 */
export class TickBatches {
  private pending: string[] = [];
  private sending = Promise.resolve();

  constructor(private readonly send: (events: string[]) => Promise<void>) {}

  add(event: string) {
    if (this.pending.length === 0) setImmediate(() => (this.sending = this.sending.then(() => this.sendPending())));
    this.pending.push(event);
  }

  /** Resolves once what was added before this call has been sent (or given up on). */
  async sent() {
    // what this tick added is sent on the next turn of the loop (add): let it be queued first
    await new Promise((resolve) => setImmediate(resolve));
    await this.sending;
  }

  private sendPending() {
    const events = this.pending;
    this.pending = [];
    return this.send(events);
  }
}

/**
 * The EventTarget a bus across processes gives graphql-yoga's PubSub: listeners listen on `local`
 * (where the bus delivers what it hears, this process's own events included), and what is
 * dispatched is published on the bus as `{ type, detail }` text instead of delivered here.
 */
export function publishingTarget(local: EventTarget, publish: (message: string) => void): EventTarget {
  return {
    addEventListener: local.addEventListener.bind(local),
    removeEventListener: local.removeEventListener.bind(local),
    dispatchEvent(event: Event) {
      publish(JSON.stringify({ type: event.type, detail: (event as CustomEvent).detail }));
      return true;
    },
  };
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
