import { createHash, randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { S3BlobStore } from "../../src/multimedia/s3-blob-store.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, appsBase, createApp, mp3, png, postMultimedia, uploadAndWait, waitForStatus, zip } from "../helpers/archives.ts";
import { gql } from "../helpers/graphql.ts";
import { S3RVER_CREDENTIALS, startObjectStore, type TestObjectStore } from "../helpers/object-store.ts";
import { graphql } from "../generated/index.ts";

/**
 * CONTRACT §7.6, object storage: with BLOB_STORE_URL the archives and media live in an
 * S3-compatible store (s3rver on loopback, signatures checked). An upload through REST leaves its
 * media in the bucket and nothing in `blobs`/`blob_chunks` or under DATA_DIR/blobs; the REST
 * download streams from the store and honours Range; `MultimediaFile.downloadUrl` is a pre-signed
 * GET that plain fetch reads until it expires, null with local storage.
 */

const DOMAIN = "demo";
const PREFIX = "gateway";

const FILES = graphql(`
  query ObjectStoreFiles($domain: String!, $appId: ID!) {
    app(domain: $domain, appId: $appId) {
      multimedia {
        sha256
        size
        contentType
        downloadUrl
      }
    }
  }
`);

/** Over 1 MiB (and not compressible past ZIP_MAX_RATIO): spooled while it is hashed, and kept in two chunks by the database store. */
const LOGO = Buffer.concat([png(71), randomBytes(1536 * 1024), Buffer.from("end of the logo")]);
const SOUND = mp3(72);

/** An app whose two references the archive's two media match, uploaded and processed: its id. */
async function uploadMedia(target: TestApp, user: TestUser): Promise<string> {
  const source = appSource({ paths: ["jr://file/media/logo.png", "jr://file/media/sound.mp3"] });
  const appId = await createApp(target, user.authorization, DOMAIN, source, "Media app");
  const archive = await zip([
    { name: "media/logo.png", data: LOGO },
    { name: "media/sound.mp3", data: SOUND },
    { name: "notes.txt", data: Buffer.from("not media") },
  ]);
  const status = await uploadAndWait(target, user.authorization, DOMAIN, appId, archive);
  expect(status.body.matched_count).toBe(2);
  return appId;
}

function download(target: TestApp, user: TestUser, appId: string, name: string, range?: string) {
  const req = target
    .http()
    .get(`${appsBase(DOMAIN)}/${appId}/multimedia/file/${name}`)
    .set("Authorization", user.authorization);
  if (range) req.set("Range", range);
  return req.buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on("data", (chunk: Buffer) => chunks.push(chunk));
    res.on("end", () => done(null, Buffer.concat(chunks)));
  });
}

