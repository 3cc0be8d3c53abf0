import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import {
  appSource,
  appsBase,
  brokenCentralDirectory,
  createApp,
  emptyZip,
  png,
  postMultimedia,
  truncatedInCentralDirectory,
  zip, expectAppsError as expectError } from "../helpers/archives.ts";

/**
 * CONTRACT §4 "POST {app_id}/multimedia/": app not in the domain → 404; file missing → 400
 * `bulk_upload_file is required`; not a ZIP → 400 `Uploaded file is not a valid ZIP file`; corrupt →
 * 400 `ZIP file is corrupt`; else 200 `{"success": true, "processing_id": "dl-<32 hex>"}` with a
 * durable job queued before the answer. The app is built without workers, so jobs stay queued.
 */

let app: TestApp;
let user: TestUser;
let appId: string;
const DOMAIN = "demo";
const OTHER = "elsewhere";
const PROCESSING_ID = /^dl-[0-9a-f]{32}$/;

beforeAll(async () => {
  app = await build({ workers: 0 });
  await createDomain(app, DOMAIN);
  await createDomain(app, OTHER);
  user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
  appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
});
afterAll(() => app?.close());

const upload = (archive?: Buffer, id = appId) => postMultimedia(app, user.authorization, DOMAIN, id, archive);
const jobCount = () => app.db.prisma.multimediaJob.count();


describe("success: 200 {success: true, processing_id: dl-<32 hex>}", () => {
  it("answers 200 with keys exactly success, processing_id", async () => {
    const res = await upload(await zip([{ name: "commcare/image/a.png", data: png(1) }]));
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(["success", "processing_id"]);
    expect(res.body.success).toBe(true);
    expect(res.body.processing_id).toMatch(PROCESSING_ID);
  });

  it("the job row exists (queued, in this app and domain, total = entries) and the archive is stored when the answer arrives", async () => {
    const archive = await zip([{ name: "commcare/" }, { name: "commcare/image/a.png", data: png(2) }, { name: "b.txt", data: Buffer.from("x") }]);
    const res = await upload(archive);
    const job = await app.db.prisma.multimediaJob.findUnique({ where: { id: res.body.processing_id } });
    expect(job).not.toBeNull();
    const domain = await app.db.prisma.domain.findUniqueOrThrow({ where: { name: DOMAIN } });
    expect(job).toMatchObject({ appId, domainId: domain.id, status: "queued", current: 0, total: 3 });
    expect(await app.services.blobs.has(job!.archiveKey)).toBe(true);
  });

  it("each upload gets its own processing id", async () => {
    const archive = await zip([{ name: "a.png", data: png(3) }]);
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await upload(archive)).body.processing_id);
    expect(ids.size).toBe(3);
  });

  it.each([
    ["stored entries", [{ name: "a.png", data: png(4), compress: false }]],
    ["deflated entries", [{ name: "a.png", data: png(5), compress: true }]],
    ["directories only", [{ name: "commcare/" }, { name: "commcare/image/" }]],
  ])("a ZIP of %s is accepted", async (_label, entries) => {
    expect((await upload(await zip(entries))).status).toBe(200);
  });

  it("an empty ZIP (end of central directory only) is accepted", async () => {
    const res = await upload(await emptyZip());
    expect(res.status).toBe(200);
    const job = await app.db.prisma.multimediaJob.findUniqueOrThrow({ where: { id: res.body.processing_id } });
    expect(job.total).toBe(0);
  });

  it("the path works without its trailing slash", async () => {
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/${appId}/multimedia`)
      .set("Authorization", user.authorization)
      .attach("bulk_upload_file", await zip([{ name: "a.png", data: png(6) }]), "media.zip");
    expect(res.status).toBe(200);
    expect(res.body.processing_id).toMatch(PROCESSING_ID);
  });

  it("unknown multipart fields and files are ignored", async () => {
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/${appId}/multimedia/`)
      .set("Authorization", user.authorization)
      .field("license", "cc-by")
      .attach("other_file", Buffer.from("not a zip"), "x.txt")
      .attach("bulk_upload_file", await zip([{ name: "a.png", data: png(7) }]), "media.zip");
    expect(res.status).toBe(200);
  });
});

