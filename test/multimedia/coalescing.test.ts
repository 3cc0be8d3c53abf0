import { describe, expect, it } from "vitest";
import { localEventBus, type EventBus } from "../../src/events/bus.ts";
import { emptyArchiveResult } from "../../src/multimedia/archive/archive-result.ts";
import { JobFeed, type FeedSource } from "../../src/multimedia/job.coalescing.ts";
import type { JobState, MultimediaStatus } from "../../src/multimedia/job.events.ts";

/**
 * CONTRACT §7.4: progress events of one job are coalesced to at most PROGRESS_EVENTS_PER_SECOND
 * per subscription in any one-second window; state changes, the first and the final event are
 * never dropped, and the final one carries the result. Driven through the real in-process event bus.
 */

const DOMAIN_ID = "00000000-0000-4000-8000-000000000001";

function status(id: string, state: JobState, current: number, total = 300): MultimediaStatus {
  return {
    id,
    domainId: DOMAIN_ID,
    appId: "app",
    state,
    current,
    total,
    result: state === "complete" ? { ...emptyArchiveResult(), total_files: total } : null,
    errors: [],
    uploadedBy: "u",
    fileName: "m.zip",
    sizeBytes: 1,
    createdAt: new Date(),
    startedAt: null,
    finishedAt: null,
    attempts: 1,
  };
}

/** The domain's events as the service hands them to a feed (MultimediaJobService.listen). */
const domainEvents =
  (bus: EventBus): FeedSource =>
  (hear) =>
    bus.listen("multimediaProgress", DOMAIN_ID, hear);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Progress events received within any `windowMs` (a little under a second: the receiver lags the sender by a tick). */
function mostInAnyWindow(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0; i < times.length; i++) most = Math.max(most, times.filter((t) => t >= times[i]! && t < times[i]! + windowMs).length);
  return most;
}

async function collect(feed: JobFeed, until: (s: MultimediaStatus) => boolean) {
  const received: { at: number; status: MultimediaStatus }[] = [];
  for await (const s of feed) {
    received.push({ at: Date.now(), status: s });
    if (until(s)) break;
  }
  return received;
}

