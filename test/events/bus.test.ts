import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgresDatabase } from "../../src/db/client.ts";
import { localEventBus } from "../../src/events/bus.ts";
import { postgresEventBus } from "../../src/events/postgres-bus.ts";
import type { CaseChangedEvent } from "../../src/cases/case.events.ts";
import type { MultimediaStatus } from "../../src/multimedia/job.events.ts";
import { MIGRATIONS_DIR } from "../../src/db/migrate.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { pgClusterUnavailable, startPgCluster } from "../helpers/process.ts";

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

  it.runIf(usingPostgres())("keeps the order of many events published at once, an event over NOTIFY's 8000 bytes among them", async () => {
    const db = await freshDatabase();
    const [one, two] = await Promise.all([postgresEventBus(db.url!), postgresEventBus(db.url!)]);
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
      await db.close();
    }
  });

  it.runIf(usingPostgres())("delivers an event published by one process to a subscriber of another (LISTEN/NOTIFY)", async () => {
    const db = await freshDatabase();
    const [one, two] = await Promise.all([postgresEventBus(db.url!), postgresEventBus(postgresDatabase(db.url!).url!)]);
    try {
      const events = two.pubsub.subscribe("caseChanged");
      const next = events.next();
      one.pubsub.publish("caseChanged", event);
      expect((await next).value).toEqual(event);
      await events.return();
    } finally {
      await Promise.all([one.close(), two.close()]);
      await db.close();
    }
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