/** CONTRACT §7.6: every Range form, the same on every store. */
async function expectRanges(target: TestApp, user: TestUser, appId: string): Promise<void> {
  const whole = await download(target, user, appId, "media/logo.png");
  expect(whole.status).toBe(200);
  expect(whole.headers["content-length"]).toBe(String(LOGO.length));
  expect(Buffer.compare(whole.body, LOGO)).toBe(0);

  const middle = await download(target, user, appId, "media/logo.png", "bytes=100-199");
  expect(middle.status).toBe(206);
  expect(middle.headers["content-range"]).toBe(`bytes 100-199/${LOGO.length}`);
  expect(middle.headers["content-length"]).toBe("100");
  expect(middle.headers["content-type"]).toBe("image/png");
  expect(middle.headers["x-content-type-options"]).toBe("nosniff");
  expect(Buffer.compare(middle.body, LOGO.subarray(100, 200))).toBe(0);

  // across the database store's 1 MiB chunks
  const across = await download(target, user, appId, "media/logo.png", "bytes=1048000-1049000");
  expect(across.status).toBe(206);
  expect(Buffer.compare(across.body, LOGO.subarray(1048000, 1049001))).toBe(0);
  const tail = await download(target, user, appId, "media/logo.png", `bytes=${LOGO.length - 10}-`);
  expect(tail.status).toBe(206);
  expect(Buffer.compare(tail.body, LOGO.subarray(LOGO.length - 10))).toBe(0);
  const suffix = await download(target, user, appId, "media/logo.png", "bytes=-5");
  expect(suffix.headers["content-range"]).toBe(`bytes ${LOGO.length - 5}-${LOGO.length - 1}/${LOGO.length}`);
  expect(Buffer.compare(suffix.body, LOGO.subarray(LOGO.length - 5))).toBe(0);

  const past = await download(target, user, appId, "media/logo.png", `bytes=${LOGO.length}-`);
  expect(past.status).toBe(416);
  expect(past.headers["content-range"]).toBe(`bytes */${LOGO.length}`);
  // several ranges, or a range the server cannot vouch for (If-Range), are answered whole
  const several = await download(target, user, appId, "media/logo.png", "bytes=0-1,5-6");
  expect([several.status, several.body.length]).toEqual([200, LOGO.length]);
  const conditional = await download(target, user, appId, "media/logo.png", "bytes=0-1").set("If-Range", '"x"');
  expect([conditional.status, conditional.body.length]).toEqual([200, LOGO.length]);
}