describe("CONTRACT §7.4 progress coalescing per subscription", () => {
  it("a 300-entry job's progress reaches a subscriber at most 10 times in any second; first, state changes and the final event (with its result) all arrive", async () => {
    const bus = localEventBus();
    const { pubsub } = bus;
    const feed = new JobFeed(domainEvents(bus), { perSecond: 10, accept: () => true }).start();
    const receiving = collect(feed, (s) => s.state === "complete");
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "queued", 0));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", 0));
    for (let current = 1; current <= 300; current++) {
      pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", current));
      if (current % 20 === 0) await sleep(100); // 300 entries over about 1.5 s
    }
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "complete", 300));
    const received = await receiving;

    const states = received.map((r) => r.status.state);
    expect(states[0]).toBe("queued");
    expect(states[1]).toBe("running");
    expect(states.at(-1)).toBe("complete");
    expect(received.at(-1)!.status.result?.total_files).toBe(300);
    const progress = received.slice(2, -1);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.length).toBeLessThanOrEqual(30);
    expect(
      mostInAnyWindow(
        progress.map((r) => r.at),
        950,
      ),
    ).toBeLessThanOrEqual(10);
    // never backwards
    const currents = received.map((r) => r.status.current);
    expect(currents).toEqual([...currents].sort((a, b) => a - b));
  });

  it("the latest progress held back is delivered once the window frees, even when nothing follows it", async () => {
    const bus = localEventBus();
    const { pubsub } = bus;
    const feed = new JobFeed(domainEvents(bus), { perSecond: 2, accept: () => true }).start();
    const receiving = collect(feed, (s) => s.current === 50);
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", 0));
    for (let current = 1; current <= 50; current++) pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", current));
    const received = await receiving;
    // the first event; the first second's two progress events, published in one tick, reach the
    // feed before the subscriber takes the first, so the latter replaces it (latest wins); then,
    // once the window frees, the held latest (50)
    expect(received.map((r) => r.status.current)).toEqual([0, 2, 50]);
    expect(received[2]!.at - received[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it("each job has its own bound; a state change drops the progress it supersedes", async () => {
    const bus = localEventBus();
    const { pubsub } = bus;
    const feed = new JobFeed(domainEvents(bus), { perSecond: 1, accept: () => true }).start();
    const receiving = collect(feed, (s) => s.id === "dl-b" && s.state === "failed");
    for (const id of ["dl-a", "dl-b"]) {
      pubsub.publish("multimediaProgress", DOMAIN_ID, status(id, "running", 0));
      pubsub.publish("multimediaProgress", DOMAIN_ID, status(id, "running", 1));
      pubsub.publish("multimediaProgress", DOMAIN_ID, status(id, "running", 2)); // held
    }
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-a", "complete", 300));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-b", "failed", 2));
    const received = await receiving;
    expect(received.map((r) => `${r.status.id} ${r.status.state} ${r.status.current}`)).toEqual([
      "dl-a running 0",
      "dl-a running 1",
      "dl-b running 0",
      "dl-b running 1",
      "dl-a complete 300",
      "dl-b failed 2",
    ]);
  });

  it("a job's own feed starts with its state read now, replays what was heard meanwhile (older progress dropped) and ends after the final event", async () => {
    const bus = localEventBus();
    const { pubsub } = bus;
    const feed = new JobFeed(domainEvents(bus), {
      perSecond: 10,
      accept: (s) => s.id === "dl-1",
      endWhenSettled: true,
    });
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", 3)); // heard before the read
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-2", "running", 9)); // another job
    await sleep(10);
    feed.start(status("dl-1", "running", 5));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", 6));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "complete", 300));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", 7)); // after the end
    const received: string[] = [];
    for await (const s of feed) received.push(`${s.state} ${s.current}`);
    expect(received).toEqual(["running 5", "running 6", "complete 300"]);
  });

  it("a subscriber that keeps up gets each event once: its state read now and the same event heard just before the read, or the same progress or queued event twice, reach it once", async () => {
    const bus = localEventBus();
    const { pubsub } = bus;
    const publish = (s: MultimediaStatus) => pubsub.publish("multimediaProgress", DOMAIN_ID, s);
    const feed = new JobFeed(domainEvents(bus), { perSecond: 10, accept: (s) => s.id === "dl-1", endWhenSettled: true });
    const take = async (f: JobFeed) => {
      const { value } = await f.next();
      return value && `${value.state} ${value.current}/${value.total}`;
    };
    // on PostgreSQL an event comes back through LISTEN a moment after the row a read finds
    publish(status("dl-1", "running", 5));
    await sleep(10);
    feed.start(status("dl-1", "running", 5));
    const received = [await take(feed)];
    // each next() is waiting when the events come, as for a subscriber that keeps up (one that
    // falls behind has a waiting progress replaced by the latest instead)
    let next = take(feed);
    publish(status("dl-1", "running", 6));
    received.push(await next);
    next = take(feed);
    publish(status("dl-1", "running", 6));
    publish(status("dl-1", "running", 6, 301)); // the same count of another total: news
    received.push(await next);
    next = take(feed);
    publish(status("dl-1", "complete", 301, 301));
    received.push(await next);
    expect(received).toEqual(["running 5/300", "running 6/300", "running 6/301", "complete 301/301"]);

    const queued = new JobFeed(domainEvents(bus), { perSecond: 10, accept: (s) => s.id === "dl-2", endWhenSettled: true });
    publish(status("dl-2", "queued", 0));
    await sleep(10);
    queued.start(status("dl-2", "queued", 0));
    const states = [await take(queued)];
    next = take(queued);
    publish(status("dl-2", "failed", 0));
    states.push(await next);
    expect(states).toEqual(["queued 0/300", "failed 0/300"]);
  });

  it("a new attempt of a job passes at once and its progress, starting again from 0, is not taken for progress going backwards", async () => {
    const bus = localEventBus();
    const { pubsub } = bus;
    const feed = new JobFeed(domainEvents(bus), { perSecond: 10, accept: () => true }).start();
    const receiving = collect(feed, (s) => s.state === "complete");
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", 40));
    pubsub.publish("multimediaProgress", DOMAIN_ID, { ...status("dl-1", "running", 0), attempts: 2 });
    pubsub.publish("multimediaProgress", DOMAIN_ID, { ...status("dl-1", "running", 1), attempts: 2 });
    pubsub.publish("multimediaProgress", DOMAIN_ID, { ...status("dl-1", "complete", 300), attempts: 2 });
    const received = await receiving;
    expect(received.map((r) => `${r.status.attempts} ${r.status.current}`)).toEqual(["1 40", "2 0", "2 1", "2 300"]);
  });

  it("a subscriber that falls behind gets each job's latest progress, not a backlog: a newer progress replaces one not yet taken; first, state changes and final all kept, in order", async () => {
    const bus = localEventBus();
    const { pubsub } = bus;
    const feed = new JobFeed(domainEvents(bus), { perSecond: 1000, accept: () => true }).start();
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "queued", 0));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", 0));
    for (let current = 1; current <= 50; current++) pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", current));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-2", "running", 7));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-2", "running", 8));
    for (let current = 51; current <= 60; current++) pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "running", current));
    pubsub.publish("multimediaProgress", DOMAIN_ID, status("dl-1", "complete", 300));
    await sleep(20); // every event offered while nothing reads the feed
    const received = await collect(feed, (s) => s.state === "complete");
    expect(received.map((r) => `${r.status.id} ${r.status.state} ${r.status.current}`)).toEqual([
      "dl-1 queued 0",
      "dl-1 running 0",
      "dl-1 running 60",
      "dl-2 running 7",
      "dl-2 running 8",
      "dl-1 complete 300",
    ]);
  });

  it("return() ends the feed at once, while a read is pending", async () => {
    const bus = localEventBus();
    const feed = new JobFeed(domainEvents(bus), { perSecond: 10, accept: () => true }).start();
    const pending = feed.next();
    await feed.return();
    expect(await pending).toEqual({ value: undefined, done: true });
  });
});
