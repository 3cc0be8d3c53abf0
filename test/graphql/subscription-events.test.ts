import { createClient, type Client } from "graphql-ws";
import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from "graphql";
import { WebSocket } from "ws";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { GraphQLContext } from "../../src/graphql/context.ts";
import { CompiledExecution } from "../../src/graphql/compiled-execution.ts";
import { SubscriptionEvents, type EventOutlet } from "../../src/graphql/subscription-events.ts";
import { graphqlSubscriptionsActive, subscriptionEvents } from "../../src/observability/metrics.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, createApp, png, postMultimedia, zip } from "../helpers/archives.ts";

/**
 * CONTRACT §7.4 at the scale of a wall of dashboards: subscriptions of one user with the same
 * document and variables share each event's execution (src/graphql/subscription-events.ts), so
 * the selection runs once per event and selection, whatever the number of subscribers; another
 * user, or another document, runs its own. Every subscriber still gets every event its own
 * coalescing lets through, with the same content as if it had run alone.
 */

const FEED = `subscription($d: String!) { multimediaJobs(domain: $d) {
  processingId state attempts progress { current total percent } app { appId name } uploadedBy { username }
  result { totalFiles matchedCount imageCount } restStatus } }`;
/** the same selection in another text: a document of its own */
const FEED_TOO = FEED.replace("processingId state", "state processingId");

type Event = { processingId: string; state: string; attempts: number; progress: { current: number }; [field: string]: unknown };

let app: TestApp;
let url: string;
const clients: Client[] = [];
const sockets: WebSocket[] = [];

/** A subscriber of the domain's feed; its events, once it is live. */
async function follow(user: TestUser, query: string): Promise<Event[]> {
  const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: user.authorization }, retryAttempts: 0 });
  clients.push(client);
  const events: Event[] = [];
  const iterator = client.iterate<{ multimediaJobs: Event }>({ query, variables: { d: "demo" } });
  void (async () => {
    for await (const event of iterator) {
      if (event.errors) throw new Error(JSON.stringify(event.errors));
      events.push(event.data!.multimediaJobs);
    }
  })();
  return events;
}

/** A bare WebSocket speaking graphql-transport-ws that subscribes to the feed as `id`: the text of each frame it receives after the ack. */
async function rawSubscriber(user: TestUser, id: string): Promise<string[]> {
  const frames: string[] = [];
  const socket = new WebSocket(url, "graphql-transport-ws");
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.on("error", reject);
    socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: user.authorization } })));
    socket.on("message", (data) => {
      const text = String(data);
      if (text.includes('"connection_ack"')) {
        socket.send(JSON.stringify({ id, type: "subscribe", payload: { query: FEED, variables: { d: "demo" } } }));
        resolve();
      } else frames.push(text);
    });
  });
  return frames;
}

