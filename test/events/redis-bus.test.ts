import { afterEach, describe, expect, it } from "vitest";
import type { CaseChangedEvent } from "../../src/cases/case.events.ts";
import type { EventBus } from "../../src/events/bus.ts";
import { EVENT_STREAM, EVENT_STREAM_MAX_BATCHES, redisEventBus } from "../../src/events/redis-bus.ts";
import { captureLog } from "../helpers/log.ts";
import { redisUnavailable, startRedis, type RedisServer } from "../helpers/redis.ts";

/**
 * CONTRACT §7.6 on the Redis bus itself, with a real `redis-server`: a reader whose connection
 * drops, or whose Redis restarts, replays what it missed, in order and each once; the stream stays
 * bounded. (The contract both buses keep is in bus.test.ts.)
 */

const event: CaseChangedEvent = { domain: "d", caseId: "c", caseType: "t", formId: "f" };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The promise's value, or a failure naming the wait, so that a lost event fails rather than hangs. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no event within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Reads `count` case ids from each subscription, in the order they arrive. */
async function receive(subscriptions: AsyncIterator<CaseChangedEvent>[], count: number, ms = 20_000): Promise<string[][]> {
  return Promise.all(
    subscriptions.map(async (s) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push((await within(s.next(), ms)).value.caseId);
      return ids;
    }),
  );
}

describe.skipIf(redisUnavailable())(`§7.6: the Redis bus (${redisUnavailable() ?? "redis-server"})`, () => {
  let redis: RedisServer | undefined;
  const buses: EventBus[] = [];
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close()));
    await redis?.remove();
    redis = undefined;
  });

  async function twoBuses(): Promise<[EventBus, EventBus]> {
    redis = await startRedis();
    buses.push(await redisEventBus(redis.url), await redisEventBus(redis.url));
    return [buses[0]!, buses[1]!];
  }

  it("§7.6: while every connection to Redis is dropped again and again (CLIENT KILL), both processes get every event, in order, each once", async () => {
    const [publisher, other] = await twoBuses();
    const subscriptions = [publisher.pubsub.subscribe("caseChanged"), other.pubsub.subscribe("caseChanged")];
    const first = receive(subscriptions, 1);
    publisher.pubsub.publish("caseChanged", { ...event, caseId: "before" });
    expect(await first).toEqual([["before"], ["before"]]);

    const admin = redis!.admin();
    const sent = Array.from({ length: 60 }, (_, i) => `during-${i}`);
    const received = receive(subscriptions, sent.length + 1);
    for (const [i, caseId] of sent.entries()) {
      if (i % 10 === 0) await admin.client("KILL", "TYPE", "normal", "SKIPME", "yes");
      publisher.pubsub.publish("caseChanged", { ...event, caseId });
      await pause(20);
    }
    publisher.pubsub.publish("caseChanged", { ...event, caseId: "last" });
    // each once: what follows them is the event published after them, not a second copy
    expect(await received).toEqual([
      [...sent, "last"],
      [...sent, "last"],
    ]);
    await Promise.all(subscriptions.map((s) => s.return?.()));
  }, 60_000);

  it("§7.6: a process whose reader was away replays, once back, the events published meanwhile", async () => {
    const [publisher, other] = await twoBuses();
    const subscription = other.pubsub.subscribe("caseChanged");
    const first = receive([subscription], 1);
    publisher.pubsub.publish("caseChanged", { ...event, caseId: "before" });
    await first;

    // only the readers' connections go (the publisher's stays): what is published right after
    // each cut reaches the other process by the replay of its reconnected reader
    const admin = redis!.admin();
    const readers = async () =>
      ((await admin.call("CLIENT", "LIST", "TYPE", "normal")) as string)
        .split("\n")
        .filter((line) => / name=gateway-events-reader /.test(line))
        .map((line) => /^id=(\d+)/.exec(line)![1]!);
    const sent = Array.from({ length: 20 }, (_, i) => `missed-${i}`);
    let received: string[][] = [];
    const lines = await captureLog(async () => {
      for (const caseId of sent) {
        for (const id of await readers()) await admin.client("KILL", "ID", id);
        publisher.pubsub.publish("caseChanged", { ...event, caseId });
        await pause(50);
      }
      received = await receive([subscription], sent.length);
    });
    expect(received).toEqual([sent]);
    expect(lines.some((line) => line.includes('"message":"event listener replayed missed events"'))).toBe(true);
    // the stream still reached back to each reader's last read: nothing was missed, and none says so
    expect(lines.filter((line) => line.includes("may have missed events"))).toEqual([]);
    await subscription.return?.();
  }, 60_000);

  it("§7.6: after Redis restarts, events published while it was away and once it is back reach subscribers of both processes, in order", async () => {
    const [publisher, other] = await twoBuses();
    const subscriptions = [publisher.pubsub.subscribe("caseChanged"), other.pubsub.subscribe("caseChanged")];
    const first = receive(subscriptions, 1);
    publisher.pubsub.publish("caseChanged", { ...event, caseId: "before" });
    expect(await first).toEqual([["before"], ["before"]]);

    const during = Array.from({ length: 5 }, (_, i) => `during-${i}`);
    const after = Array.from({ length: 10 }, (_, i) => `after-${i}`);
    let received: string[][] = [];
    const lines = await captureLog(async () => {
      await redis!.down();
      // published while Redis is away: held by the publisher's connection, sent once it is back
      for (const caseId of during) {
        publisher.pubsub.publish("caseChanged", { ...event, caseId });
        await pause(200);
      }
      await pause(2000);
      await redis!.up();
      for (const caseId of after) {
        publisher.pubsub.publish("caseChanged", { ...event, caseId });
        await pause(50);
      }
      received = await receive(subscriptions, during.length + after.length);
    });
    expect(received).toEqual([
      [...during, ...after],
      [...during, ...after],
    ]);
    // a Redis without persistence came back empty: the readers say they cannot know what it held
    expect(lines.filter((line) => line.includes('"message":"event listener may have missed events')).length).toBe(2);
    await Promise.all(subscriptions.map((s) => s.return?.()));
  }, 60_000);

  it("§7.6: the stream keeps a bounded number of batches (XADD MAXLEN ~)", async () => {
    redis = await startRedis();
    const admin = redis.admin();
    // a stream already past its bound (written here, untrimmed), as after a long busy spell
    const pipeline = admin.pipeline();
    for (let i = 0; i < EVENT_STREAM_MAX_BATCHES + 1000; i++) pipeline.xadd(EVENT_STREAM, "*", "batch", `old-${i}`, "events", "[]");
    await pipeline.exec();
    const bus = await redisEventBus(redis.url);
    buses.push(bus);
    bus.pubsub.publish("caseChanged", event);
    await bus.delivered();
    const length = await admin.xlen(EVENT_STREAM);
    expect(length).toBeGreaterThanOrEqual(EVENT_STREAM_MAX_BATCHES);
    // trimmed by whole nodes of the stream (100 entries each by default)
    expect(length).toBeLessThan(EVENT_STREAM_MAX_BATCHES + 200);
  }, 60_000);
});