describe("app not in the domain → 404", () => {
  it("an unknown app id → 404 {success: false, error}, no job", async () => {
    const before = await jobCount();
    expectError(await upload(await zip([{ name: "a.png", data: png() }]), "0".repeat(32)), 404);
    expectError(await upload(await zip([{ name: "a.png", data: png() }]), "not-an-id"), 404);
    expect(await jobCount()).toBe(before);
  });

  it("another domain's app → 404, no job", async () => {
    const other = await createUser(app, { domain: OTHER, permissions: ["edit_apps"] });
    const foreign = await createApp(app, other.authorization, OTHER, appSource());
    const before = await jobCount();
    expectError(await upload(await zip([{ name: "a.png", data: png() }]), foreign), 404);
    expect(await jobCount()).toBe(before);
  });

  it("an app id with a NUL character → 404", async () => {
    const res = await app.http().post(`${appsBase(DOMAIN)}/a%00b/multimedia/`).set("Authorization", user.authorization);
    expectError(res, 404);
  });

  it("the app check comes before the file check (unknown app, no file → 404)", async () => {
    expectError(await upload(undefined, "0".repeat(32)), 404);
  });
});

describe("file missing → 400 bulk_upload_file is required", () => {
  it("a multipart body without the file part", async () => {
    expectError(await upload(undefined), 400, "bulk_upload_file is required");
  });

  it("the archive under another part name", async () => {
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/${appId}/multimedia/`)
      .set("Authorization", user.authorization)
      .attach("file", await zip([{ name: "a.png", data: png() }]), "media.zip");
    expectError(res, 400, "bulk_upload_file is required");
  });

  it("a body that is not multipart", async () => {
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/${appId}/multimedia/`)
      .set("Authorization", user.authorization)
      .set("Content-Type", "application/zip")
      .send(await zip([{ name: "a.png", data: png() }]));
    expectError(res, 400, "bulk_upload_file is required");
  });

  it("bulk_upload_file as a text field", async () => {
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/${appId}/multimedia/`)
      .set("Authorization", user.authorization)
      .field("bulk_upload_file", "PK");
    expectError(res, 400, "bulk_upload_file is required");
  });
});

describe("not a ZIP → 400 Uploaded file is not a valid ZIP file", () => {
  it.each([
    ["text", Buffer.from("hello, this is not an archive")],
    ["an empty file", Buffer.alloc(0)],
    ["three bytes", Buffer.from("PK\x03", "latin1")],
    ["a PNG", png()],
    ["gzip bytes", Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0])],
  ])("%s", async (_label, bytes) => {
    const before = await jobCount();
    expectError(await upload(bytes), 400, "Uploaded file is not a valid ZIP file");
    expect(await jobCount()).toBe(before);
  });
});

describe("corrupt → 400 ZIP file is corrupt", () => {
  it("a valid ZIP truncated inside its central directory", async () => {
    const archive = await zip([{ name: "a.png", data: png(8) }, { name: "b.png", data: png(9) }]);
    const before = await jobCount();
    expectError(await upload(truncatedInCentralDirectory(archive)), 400, "ZIP file is corrupt");
    expect(await jobCount()).toBe(before);
  });

  it("a ZIP whose central directory header is damaged", async () => {
    const archive = await zip([{ name: "a.png", data: png(10) }]);
    expectError(await upload(brokenCentralDirectory(archive)), 400, "ZIP file is corrupt");
  });

  it("a ZIP with only its first local header (no end of central directory)", async () => {
    const archive = await zip([{ name: "a.png", data: png(11), compress: false }]);
    expectError(await upload(archive.subarray(0, 40)), 400, "ZIP file is corrupt");
  });
});