async function until(check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function counted(): Promise<{ executed: number; shared: number }> {
  const { values } = await subscriptionEvents.get();
  const of = (execution: string) => values.find((v) => v.labels.execution === execution)?.value ?? 0;
  return { executed: of("executed"), shared: of("shared") };
}

/** One key per event a job publishes: its state, attempt and progress. */
const eventKey = (e: Event) => `${e.state}/${e.attempts}/${e.progress.current}`;

describe("CONTRACT §7.4 subscription events executed once per event and selection", () => {
  beforeEach(async () => {
    app = await build({ workers: 0 });
    await createDomain(app, "demo");
    url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.dispose()));
    for (const socket of sockets.splice(0)) socket.terminate();
    await app.close();
  });

  // one execution per distinct key holds because a job publishes each progress once (the job
  // service's publishCurrent; test/multimedia/progress-events.test.ts): the same progress
  // published twice was two event objects, so two executions, and failed here on PostgreSQL.
  it("4 + 3 subscribers of two users and 1 of another document: one execution per distinct event of each (user, document), the same content for all", async () => {
    const alice = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
    const bob = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
    const paths = Array.from({ length: 120 }, (_, i) => `jr://file/commcare/image/i${i}.png`);
    const appId = await createApp(app, alice.authorization, "demo", appSource({ paths }), "Clinic");
    const groups = {
      alice: await Promise.all(Array.from({ length: 4 }, () => follow(alice, FEED))),
      bob: await Promise.all(Array.from({ length: 3 }, () => follow(bob, FEED))),
      aliceToo: [await follow(alice, FEED_TOO)],
    };
    const everyone = Object.values(groups).flat();
    await until(async () => (await graphqlSubscriptionsActive.get()).values[0]?.value === everyone.length);
    const before = await counted();

    const archive = await zip(Array.from({ length: 120 }, (_, i) => ({ name: `commcare/image/i${i}.png`, data: png(i) })));
    await postMultimedia(app, alice.authorization, "demo", appId, archive);
    await app.services.worker.start(1);
    await until(() => everyone.every((events) => events.at(-1)?.state === "COMPLETE"));
    const after = await counted();

    const deliveries = everyone.reduce((n, events) => n + events.length, 0);
    const distinct = Object.values(groups).reduce((n, group) => n + new Set(group.flat().map(eventKey)).size, 0);
    expect(after.executed - before.executed).toBe(distinct);
    expect(after.executed - before.executed + after.shared - before.shared).toBe(deliveries);
    expect(after.shared - before.shared).toBeGreaterThan(deliveries / 2);

    // what each got is what the event is, whoever ran it: the same content for the same event
    const byKey = new Map<string, object>();
    for (const events of everyone) {
      expect(events[0]!.state).toBe("QUEUED");
      expect(events.at(-1)).toMatchObject({ app: { appId, name: "Clinic" }, result: { totalFiles: 120, matchedCount: 120, imageCount: 120 } });
      for (const event of events) {
        const { uploadedBy, ...content } = event;
        expect(uploadedBy).toEqual({ username: alice.username });
        const seen = byKey.get(eventKey(event));
        if (seen) expect(content).toEqual(seen);
        else byKey.set(eventKey(event), content);
      }
    }
  });

  it("§7.4: each next frame is byte for byte what graphql-ws writes ({id, type, payload}), the shared payload's text the same for every subscriber of the selection", async () => {
    const alice = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
    const appId = await createApp(app, alice.authorization, "demo", appSource({ paths: ["jr://file/commcare/image/a.png"] }), "Clinic");
    const frames = await Promise.all(["one", 'two-"quoted"-id'].map((id) => rawSubscriber(alice, id)));
    await until(async () => (await graphqlSubscriptionsActive.get()).values[0]?.value === frames.length);
    await postMultimedia(app, alice.authorization, "demo", appId, await zip([{ name: "commcare/image/a.png", data: png(1) }]));
    await app.services.worker.start(1);
    await until(() => frames.every((received) => received.some((frame) => frame.includes('"COMPLETE"'))));
    for (const [index, received] of frames.entries()) {
      const id = ["one", 'two-"quoted"-id'][index];
      for (const frame of received) {
        const message = JSON.parse(frame) as { id: string; type: string; payload: unknown };
        expect(frame).toBe(JSON.stringify({ id, type: "next", payload: message.payload }));
      }
    }
    const payloads = frames.map((received) => received.map((frame) => frame.slice(frame.indexOf(',"type"'))));
    expect(payloads[1]).toEqual(payloads[0]);
  });
});

/**
 * On its own, over a schema of one field: the shared execution's iterator ends its source
 * whichever way the subscription ends: by the client (return() while waiting for an event), or by
 * an event that cannot be made into a result. A source left running would keep listening on the
 * bus for as long as the process lives.
 */

/** A source of events that records whether it was ended; it yields `events`, then waits forever. */
function trackedSource(events: object[]) {
  const state = { ended: false };
  const iterator: AsyncIterableIterator<object> = {
    [Symbol.asyncIterator]: () => iterator,
    next: () => (events.length ? Promise.resolve({ value: events.shift()!, done: false }) : new Promise(() => {})),
    return: async () => {
      state.ended = true;
      return { value: undefined, done: true };
    },
  };
  return { iterator, state };
}

/** trackedSource with pull() (as job.coalescing.ts's JobFeed has): the outlet then takes its events by callback. */
function pulledSource(events: object[]) {
  const { iterator, state } = trackedSource(events);
  type Taker = { take(result: IteratorResult<object>): void };
  let waiting: Taker | undefined;
  const pull = (taker: Taker) => {
    if (state.ended) taker.take({ value: undefined, done: true });
    else if (events.length) taker.take({ value: events.shift()!, done: false });
    else waiting = taker;
  };
  const end = async () => {
    state.ended = true;
    waiting?.take({ value: undefined, done: true });
    return { value: undefined, done: true } as const;
  };
  return { iterator: Object.assign(iterator, { pull, return: end }), state };
}