describe("§7.6 object storage: BLOB_STORE_URL=s3://BUCKET/PREFIX", () => {
  let store: TestObjectStore;
  let app: TestApp;
  let user: TestUser;
  let appId: string;

  beforeAll(async () => {
    // the AWS SDK's standard credentials, as an operator sets them
    Object.assign(process.env, S3RVER_CREDENTIALS);
    store = await startObjectStore();
    app = await build({ objectStore: store.config(PREFIX) });
    await createDomain(app, DOMAIN);
    user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
    appId = await uploadMedia(app, user);
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
  });

  it("§7.6: an upload through REST completes with every media object in the bucket, nothing in blobs/blob_chunks, nothing under DATA_DIR/blobs", async () => {
    const files = await app.db.prisma.multimediaFile.findMany({ orderBy: { size: "desc" } });
    expect(files.map((f) => f.blobKey)).toHaveLength(2);
    // the archive is gone once processed (deleted just after the completion commits, which the
    // status already shows); the media stay, under the prefix
    const media = files.map((f) => `${PREFIX}/${f.blobKey}`).sort();
    for (let waited = 0; waited < 5000 && (await store.keys()).length > media.length; waited += 50) await delay(50);
    expect(await store.keys()).toEqual(media);
    expect(await app.db.prisma.blob.count()).toBe(0);
    expect(await app.db.prisma.blobChunk.count()).toBe(0);
    const dataDir = app.services.config.dataDir;
    expect(await readdir(path.join(dataDir, "blobs")).catch(() => "absent")).toBe("absent");
    // nothing of the upload or the job stays on local disk either
    expect(await readdir(path.join(dataDir, "tmp")).catch(() => [])).toEqual([]);
  });

  it("§7.6: the GraphQL upload streams to the store too: its media land in the bucket, nothing in the database or under DATA_DIR/blobs", async () => {
    const gqlAppId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/other/pic.png"] }), "GraphQL app");
    const picture = png(73);
    const res = await app
      .http()
      .post("/graphql")
      .set("Authorization", user.authorization)
      .set("apollo-require-preflight", "true")
      .field(
        "operations",
        JSON.stringify({
          query: "mutation($domain: String!, $appId: ID!, $file: Upload!) { uploadMultimedia(domain: $domain, appId: $appId, file: $file) }",
          variables: { domain: DOMAIN, appId: gqlAppId, file: null },
        }),
      )
      .field("map", JSON.stringify({ 0: ["variables.file"] }))
      .attach("0", await zip([{ name: "other/pic.png", data: picture }]), "media.zip");
    const processingId = res.body.data.uploadMultimedia;
    const status = await waitForStatus(app, user.authorization, DOMAIN, gqlAppId, processingId);
    expect(status.body.matched_count).toBe(1);
    expect(await store.keys()).toContain(`${PREFIX}/media/${createSha256(picture)}`);
    expect(await store.keys()).not.toContain(`${PREFIX}/archives/${processingId}`);
    expect([await app.db.prisma.blob.count(), await app.db.prisma.blobChunk.count()]).toEqual([0, 0]);
    expect(await readdir(path.join(app.services.config.dataDir, "blobs")).catch(() => "absent")).toBe("absent");
  });

  it("§7.6: an archive refused at upload (not a ZIP, corrupt) leaves nothing in the bucket", async () => {
    const before = await store.keys();
    const notZip = await postMultimedia(app, user.authorization, DOMAIN, appId, Buffer.from("plain text, not an archive"));
    expect(notZip.body).toEqual({ success: false, error: "Uploaded file is not a valid ZIP file" });
    const good = await zip([{ name: "media/logo.png", data: LOGO }]);
    const corrupt = await postMultimedia(
      app,
      user.authorization,
      DOMAIN,
      appId,
      Buffer.concat([good.subarray(0, good.length - 30), Buffer.alloc(30)]),
    );
    expect(corrupt.status).toBe(400);
    expect(await store.keys()).toEqual(before);
  });

  it("§7.6: an upload over UPLOAD_LIMIT_BYTES is cut off mid-way (its multipart upload begun): 413, no object in the bucket, nothing on local disk", async () => {
    const small = await build({ objectStore: store.config(PREFIX), uploadLimitBytes: 7 * 1024 * 1024 });
    try {
      await createDomain(small, DOMAIN);
      const member = await createUser(small, { domain: DOMAIN, permissions: ["edit_apps"] });
      const smallAppId = await createApp(small, member.authorization, DOMAIN, appSource({ paths: ["jr://file/big.png"] }), "Big");
      const before = await store.keys();
      // past one 5 MiB part, so that the store has begun a multipart upload when the limit cuts it
      const res = await postMultimedia(
        small,
        member.authorization,
        DOMAIN,
        smallAppId,
        await zip([{ name: "big.png", data: randomBytes(12 * 1024 * 1024) }]),
      );
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ success: false, error: `The uploaded file is larger than ${7 * 1024 * 1024} bytes.` });
      expect(await store.keys()).toEqual(before);
      expect(await readdir(path.join(small.services.config.dataDir, "tmp")).catch(() => [])).toEqual([]);
      expect(await small.db.prisma.multimediaJob.count()).toBe(0);
    } finally {
      await small.close();
    }
  });

  it("§7.6: the REST media download streams from the store and honours Range", async () => {
    await expectRanges(app, user, appId);
  });

  it("§7.6: MultimediaFile.downloadUrl is a pre-signed GET that plain fetch reads, valid for S3_PRESIGN_SECONDS", async () => {
    const { body } = await gql(app, user.authorization, FILES, { domain: DOMAIN, appId });
    const files = body.data!.app!.multimedia;
    expect(files).toHaveLength(2);
    for (const file of files) {
      const url = new URL(file.downloadUrl!);
      expect(url.origin).toBe(store.endpoint);
      expect(url.searchParams.get("X-Amz-Expires")).toBe("300");
      // no credentials but those in the URL
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(file.contentType);
      expect(res.headers.get("content-disposition")).toBe("attachment");
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.length).toBe(file.size);
      expect(createSha256(bytes)).toBe(file.sha256);
    }
  });

  it("§7.6: a pre-signed URL stops working once S3_PRESIGN_SECONDS have passed", async () => {
    const [file] = await app.db.prisma.multimediaFile.findMany({ take: 1 });
    const shortLived = new S3BlobStore({ ...store.config(PREFIX), presignSeconds: 1 }, "/nonexistent");
    try {
      const url = await shortLived.downloadUrl(file!.blobKey, file!.contentType);
      expect((await fetch(url)).status).toBe(200);
      await delay(2100);
      const expired = await fetch(url);
      expect(expired.status).toBe(403);
      expect(await expired.text()).toContain("expired");
    } finally {
      await shortLived.close();
    }
  });

  it("§7.6: a tampered pre-signed URL is refused (the store checks signatures)", async () => {
    const [file] = await app.db.prisma.multimediaFile.findMany({ take: 1 });
    const url = new URL((await app.services.blobs.downloadUrl(file!.blobKey, file!.contentType))!);
    url.searchParams.set("X-Amz-Signature", "0".repeat(64));
    expect((await fetch(url)).status).toBe(403);
  });

  it("§7.6: /readyz checks the object store", async () => {
    const res = await app.http().get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body.checks.objectStore).toBe("ok");
  });
});

