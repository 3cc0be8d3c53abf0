import { describe, expect, it } from "vitest";
import { postgresDatabase } from "../../src/db/client.ts";
import { localEventBus, postgresEventBus } from "../../src/graphql/pubsub.ts";
import type { CaseChangedEvent } from "../../src/cases/case.write.service.ts";
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
