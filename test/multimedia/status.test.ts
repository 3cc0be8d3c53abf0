import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { AppSystem } from "../../src/apps/app.system.ts";
import type { TaskAttempt } from "../../src/multimedia/job.queue.ts";
import { emptyArchiveResult } from "../../src/multimedia/archive/archive-result.ts";
import { Superseded } from "../../src/multimedia/job.attempt.ts";
import { MultimediaWorker } from "../../src/multimedia/worker.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, appsBase, createApp, getStatus, png, postMultimedia, waitForStatus, zip } from "../helpers/archives.ts";

/**
 * CONTRACT §4 "GET {app_id}/multimedia/status/{processing_id}/": app not in the domain → 404; id
 * unknown, of another app or domain, or expired → 404 `Processing ID not found or expired`; a
 * failed job → 500 `Multimedia processing task failed`; 200 with the result fields only once
 * complete, `in_queue` true until then. The main app runs no workers: jobs are run on demand by a
 * worker started in the test, so the queued state is observable.
 */

const NOT_FOUND = { success: false, error: "Processing ID not found or expired" };
const FAILED = { success: false, error: "Multimedia processing task failed" };
const RUNNING_KEYS = ["success", "complete", "in_queue", "progress", "errors", "processing_id"];
const COMPLETE_KEYS = [
  ...RUNNING_KEYS,
  "matched_count",
  "unmatched_count",
  "total_files",
  "processed_files",
  "image_count",
  "audio_count",
  "video_count",
  "matched_files",
  "unmatched_files",
  "skipped_files",
];

let app: TestApp;
let user: TestUser;
const DOMAIN = "demo";
const OTHER = "elsewhere";

beforeAll(async () => {
  app = await build({ workers: 0 });
  await createDomain(app, DOMAIN);
  await createDomain(app, OTHER);
  user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
});
afterAll(() => app?.close());

/** Runs the queued jobs of `app` with a worker of its own until `until` resolves. */
async function withWorker<T>(
  target: TestApp,
  until: () => Promise<T>,
  apps: Pick<AppSystem, "references"> = new AppSystem(target.db.prisma),
): Promise<T> {
  const { jobAttempts, blobs, jobQueue, config } = target.services;
  const worker = new MultimediaWorker(jobAttempts, apps, blobs, jobQueue, { ...config, workers: 1 });
  await worker.start();
  try {
    return await until();
  } finally {
    await worker.stop();
  }
}

async function queued(appId: string, domain = DOMAIN, authorization = user.authorization) {
  const res = await postMultimedia(
    app,
    authorization,
    domain,
    appId,
    await zip([{ name: "commcare/" }, { name: "commcare/image/a.png", data: png(1) }, { name: "x.txt", data: Buffer.from("x") }]),
  );
  expect(res.status).toBe(200);
  return res.body.processing_id as string;
}

const status = (appId: string, id: string, domain = DOMAIN, authorization = user.authorization) => getStatus(app, authorization, domain, appId, id);

describe("200 while queued: the six fields only, in_queue true", () => {
  it("complete false, in_queue true, progress {percent 0, current 0, total}, errors [], no result fields", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
    const id = await queued(appId);
    const res = await status(appId, id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(RUNNING_KEYS);
    expect(res.body).toEqual({
      success: true,
      complete: false,
      in_queue: true,
      progress: { percent: 0, current: 0, total: 3 },
      errors: [],
      processing_id: id,
    });
    expect(Object.keys(res.body.progress)).toEqual(["percent", "current", "total"]);
  });

  it("a job part-way reports floor(100·current/total) and is still in_queue", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    await app.db.prisma.multimediaJob.updateMany({ where: { id }, data: { status: "running", current: 2 } });
    const res = await status(appId, id);
    expect(res.body).toEqual({
      success: true,
      complete: false,
      in_queue: true,
      progress: { percent: 66, current: 2, total: 3 },
      errors: [],
      processing_id: id,
    });
  });
});

describe("in_queue is true until complete, then false with every result field in order", () => {
  it("queued → complete: in_queue flips, progress reaches 100, result keys exactly in contract order", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
    const id = await queued(appId);
    expect((await status(appId, id)).body).toMatchObject({ complete: false, in_queue: true });
    const done = await withWorker(app, () => waitForStatus(app, user.authorization, DOMAIN, appId, id));
    expect(done.status).toBe(200);
    expect(Object.keys(done.body)).toEqual(COMPLETE_KEYS);
    expect(done.body).toMatchObject({
      success: true,
      complete: true,
      in_queue: false,
      progress: { percent: 100, current: 3, total: 3 },
      errors: [],
      processing_id: id,
      matched_count: 1,
      unmatched_count: 0,
      total_files: 3,
      image_count: 1,
      audio_count: 0,
      video_count: 0,
    });
    // reading it again gives the same record
    expect((await status(appId, id)).body).toEqual(done.body);
  });

  it("the path works without its trailing slash", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    const res = await app
      .http()
      .get(`${appsBase(DOMAIN)}/${appId}/multimedia/status/${id}`)
      .set("Authorization", user.authorization);
    expect(res.status).toBe(200);
    expect(res.body.processing_id).toBe(id);
  });
});

