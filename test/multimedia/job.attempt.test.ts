import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptyArchiveResult, type StoredMedia } from "../../src/multimedia/archive/archive-result.ts";
import { Superseded } from "../../src/multimedia/job.attempt.ts";
import type { MultimediaStatus } from "../../src/multimedia/job.events.ts";
import type { TaskAttempt } from "../../src/multimedia/job.queue.ts";
import { build, createDomain, type TestApp } from "../helpers/app.ts";

/**
 * The worker's fenced lifecycle of a job (CONTRACT §4), at the service tier: no HTTP, no worker,
 * the attempts driven by hand over a fresh database. The job row's locked_by names the one attempt
 * allowed to write it; every write of another attempt is refused (Superseded) or does nothing, and
 * leaves the row, the app's map and the archive as the owning attempt left them.
 */

let app: TestApp;
let domainId: string;
const APP_ID = "a".repeat(32);
const heard: MultimediaStatus[] = [];
let stopListening: () => void;

beforeAll(async () => {
  app = await build({ workers: 0 });
  await createDomain(app, "demo");
  domainId = (await app.db.prisma.domain.findUniqueOrThrow({ where: { name: "demo" } })).id;
  await app.db.prisma.app.create({ data: { id: APP_ID, domainId, name: "demo app", docType: "Application" } });
  stopListening = app.services.multimediaJobs.listen(domainId, (status) => heard.push(status));
});
afterAll(async () => {
  stopListening?.();
  await app?.close();
});
beforeEach(() => {
  heard.length = 0;
});

/** A queued job with an archive in the blob store, as an upload leaves it. */
async function queuedJob(total = 3): Promise<string> {
  const id = `dl-${randomUUID().replaceAll("-", "")}`;
  await app.services.blobs.putBuffer(`archives/${id}`, Buffer.from("not read by these tests"));
  await app.db.prisma.multimediaJob.create({ data: { id, domainId, appId: APP_ID, archiveKey: `archives/${id}`, total, status: "queued" } });
  return id;
}

/** The n-th delivery of the job by pg-boss (retryCount n), as the queue hands it to a worker. */
const delivery = (processingId: string, retryCount = 0) => ({ id: randomUUID(), retryCount, data: { processingId, domainId } }) as TaskAttempt;

/** A delivery of a job queued by a release whose payload named the job by id alone. */
const deliveryWithoutDomain = (processingId: string) => ({ id: randomUUID(), retryCount: 0, data: { processingId } }) as TaskAttempt;

const row = (id: string) => app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } });

const oneImage = (fileId: string): StoredMedia[] => [
  { canonicalPath: "jr://file/commcare/image/a.png", fileId, mediaType: "image", sha256: "0".repeat(64) },
];

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("begin: an attempt takes the job row and holds its fence", () => {
  it("a queued job starts running under the attempt, counted as its n-th, and the start is published", async () => {
    const id = await queuedJob();
    const task = delivery(id, 1);
    const attempt = (await app.services.jobAttempts.begin(task))!;
    expect(attempt.job).toMatchObject({ id, attempt: `${task.id}:1`, status: "running", attempts: 2, current: 0, total: 3 });
    expect(await row(id)).toMatchObject({ status: "running", lockedBy: `${task.id}:1`, attempts: 2 });
    await until(() => heard.some((s) => s.id === id && s.state === "running"));
  });

  it("a settled job is not started again (a duplicate delivery gets no attempt)", async () => {
    const id = await queuedJob();
    await app.db.prisma.multimediaJob.updateMany({ where: { id }, data: { status: "complete", result: emptyArchiveResult() as object } });
    expect(await app.services.jobAttempts.begin(delivery(id))).toBeNull();
    expect(await row(id)).toMatchObject({ status: "complete", lockedBy: null });
  });
});

describe("a job queued before the payload carried its domain", () => {
  it("is begun by its id alone, and the attempt then names the row by id and domain: it progresses and completes", async () => {
    const id = await queuedJob(2);
    const attempt = (await app.services.jobAttempts.begin(deliveryWithoutDomain(id)))!;
    expect(attempt.job).toMatchObject({ id, domainId, status: "running" });
    await attempt.progress(1, 2);
    await attempt.complete(emptyArchiveResult(), []);
    expect(await row(id)).toMatchObject({ status: "complete", current: 2, lockedBy: null });
  });

  it("is given up by its id alone", async () => {
    const id = await queuedJob();
    await app.services.jobAttempts.begin(deliveryWithoutDomain(id));
    await app.services.jobAttempts.giveUp({ processingId: id });
    expect(await row(id)).toMatchObject({ status: "failed", errors: ["The processing task crashed."], lockedBy: null });
  });
});

