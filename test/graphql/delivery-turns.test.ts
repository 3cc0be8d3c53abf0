import { describe, expect, it } from "vitest";
import { DeliveryTurns } from "../../src/graphql/delivery-turns.ts";

/**
 * CONTRACT §7.4 (dashboards of thousands of subscribers): a process sending one event to every
 * subscription goes on serving its other work between slices of deliveries, instead of after all
 * of them (a running job starved behind 5,000 socket writes per event).
 */
describe("subscription deliveries take turns of the event loop", () => {
  it("deliveries go out in the order their turns were taken", async () => {
    const turns = new DeliveryTurns(64);
    const sent: number[] = [];
    await Promise.all(Array.from({ length: 200 }, (_, i) => turns.take().then(() => sent.push(i))));
    expect(sent).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it("other work queued meanwhile runs after one slice of deliveries, not after all of them", async () => {
    const turns = new DeliveryTurns(64);
    const log: string[] = [];
    const all = Promise.all(Array.from({ length: 200 }, () => turns.take().then(() => log.push("delivery"))));
    setImmediate(() => log.push("other work"));
    await all;
    expect(log.indexOf("other work")).toBe(64);
    expect(log.filter((entry) => entry === "delivery")).toHaveLength(200);
  });

  it("a slice that is not full goes out on the next turn", async () => {
    const turns = new DeliveryTurns(64);
    const log: string[] = [];
    const all = Promise.all(Array.from({ length: 3 }, () => turns.take().then(() => log.push("delivery"))));
    setImmediate(() => log.push("other work"));
    await all;
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(["delivery", "delivery", "delivery", "other work"]);
  });
});