function setUp(source: AsyncIterableIterator<object>, wire: () => never | { data: null }, outlet?: EventOutlet) {
  const query = new GraphQLObjectType({ name: "Query", fields: { ok: { type: GraphQLString } } });
  const subscription = new GraphQLObjectType({
    name: "Subscription",
    fields: { ticks: { type: GraphQLString, subscribe: () => source, resolve: () => "tick" } },
  });
  const schema = new GraphQLSchema({ query, subscription });
  const principal = { userId: "u", username: "u", isSuperuser: false, scheme: "apikey" } as GraphQLContext["principal"];
  const events = new SubscriptionEvents({ context: () => ({ principal }) as GraphQLContext, execute: new CompiledExecution(schema).execute, wire });
  const contextValue = { principal };
  if (outlet) events.sendThrough(contextValue, outlet);
  return events.subscribe({ schema, document: parse("subscription { ticks }"), contextValue });
}

describe("SubscriptionEvents ends its source", () => {
  it("when the subscription is completed while it waits for an event", async () => {
    const { iterator, state } = trackedSource([]);
    const results = (await setUp(iterator, () => ({ data: null }))) as AsyncIterableIterator<unknown>;
    void results.next();
    await results.return!();
    expect(state.ended).toBe(true);
  });

  it("when an event's result cannot be made (the error reaches the subscriber)", async () => {
    const { iterator, state } = trackedSource([{}]);
    const results = (await setUp(iterator, () => {
      throw new Error("no result");
    })) as AsyncIterableIterator<unknown>;
    await expect(results.next()).rejects.toThrow("no result");
    expect(state.ended).toBe(true);
  });

  it("when its source fails, through an outlet (the error reaches the subscriber, nothing is sent)", async () => {
    const { iterator } = trackedSource([]);
    iterator.next = () => Promise.reject(new Error("bus gone"));
    const sent: string[] = [];
    const results = (await setUp(iterator, () => ({ data: null }), {
      send: (_result, json) => void sent.push(json),
    })) as AsyncIterableIterator<unknown>;
    await expect(results.next()).rejects.toThrow("bus gone");
    expect(sent).toEqual([]);
  });
});

describe.each([
  ["an iterator", trackedSource],
  ["a source that pulls by callback", pulledSource],
])("SubscriptionEvents through an outlet (each event sent by the subscription itself), from %s", (_kind, trackedSource) => {
  it("sends each event's result with its JSON text, yields none, and ends its source when completed", async () => {
    const { iterator, state } = trackedSource([{}, {}]);
    const sent: string[] = [];
    const results = (await setUp(iterator, () => ({ data: null }), {
      send: (_result, json) => void sent.push(json),
    })) as AsyncIterableIterator<unknown>;
    let yielded = false;
    void results.next().then((next) => (yielded = !next.done));
    await until(() => sent.length === 2);
    expect(sent).toEqual(['{"data":null}', '{"data":null}']);
    await results.return!();
    expect(state.ended).toBe(true);
    expect(yielded).toBe(false);
  });

  it("ends its source when a send fails (the error reaches the subscriber)", async () => {
    const { iterator, state } = trackedSource([{}]);
    const results = (await setUp(iterator, () => ({ data: null }), {
      send: () => Promise.reject(new Error("socket gone")),
    })) as AsyncIterableIterator<unknown>;
    await expect(results.next()).rejects.toThrow("socket gone");
    expect(state.ended).toBe(true);
  });

  it("sends nothing once completed, even for an event it had taken (its id may be a new subscription's by then)", async () => {
    const { iterator, state } = trackedSource([{}]);
    const sent: string[] = [];
    const results = (await setUp(iterator, () => ({ data: null }), {
      send: (_result, json) => void sent.push(json),
    })) as AsyncIterableIterator<unknown>;
    const next = results.next();
    await results.return!();
    expect(await next).toEqual({ value: undefined, done: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sent).toEqual([]);
    expect(state.ended).toBe(true);
  });

  it("sends the next event only once the last one is written (a socket with unsent frames holds its subscription back)", async () => {
    const { iterator } = trackedSource([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const sent: string[] = [];
    let written: (() => void) | undefined;
    const results = (await setUp(iterator, () => ({ data: null }), {
      send: (_result, json) => {
        sent.push(json);
        return new Promise<void>((resolve) => (written = resolve));
      },
    })) as AsyncIterableIterator<unknown>;
    void results.next();
    await until(() => sent.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent).toHaveLength(1);
    written!();
    await until(() => sent.length === 2);
    written!();
    await until(() => sent.length === 3);
    await results.return!();
  });
});