describe("the fence: only the attempt named by locked_by writes the job", () => {
  it("a superseded attempt cannot complete: its mapping of the app's files is rolled back with it", async () => {
    const id = await queuedJob();
    const stale = (await app.services.jobAttempts.begin(delivery(id, 0)))!;
    const current = (await app.services.jobAttempts.begin(delivery(id, 1)))!;
    await expect(stale.complete(emptyArchiveResult(), oneImage(randomUUID()))).rejects.toBeInstanceOf(Superseded);
    expect(await row(id)).toMatchObject({ status: "running", lockedBy: current.job.attempt, completedAt: null });
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id: APP_ID } })).multimediaMap).toEqual({});
    expect(await app.services.blobs.has(`archives/${id}`)).toBe(true);
  });

  it("a superseded attempt's progress is refused and leaves the current attempt's progress", async () => {
    const id = await queuedJob();
    const stale = (await app.services.jobAttempts.begin(delivery(id, 0)))!;
    const current = (await app.services.jobAttempts.begin(delivery(id, 1)))!;
    await current.progress(1, 3);
    await expect(stale.progress(2, 3)).rejects.toBeInstanceOf(Superseded);
    expect(await row(id)).toMatchObject({ current: 1, lockedBy: current.job.attempt });
  });

  it("a superseded attempt's failure does nothing", async () => {
    const id = await queuedJob();
    const stale = (await app.services.jobAttempts.begin(delivery(id, 0)))!;
    const current = (await app.services.jobAttempts.begin(delivery(id, 1)))!;
    await stale.fail("stale");
    expect(await row(id)).toMatchObject({ status: "running", errors: [], lockedBy: current.job.attempt });
    expect(await app.services.blobs.has(`archives/${id}`)).toBe(true);
  });

  it("a requeued job's old attempt is refused: its progress throws, its completion throws, its failure does nothing", async () => {
    const id = await queuedJob();
    const attempt = (await app.services.jobAttempts.begin(delivery(id)))!;
    await attempt.progress(2, 3);
    await attempt.requeue();
    expect(await row(id)).toMatchObject({ status: "queued", current: 0, lockedBy: null });
    await until(() => heard.some((s) => s.id === id && s.state === "queued"));
    await expect(attempt.progress(3, 3)).rejects.toBeInstanceOf(Superseded);
    await expect(attempt.complete(emptyArchiveResult(), [])).rejects.toBeInstanceOf(Superseded);
    await attempt.fail("too late");
    expect(await row(id)).toMatchObject({ status: "queued", current: 0, lockedBy: null, errors: [] });
  });

  it("a requeue by a superseded attempt does not take the job from the current one", async () => {
    const id = await queuedJob();
    const stale = (await app.services.jobAttempts.begin(delivery(id, 0)))!;
    const current = (await app.services.jobAttempts.begin(delivery(id, 1)))!;
    await stale.requeue();
    expect(await row(id)).toMatchObject({ status: "running", lockedBy: current.job.attempt });
  });
});

describe("settling: complete, fail, give up", () => {
  it("the owning attempt completes: the app maps the stored file, the archive is deleted, the status lives MULTIMEDIA_JOB_TTL_SECONDS", async () => {
    const id = await queuedJob(1);
    const attempt = (await app.services.jobAttempts.begin(delivery(id)))!;
    const fileId = await attempt.store({
      content: { buffer: Buffer.from("png bytes") },
      sha256: "1".repeat(64),
      md5: "2".repeat(32),
      size: 9,
      contentType: "image/png",
      mediaClass: "AppImage",
    });
    const before = Date.now();
    await attempt.complete(emptyArchiveResult(), oneImage(fileId));
    const done = await row(id);
    expect(done).toMatchObject({ status: "complete", current: 1, lockedBy: null });
    expect(done.expiresAt!.getTime() - done.completedAt!.getTime()).toBe(app.services.config.multimediaJobTtlSeconds * 1000);
    expect(done.completedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    const map = (await app.db.prisma.app.findFirstOrThrow({ where: { id: APP_ID } })).multimediaMap as Record<string, { fileId: string }>;
    expect(map["jr://file/commcare/image/a.png"]?.fileId).toBe(fileId);
    expect(await app.services.blobs.has(`archives/${id}`)).toBe(false);
    await until(() => heard.some((s) => s.id === id && s.state === "complete"));
  });

  it("a file of the same content is stored once per domain: a second store answers the first one's id", async () => {
    const id = await queuedJob();
    const attempt = (await app.services.jobAttempts.begin(delivery(id)))!;
    const file = {
      content: { buffer: Buffer.from("same") },
      sha256: "3".repeat(64),
      md5: "4".repeat(32),
      size: 4,
      contentType: "image/png",
      mediaClass: "AppImage",
    };
    const first = await attempt.store(file);
    expect(await attempt.store(file)).toBe(first);
    expect(await app.db.prisma.multimediaFile.count({ where: { domainId, sha256: file.sha256 } })).toBe(1);
  });

  it("the owning attempt fails the job for good: the reason is its error, the archive is deleted", async () => {
    const id = await queuedJob();
    const attempt = (await app.services.jobAttempts.begin(delivery(id)))!;
    await attempt.fail("ZIP file is corrupt");
    expect(await row(id)).toMatchObject({ status: "failed", errors: ["ZIP file is corrupt"], lockedBy: null });
    expect(await app.services.blobs.has(`archives/${id}`)).toBe(false);
  });

  it("giving up (attempts used up) fails an unsettled job, and leaves a settled one as it is", async () => {
    const running = await queuedJob();
    await app.services.jobAttempts.begin(delivery(running));
    await app.services.jobAttempts.giveUp({ processingId: running, domainId });
    expect(await row(running)).toMatchObject({ status: "failed", errors: ["The processing task crashed."], lockedBy: null });

    const complete = await queuedJob();
    const attempt = (await app.services.jobAttempts.begin(delivery(complete)))!;
    await attempt.complete(emptyArchiveResult(), []);
    await app.services.jobAttempts.giveUp({ processingId: complete, domainId });
    expect(await row(complete)).toMatchObject({ status: "complete", errors: [] });
  });
});

describe("publishing: each progress goes out once, from the row the write left", () => {
  it("a progress within the job's rate is published at once with the written counts", async () => {
    const id = await queuedJob(5);
    const attempt = (await app.services.jobAttempts.begin(delivery(id)))!;
    await attempt.progress(1, 4);
    await until(() => heard.some((s) => s.id === id && s.current === 1));
    expect(heard.filter((s) => s.id === id).map((s) => `${s.state}/${s.current}/${s.total}`)).toEqual(["running/0/5", "running/1/4"]);
  });
});