describe("404 Processing ID not found or expired", () => {
  it("an unknown id (well-formed or not)", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    for (const id of [`dl-${"0".repeat(32)}`, "nope", "dl-", "dl-%00"]) {
      const res = await status(appId, id);
      expect(res.status).toBe(404);
      expect(Object.keys(res.body)).toEqual(["success", "error"]);
      expect(res.body).toEqual(NOT_FOUND);
    }
  });

  it("another app's processing id, in the same domain", async () => {
    const first = await createApp(app, user.authorization, DOMAIN, appSource());
    const second = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(first);
    const res = await status(second, id);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it("another domain's processing id (asked through an app of this domain)", async () => {
    const other = await createUser(app, { domain: OTHER, permissions: ["edit_apps"] });
    const foreignApp = await createApp(app, other.authorization, OTHER, appSource());
    const foreignId = await queued(foreignApp, OTHER, other.authorization);
    const mine = await createApp(app, user.authorization, DOMAIN, appSource());
    const res = await status(mine, foreignId);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it("an expired job (expires_at in the past)", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    await app.db.prisma.multimediaJob.updateMany({
      where: { id },
      data: { status: "complete", result: emptyArchiveResult() as object, expiresAt: new Date(Date.now() - 1000) },
    });
    const res = await status(appId, id);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it("an expired failed job is 404, not 500", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    await app.db.prisma.multimediaJob.updateMany({ where: { id }, data: { status: "failed", expiresAt: new Date(Date.now() - 1000) } });
    expect((await status(appId, id)).body).toEqual(NOT_FOUND);
  });

  it("the lifetime counts from completion (MULTIMEDIA_JOB_TTL_SECONDS): readable at first, then 404", async () => {
    const short = await build({ multimediaJobTtlSeconds: 1 });
    try {
      await createDomain(short, DOMAIN);
      const u = await createUser(short, { domain: DOMAIN, permissions: ["edit_apps"] });
      const appId = await createApp(short, u.authorization, DOMAIN, appSource());
      const upload = await postMultimedia(short, u.authorization, DOMAIN, appId, await zip([{ name: "a.png", data: png(5) }]));
      const id = upload.body.processing_id as string;
      // poll until the id is gone (the job completes, then expires a second later)
      const seen: { status: number; complete?: boolean; at: number }[] = [];
      const deadline = Date.now() + 15_000;
      for (;;) {
        const res = await getStatus(short, u.authorization, DOMAIN, appId, id);
        seen.push({ status: res.status, complete: res.body.complete, at: Date.now() });
        if (res.status !== 200) {
          expect(res.status).toBe(404);
          expect(res.body).toEqual(NOT_FOUND);
          break;
        }
        if (Date.now() > deadline) throw new Error("the processing id never expired");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const job = await short.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } });
      const lifetime = job.expiresAt!.getTime() - job.completedAt!.getTime();
      expect(lifetime).toBeGreaterThanOrEqual(900);
      expect(lifetime).toBeLessThanOrEqual(1100);
      // 404 only once expired; before that every answer was a 200
      expect(seen.at(-1)!.at).toBeGreaterThanOrEqual(job.expiresAt!.getTime());
      expect(seen.slice(0, -1).every((s) => s.status === 200)).toBe(true);
    } finally {
      await short.close();
    }
  });

  it("the default lifetime is one hour after completion", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    const done = await withWorker(app, () => waitForStatus(app, user.authorization, DOMAIN, appId, id));
    expect(done.status).toBe(200);
    const job = await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } });
    expect(job.expiresAt!.getTime() - job.completedAt!.getTime()).toBeGreaterThanOrEqual(3600_000 - 100);
    expect(job.expiresAt!.getTime() - job.completedAt!.getTime()).toBeLessThanOrEqual(3600_000 + 100);
  });
});

describe("app not in the domain → 404", () => {
  it("an unknown app id, even with a valid processing id", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    const res = await status("0".repeat(32), id);
    expect(res.status).toBe(404);
    expect((await status("a%00b", id)).status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["success", "error"]);
    expect(res.body.success).toBe(false);
  });

  it("another domain's app, asked under this domain", async () => {
    const other = await createUser(app, { domain: OTHER, permissions: ["edit_apps"] });
    const foreignApp = await createApp(app, other.authorization, OTHER, appSource());
    const foreignId = await queued(foreignApp, OTHER, other.authorization);
    const res = await status(foreignApp, foreignId);
    expect(res.status).toBe(404);
    expect(res.body.success).toBe(false);
    // and it is readable in its own domain
    expect((await status(foreignApp, foreignId, OTHER, other.authorization)).status).toBe(200);
  });
});

