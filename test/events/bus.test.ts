import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/bus.ts";
import { postgresEventBus } from "../../src/events/postgres-bus.ts";
import { redisEventBus } from "../../src/events/redis-bus.ts";
import type { CaseChangedEvent } from "../../src/cases/case.events.ts";
import type { MultimediaStatus } from "../../src/multimedia/job.events.ts";
import { MIGRATIONS_DIR } from "../../src/db/migrate.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { pgClusterUnavailable, startPgCluster } from "../helpers/process.ts";
import { redisUnavailable, startRedis } from "../helpers/redis.ts";

const event: CaseChangedEvent = { domain: "d", caseId: "c", caseType: "t", formId: "f" };
/** published after the events a test counts: the next event after them must be this one */
const last: CaseChangedEvent = { ...event, caseId: "last" };

describe("event bus", () => {
  it("delivers in process on the embedded database", async () => {
    const bus = localEventBus();
    const events = bus.pubsub.subscribe("caseChanged");
    const next = events.next();
    bus.pubsub.publish("caseChanged", event);
    expect((await next).value).toEqual(event);
    await events.return();
  });

  it("takes any number of subscribers on one topic without Node's MaxListenersExceededWarning", async () => {
    const bus = localEventBus();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const subscribers = Array.from({ length: 50 }, () => bus.pubsub.subscribe("multimediaProgress", "dl-1"));
      const received = subscribers.map((s) => s.next());
      const status: MultimediaStatus = {
        ...{ id: "dl-1", domainId: "d", appId: "a", state: "running", current: 1, total: 2, result: null, errors: [] },
        ...{ uploadedBy: "u", fileName: "m.zip", sizeBytes: 1, createdAt: new Date(), startedAt: null, finishedAt: null, attempts: 1 },
      };
      bus.pubsub.publish("multimediaProgress", "dl-1", status);
      expect((await Promise.all(received)).every((r) => r.value.id === "dl-1")).toBe(true);
      await Promise.all(subscribers.map((s) => s.return()));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  /**
   * The contract every bus across processes keeps, run against each: PostgreSQL (LISTEN/NOTIFY)
   * and Redis (a stream, REDIS_URL). `open` gives a bus of another process on the same engine.
   */
  describe.each(crossProcessBuses())("across processes on $name", ({ available, engine }) => {
    it.runIf(available)("keeps the order of many events published at once, an event over NOTIFY's 8000 bytes among them", async () => {
      const { open, close } = await engine();
      const [one, two] = await Promise.all([open(), open()]);
      try {
        const events = two.pubsub.subscribe("caseChanged");
        const large = { ...event, caseId: "large", caseType: "x".repeat(100_000) };
        const sent = [
          ...Array.from({ length: 50 }, (_, i) => ({ ...event, caseId: `a${i}` })),
          large,
          ...Array.from({ length: 50 }, (_, i) => ({ ...event, caseId: `b${i}` })),
        ];
        for (const e of sent) one.pubsub.publish("caseChanged", e);
        one.pubsub.publish("caseChanged", last);
        const received = [];
        for (let i = 0; i < sent.length + 1; i++) received.push((await within(events.next(), 10_000)).value);
        // each once: what follows them is the event published after them, not a second copy
        expect(received).toEqual([...sent, last]);
        await events.return();
      } finally {
        await Promise.all([one.close(), two.close()]);
        await close();
      }
    });

    it.runIf(available)("delivers an event published by one process to a subscriber of another", async () => {
      const { open, close } = await engine();
      const [one, two] = await Promise.all([open(), open()]);
      try {
        const events = two.pubsub.subscribe("caseChanged");
        const next = events.next();
        one.pubsub.publish("caseChanged", event);
        expect((await next).value).toEqual(event);
        await events.return();
      } finally {
        await Promise.all([one.close(), two.close()]);
        await close();
      }
    });

    it.runIf(available)("delivered() resolves once the publisher's own events came back, and listen() hears a routed topic's id only", async () => {
      const { open, close } = await engine();
      const [one, two] = await Promise.all([open(), open()]);
      try {
        const heard: string[] = [];
        const stop = two.listen("multimediaProgress", "d1", (status) => heard.push(status.id));
        const status = (id: string, domainId: string) =>
          ({
            ...{ id, domainId, appId: "a", state: "running", current: 1, total: 2, result: null, errors: [] },
            ...{ uploadedBy: "u", fileName: "m.zip", sizeBytes: 1, createdAt: new Date(), startedAt: null, finishedAt: null, attempts: 1 },
          }) as MultimediaStatus;
        const seenByOne: string[] = [];
        const stopOne = one.listen("credentialsChanged", ({ userId }) => seenByOne.push(userId));
        one.pubsub.publish("multimediaProgress", "d2", status("other", "d2"));
        one.pubsub.publish("multimediaProgress", "d1", status("mine", "d1"));
        one.pubsub.publish("credentialsChanged", { userId: "u1" });
        await one.delivered();
        // the publisher heard its own batch back before delivered() resolved
        expect(seenByOne).toEqual(["u1"]);
        await expect.poll(() => heard, { timeout: 10_000 }).toEqual(["mine"]);
        stop();
        stopOne();
      } finally {
        await Promise.all([one.close(), two.close()]);
        await close();
      }
    });
  });

  it.runIf(usingPostgres() && !pgClusterUnavailable())(
    "F13: after PostgreSQL restarts, every event published once it is back reaches subscribers of both processes, in order",
    { timeout: 120_000 },
    async () => {
      const cluster = await startPgCluster();
      const buses: Awaited<ReturnType<typeof postgresEventBus>>[] = [];
      try {
        await createEventLog(cluster.url);
        buses.push(await postgresEventBus(cluster.url), await postgresEventBus(cluster.url));
        const [publisher, other] = buses;
        const subscribers = [publisher.pubsub.subscribe("caseChanged"), other.pubsub.subscribe("caseChanged")];
        // a subscription listens from its first next() on
        const first = subscribers.map((s) => within(s.next(), 10_000));
        publisher.pubsub.publish("caseChanged", { ...event, caseId: "before" });
        for (const received of await Promise.all(first)) expect(received.value.caseId).toBe("before");

        await cluster.down();
        // an outage long enough for the listeners' backoff to reach its 5 s cap
        await new Promise((resolve) => setTimeout(resolve, 7000));
        await cluster.up();
        // right after the restart, before the listeners' backoff (up to 5 s) has brought them back
        const sent = Array.from({ length: 20 }, (_, i) => `after-${i}`);
        for (const caseId of sent) {
          publisher.pubsub.publish("caseChanged", { ...event, caseId });
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        publisher.pubsub.publish("caseChanged", last);
        // each once, though a batch may come both by the replay and by its NOTIFY: what follows
        // them is the event published after them, not a second copy
        for (const s of subscribers) {
          const received = [];
          for (let i = 0; i < sent.length + 1; i++) received.push((await within(s.next(), 15_000)).value.caseId);
          expect(received).toEqual([...sent, last.caseId]);
        }
        await Promise.all(subscribers.map((s) => s.return()));
      } finally {
        await Promise.all(buses.map((b) => b.close()));
        await cluster.remove();
      }
    },
  );
});

/** Each bus across processes, with whether its engine is here and how to open buses on a fresh one. */
function crossProcessBuses() {
  return [
    {
      name: "PostgreSQL",
      available: usingPostgres(),
      engine: async () => {
        const db = await freshDatabase();
        return { open: () => postgresEventBus(db.url!, db.directUrl), close: () => db.close() };
      },
    },
    {
      name: "Redis",
      available: !redisUnavailable(),
      engine: async () => {
        const redis = await startRedis();
        return { open: () => redisEventBus(redis.url), close: () => redis.remove() };
      },
    },
  ];
}

/** The event log of a cluster of its own (the bus needs only this table of the schema). */
async function createEventLog(url: string): Promise<void> {
  const sql = await readFile(path.join(MIGRATIONS_DIR, "20261121085718_large_event_payloads", "migration.sql"), "utf8");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The promise's value, or a failure naming the wait, so that a lost event fails rather than hangs. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no event within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
