import { describe, expect, it } from "vitest";
import { postgresDatabase } from "../../src/db/client.ts";
import { localEventBus, postgresEventBus } from "../../src/events/bus.ts";
import type { CaseChangedEvent } from "../../src/cases/case.events.ts";
import type { MultimediaStatus } from "../../src/multimedia/job.events.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";

const event: CaseChangedEvent = { domain: "d", caseId: "c", caseType: "t", formId: "f" };

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
      const status: MultimediaStatus = { id: "dl-1", state: "running", current: 1, total: 2, result: null, errors: [] };
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
      const received = [];
      for (let i = 0; i < sent.length; i++) received.push((await events.next()).value);
      expect(received).toEqual(sent);
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
});