describe("a failed job → 500 {success: false, error: Multimedia processing task failed}", () => {
  it("a job marked failed", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    await app.db.prisma.multimediaJob.updateMany({
      where: { id },
      data: { status: "failed", errors: ["boom"], expiresAt: new Date(Date.now() + 60_000) },
    });
    const res = await status(appId, id);
    expect(res.status).toBe(500);
    expect(Object.keys(res.body)).toEqual(["success", "error"]);
    expect(res.body).toEqual(FAILED);
  });

  it("a job whose archive is gone when it runs fails, and says so", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    const job = await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } });
    await app.services.blobs.delete(job.archiveKey);
    const res = await withWorker(app, () => waitForStatus(app, user.authorization, DOMAIN, appId, id));
    expect(res.status).toBe(500);
    expect(res.body).toEqual(FAILED);
  });
});

/** The app service with `references` (the first thing a job reads) replaced. */
function appsWhere(references: AppSystem["references"]): Pick<AppSystem, "references"> {
  return { references };
}

/** The worker's real read of an app's references. */
const realReferences: AppSystem["references"] = (domain, appId) => new AppSystem(app.db.prisma).references(domain, appId);

describe("attempts: a crash is retried, three crashes fail the job, a stale attempt writes nothing", () => {
  it("a job that crashes on every attempt is tried three times, then failed → 500", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
    const id = await queued(appId);
    let tries = 0;
    const crashing = appsWhere(async () => {
      tries += 1;
      throw new Error("the database went away");
    });
    const res = await withWorker(app, () => waitForStatus(app, user.authorization, DOMAIN, appId, id), crashing);
    expect(res.status).toBe(500);
    expect(res.body).toEqual(FAILED);
    expect(tries).toBe(3);
    const row = await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } });
    expect(row).toMatchObject({ status: "failed", attempts: 3, lockedBy: null });
    expect(await app.services.blobs.has(row.archiveKey)).toBe(false);
  });

  it("a job that crashes once is retried and completes", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
    const id = await queued(appId);
    let tries = 0;
    const flaky = appsWhere(async (domain, target) => {
      tries += 1;
      if (tries === 1) throw new Error("the database went away");
      return realReferences(domain, target);
    });
    const res = await withWorker(app, () => waitForStatus(app, user.authorization, DOMAIN, appId, id), flaky);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ complete: true, matched_count: 1 });
    expect(await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } })).toMatchObject({ attempts: 2 });
  });

  it("once a later attempt has taken the job, the earlier one can neither report progress nor complete it", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    const attempt = (retryCount: number) => ({ id: randomUUID(), retryCount, data: { processingId: id } }) as TaskAttempt;
    const jobs = app.services.jobAttempts;
    const stale = (await jobs.begin(attempt(0)))!;
    const current = (await jobs.begin(attempt(1)))!;
    await current.progress(1, 3);
    await expect(stale.progress(2, 3)).rejects.toBeInstanceOf(Superseded);
    await expect(stale.complete(emptyArchiveResult(), [])).rejects.toBeInstanceOf(Superseded);
    await stale.fail("stale");
    expect(await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } })).toMatchObject({
      status: "running",
      current: 1,
      lockedBy: current.job.attempt,
    });
  });

  it("a job interrupted by shutdown goes back to the queue, not counted as a failed attempt, and completes later", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
    const id = await queued(appId);
    const { jobAttempts, blobs, jobQueue, config } = app.services;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let stopped!: () => void;
    const stopCalled = new Promise<void>((resolve) => (stopped = resolve));
    // references() is the job's first read: hold the job there until shutdown has begun
    const held = appsWhere(async (domain, target) => {
      started();
      await stopCalled;
      return realReferences(domain, target);
    });
    const worker = new MultimediaWorker(jobAttempts, held, blobs, jobQueue, { ...config, workers: 1 });
    await worker.start();
    await running;
    const stopping = worker.stop();
    stopped();
    await stopping;
    expect(await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } })).toMatchObject({ status: "queued", current: 0, lockedBy: null });

    const res = await withWorker(app, () => waitForStatus(app, user.authorization, DOMAIN, appId, id));
    expect(res.body).toMatchObject({ complete: true, matched_count: 1 });
    expect(await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id } })).toMatchObject({ attempts: 1 });
  });

  it("a settled job is not started again (a duplicate delivery does nothing)", async () => {
    const appId = await createApp(app, user.authorization, DOMAIN, appSource());
    const id = await queued(appId);
    await app.db.prisma.multimediaJob.updateMany({ where: { id }, data: { status: "complete", result: emptyArchiveResult() as object } });
    expect(await app.services.jobAttempts.begin({ id: randomUUID(), retryCount: 0, data: { processingId: id } } as TaskAttempt)).toBeNull();
  });
});