describe("§7.6 local storage (BLOB_STORE_URL unset): today's storage", () => {
  let app: TestApp;
  let user: TestUser;
  let appId: string;

  beforeAll(async () => {
    app = await build();
    await createDomain(app, DOMAIN);
    user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
    appId = await uploadMedia(app, user);
  });
  afterAll(() => app?.close());

  it("§7.6: the REST media download honours Range on the embedded file store and on PostgreSQL's tables alike", async () => {
    await expectRanges(app, user, appId);
  });

  it("§7.6: MultimediaFile.downloadUrl is null, and /readyz has no object store check", async () => {
    const { body } = await gql(app, user.authorization, FILES, { domain: DOMAIN, appId });
    expect(body.data!.app!.multimedia.map((f) => f.downloadUrl)).toEqual([null, null]);
    expect(Object.keys((await app.http().get("/readyz")).body.checks)).not.toContain("objectStore");
  });
});

describe("§7.6 configuration", () => {
  it("§7.6: BLOB_STORE_URL and the S3_* settings, with their defaults; a bad value names its variable", () => {
    expect(loadConfig({}).objectStore).toBeUndefined();
    expect(loadConfig({ BLOB_STORE_URL: "s3://media" }).objectStore).toEqual({
      bucket: "media",
      prefix: "",
      endpoint: undefined,
      region: "us-east-1",
      forcePathStyle: false,
      presignSeconds: 300,
    });
    expect(
      loadConfig({
        BLOB_STORE_URL: "s3://media/gateway/prod/",
        S3_ENDPOINT: "http://127.0.0.1:9000",
        S3_REGION: "eu-west-3",
        S3_FORCE_PATH_STYLE: "true",
        S3_PRESIGN_SECONDS: "60",
      }).objectStore,
    ).toEqual({
      bucket: "media",
      prefix: "gateway/prod/",
      endpoint: "http://127.0.0.1:9000",
      region: "eu-west-3",
      forcePathStyle: true,
      presignSeconds: 60,
    });
    expect(() => loadConfig({ BLOB_STORE_URL: "https://media" })).toThrow(/^BLOB_STORE_URL must be s3:\/\/BUCKET/);
    expect(() => loadConfig({ BLOB_STORE_URL: "s3://Media" })).toThrow(/^BLOB_STORE_URL /);
    expect(() => loadConfig({ BLOB_STORE_URL: "s3://media", S3_ENDPOINT: "localhost:9000" })).toThrow(/^S3_ENDPOINT must be an http\(s\) URL/);
    expect(() => loadConfig({ BLOB_STORE_URL: "s3://media", S3_REGION: "EU West" })).toThrow(/^S3_REGION /);
    expect(() => loadConfig({ BLOB_STORE_URL: "s3://media", S3_FORCE_PATH_STYLE: "maybe" })).toThrow(/^S3_FORCE_PATH_STYLE must be true or false/);
    expect(() => loadConfig({ BLOB_STORE_URL: "s3://media", S3_PRESIGN_SECONDS: "0" })).toThrow(
      /^S3_PRESIGN_SECONDS must be an integer between 1 and 604800/,
    );
  });
});

function createSha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
