import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, createApp, expectAppsError, png, postMultimedia, zip } from "../helpers/archives.ts";
import { errorCodes } from "../helpers/graphql.ts";

/**
 * Issue #24 G7: queued archives are bounded. A domain's archives waiting for their jobs (queued or
 * running) stay within MULTIMEDIA_QUEUE_LIMIT_BYTES: past it an upload is refused 429 with
 * Retry-After, on REST and GraphQL alike, and nothing of it is kept. An upload is spooled only
 * while the spool's filesystem keeps UPLOAD_MIN_FREE_BYTES free: else 507 before it is read.
 * No workers run, so every accepted job stays queued.
 */

const DOMAIN = "demo";
const OTHER = "elsewhere";
const QUEUE_FULL = (limit: number) =>
  `Multimedia archives waiting to be processed in this domain would exceed ${limit} bytes. Retry once they are processed.`;
const LOW_DISK = "Not enough free disk space to accept this upload. Retry later.";

let app: TestApp;
let user: TestUser;
let appId: string;

afterEach(async () => {
  await app?.close();
});

/** Archives of one size (different bytes each, so no two are the same content). */
const archive = (seed: number) => zip([{ name: "commcare/image/a.png", data: png(seed), compress: false }]);

async function setUp(limitFor: (archiveBytes: number) => Partial<Parameters<typeof build>[0]>): Promise<number> {
  const size = (await archive(0)).length;
  app = await build({ workers: 0, ...limitFor(size) });
  await createDomain(app, DOMAIN);
  await createDomain(app, OTHER);
  user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
  appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
  return size;
}

const upload = async (seed: number, domain = DOMAIN, as = user, id = appId) => postMultimedia(app, as.authorization, domain, id, await archive(seed));

/** A GraphQL multipart upload (the preflight header satisfies CSRF prevention). */
const uploadGraphQL = async (seed: number) =>
  app
    .http()
    .post("/graphql")
    .set("Authorization", user.authorization)
    .set("apollo-require-preflight", "true")
    .field(
      "operations",
      JSON.stringify({
        query: "mutation($domain: String!, $appId: ID!, $file: Upload!) { uploadMultimedia(domain: $domain, appId: $appId, file: $file) }",
        variables: { domain: DOMAIN, appId, file: null },
      }),
    )
    .field("map", JSON.stringify({ 0: ["variables.file"] }))
    .attach("0", await archive(seed), "media.zip");

const jobCount = () => app.db.prisma.multimediaJob.count();
/** Archives in the blob store: files under DATA_DIR on the embedded database, rows of `blobs` on PostgreSQL. */
const storedArchiveBlobs = async () =>
  (await readdir(path.join(app.services.config.dataDir, "blobs", "archives")).catch(() => [])).length +
  (await app.db.prisma.blob.count({ where: { key: { startsWith: "archives/" } } }));

describe("MULTIMEDIA_QUEUE_LIMIT_BYTES: a domain's queued archives are bounded", () => {
  it("G7: past the bound REST answers 429 {success: false, error} with Retry-After, and keeps nothing of the upload", async () => {
    const size = await setUp((bytes) => ({ multimediaQueueLimitBytes: Math.floor(bytes * 2.5) }));
    const limit = Math.floor(size * 2.5);
    for (let seed = 1; seed <= 2; seed++) expect((await upload(seed)).status).toBe(200);
    const jobs = await jobCount();
    const blobs = await storedArchiveBlobs();
    const refused = await upload(3);
    expectAppsError(refused, 429, QUEUE_FULL(limit));
    expect(refused.headers["retry-after"]).toBe("60");
    expect(await jobCount()).toBe(jobs);
    expect(await storedArchiveBlobs()).toBe(blobs);
    expect(await storedArchiveBlobs()).toBe(2);
  });

  it("G7: the bound is per domain, and a settled job's archive no longer counts", async () => {
    await setUp((bytes) => ({ multimediaQueueLimitBytes: bytes }));
    expect((await upload(1)).status).toBe(200);
    expect((await upload(2)).status).toBe(429);
    // another domain has its own room
    const other = await createUser(app, { domain: OTHER, permissions: ["edit_apps"] });
    const otherApp = await createApp(app, other.authorization, OTHER, appSource());
    expect((await upload(3, OTHER, other, otherApp)).status).toBe(200);
    // the job ran (as the worker settles it): its archive is gone from the queue
    await app.db.prisma.multimediaJob.updateMany({ where: { domain: { name: DOMAIN } }, data: { status: "complete" } });
    expect((await upload(4)).status).toBe(200);
  });

  it("G7: uploads sent at once are counted one after another: no more than the bound is accepted", async () => {
    await setUp((bytes) => ({ multimediaQueueLimitBytes: Math.floor(bytes * 2.5) }));
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((seed) => upload(seed)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    expect(await jobCount()).toBe(2);
    expect(await storedArchiveBlobs()).toBe(2);
  });

  it("G7: the GraphQL upload mutation meets the same bound: QUOTA_EXCEEDED with the same message", async () => {
    const size = await setUp((bytes) => ({ multimediaQueueLimitBytes: bytes }));
    const first = await uploadGraphQL(1);
    expect(first.body.data.uploadMultimedia).toMatch(/^dl-[0-9a-f]{32}$/);
    const refused = await uploadGraphQL(2);
    expect(errorCodes(refused.body)).toEqual(["QUOTA_EXCEEDED"]);
    expect(refused.body.errors[0].message).toBe(QUEUE_FULL(size));
    expect(await jobCount()).toBe(1);
  });

  it("G7: defaults: 2 GiB of queued archives per domain, 512 MiB kept free; 0 lifts the bound", async () => {
    expect(loadConfig({})).toMatchObject({ multimediaQueueLimitBytes: 2 * 1024 ** 3, uploadMinFreeBytes: 512 * 1024 ** 2 });
    expect(loadConfig({ MULTIMEDIA_QUEUE_LIMIT_BYTES: "0", UPLOAD_MIN_FREE_BYTES: "0" })).toMatchObject({
      multimediaQueueLimitBytes: 0,
      uploadMinFreeBytes: 0,
    });
    expect(() => loadConfig({ MULTIMEDIA_QUEUE_LIMIT_BYTES: "-1" })).toThrow(/MULTIMEDIA_QUEUE_LIMIT_BYTES/);
    await setUp(() => ({ multimediaQueueLimitBytes: 0 }));
    for (let seed = 1; seed <= 3; seed++) expect((await upload(seed)).status).toBe(200);
  });
});

describe("UPLOAD_MIN_FREE_BYTES: the spool's free space is checked before the upload is read", () => {
  it("G7: an upload that would leave the spool's filesystem under the free-space floor is refused 507 on REST and GraphQL, nothing spooled or kept", async () => {
    // no disk has this much free: the check itself (statfs of the spool directory) refuses
    await setUp(() => ({ uploadMinFreeBytes: Number.MAX_SAFE_INTEGER }));
    const spool = await app.services.blobs.tempDir();
    const before = await readdir(spool);
    const refused = await upload(1);
    expectAppsError(refused, 507, LOW_DISK);
    const viaGraphQL = await uploadGraphQL(2);
    expect(errorCodes(viaGraphQL.body)).toEqual(["INSUFFICIENT_STORAGE"]);
    expect(viaGraphQL.body.errors[0].message).toBe(LOW_DISK);
    expect((await readdir(spool)).filter((entry) => !before.includes(entry))).toEqual([]);
    expect(await jobCount()).toBe(0);
  });
});
