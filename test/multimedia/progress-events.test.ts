import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import type { MultimediaStatus } from "../../src/multimedia/job.events.ts";
import type { TaskAttempt } from "../../src/multimedia/job.queue.ts";
import { build, createDomain, createUser, type TestApp } from "../helpers/app.ts";
import { appSource, createApp, png, postMultimedia, zip } from "../helpers/archives.ts";
import { aroundStatements } from "../helpers/db.ts";

/**
 * CONTRACT §7.4, where the events are made: a running job publishes each progress once, in order,
 * whoever reads it. The publisher (job.publisher.ts) sends a progress within the job's rate from
 * the row its write returned, and a held-back one from the row as it is when the send goes out,
 * which may be later than the progress that asked for it; the subscribers' coalescing
 * (job.coalescing.ts) lets an equal progress through, so a progress published twice reached every dashboard twice (and ran
 * every shared subscription execution twice: test/graphql/subscription-events.test.ts).
 */

/** A gate on the statements matching `pattern`: once armed, the next one commits, then its caller waits for release(). */
function holdingAfterCommit(db: Database, pattern: RegExp) {
  let armed: { reached: () => void; released: Promise<void> } | undefined;
  return {
    db: aroundStatements(db, async (sql, run) => {
      const result = await run();
      const gate = armed;
      if (gate && pattern.test(sql)) {
        armed = undefined;
        gate.reached();
        await gate.released;
      }
      return result;
    }),
    /** Arms the gate: resolves once a matching statement has committed; `release` lets its caller go on. */
    arm() {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const reached = new Promise<void>((resolve) => (armed = { reached: resolve, released }));
      return { reached, release };
    },
  };
}

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("CONTRACT §7.4 a running job publishes each progress once, in order", () => {
  it("a held-back progress sent while the next entry's write commits publishes that entry, which is then not published again", async () => {
    let gate!: ReturnType<typeof holdingAfterCommit>;
    // one progress event a second: the second progress of the test is held back for a second
    app = await build({ workers: 0, progressEventsPerSecond: 1 }, (db) => (gate = holdingAfterCommit(db, /UPDATE multimedia_jobs SET current/)).db);
    await createDomain(app, "demo");
    const user = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
    const paths = [1, 2, 3].map((i) => `jr://file/commcare/image/i${i}.png`);
    const appId = await createApp(app, user.authorization, "demo", appSource({ paths }));
    const archive = await zip([1, 2, 3].map((i) => ({ name: `commcare/image/i${i}.png`, data: png(i) })));
    const domain = await app.db.prisma.domain.findUniqueOrThrow({ where: { name: "demo" } });
    const heard: MultimediaStatus[] = [];
    const stop = app.services.multimediaJobs.listen(domain.id, (status) => heard.push(status));
    const processingId = (await postMultimedia(app, user.authorization, "demo", appId, archive).expect(200)).body.processing_id as string;
    // the attempt a worker would run (workers: 0, so this test drives it entry by entry)
    const job = (await app.services.jobAttempts.begin({ id: randomUUID(), retryCount: 0, data: { processingId } } as TaskAttempt))!;
    await job.progress(1, 3); // within the window: sent now
    await until(() => heard.some((s) => s.current === 1));
    await job.progress(2, 3); // over it: held back for about a second
    // the third entry's write commits, and its call is still on its way back when the held-back
    // send of the second fires: that send reads the row as it is now, the third entry's
    const { reached, release } = gate.arm();
    const third = job.progress(3, 3);
    await reached;
    await until(() => heard.some((s) => s.current === 3));
    release();
    await third;
    // the third entry's own send, held back for the next window, would go out about a second later;
    // then the job settles, and the bus keeps the order of what one process publishes
    await new Promise((r) => setTimeout(r, 1500));
    await job.fail("stopped by the test");
    await until(() => heard.some((s) => s.state === "failed"));
    stop();

    expect(heard.map((s) => `${s.state}/${s.attempts}/${s.current}`)).toEqual([
      "queued/0/0",
      "running/1/0",
      "running/1/1",
      "running/1/3",
      "failed/1/3",
    ]);
  });
});
