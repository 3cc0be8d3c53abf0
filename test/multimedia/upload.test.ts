import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import {
  appSource,
  appsBase,
  brokenCentralDirectory,
  createApp,
  damageEntry,
  emptyZip,
  entryLayout,
  png,
  postMultimedia,
  truncatedInCentralDirectory,
  uploadAndWait,
  waitForStatus,
  zip,
  expectAppsError as expectError,
  type EntryDamage,
} from "../helpers/archives.ts";
import { errorCodes } from "../helpers/graphql.ts";

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
    const job = await app.db.prisma.multimediaJob.findFirst({ where: { id: res.body.processing_id } });
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
    const job = await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id: res.body.processing_id } });
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
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/a%00b/multimedia/`)
      .set("Authorization", user.authorization);
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
    const archive = await zip([
      { name: "a.png", data: png(8) },
      { name: "b.png", data: png(9) },
    ]);
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

/** The blobs the store holds (archives and media): files under DATA_DIR, or rows on PostgreSQL. */
async function blobCount(target: TestApp = app): Promise<number> {
  if (target.db.url) {
    const [{ count }] = await target.db.prisma.$queryRaw<{ count: bigint }[]>`SELECT count(*) AS count FROM blobs`;
    return Number(count);
  }
  const entries = await readdir(path.join(target.services.config.dataDir, "blobs"), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).length;
}

/** uploadMultimedia over the GraphQL multipart request spec. */
function gqlUpload(archive: Buffer, id = appId, target: TestApp = app, authorization = user.authorization) {
  const query = "mutation($domain: String!, $appId: ID!, $file: Upload!) { uploadMultimedia(domain: $domain, appId: $appId, file: $file) }";
  return target
    .http()
    .post("/graphql")
    .set("Authorization", authorization)
    .set("apollo-require-preflight", "true")
    .field("operations", JSON.stringify({ query, variables: { domain: DOMAIN, appId: id, file: null } }))
    .field("map", JSON.stringify({ 0: ["variables.file"] }))
    .attach("0", archive, "media.zip");
}

/** Text-like bytes behind a PNG signature: they deflate to a real stream, so damage lands inside it. */
const deflatable = (seed: number, repeat = 400) => Buffer.concat([png(seed), Buffer.from(`chunk ${seed} `.repeat(repeat))]);

describe("corrupt members (central directory intact) → 400 ZIP file is corrupt, on REST and GraphQL; nothing stored", () => {
  const DAMAGES: [string, EntryDamage, boolean][] = [
    ["a member with a bad CRC-32", "crc", false],
    ["a member whose deflate stream is damaged", "data", true],
    ["a member whose compressed data is cut short", "truncated", true],
    ["a member whose local header is broken", "local-header", false],
  ];

  async function damaged(damage: EntryDamage, compress: boolean, seed: number) {
    const archive = await zip([
      { name: "commcare/image/a.png", data: png(seed) },
      { name: "commcare/image/b.png", data: deflatable(seed + 1), compress },
      { name: "commcare/image/c.png", data: png(seed + 2) },
    ]);
    return damageEntry(archive, "commcare/image/b.png", damage);
  }

  it.each(DAMAGES)("%s: REST answers 400, no job row, no blob", async (_label, damage, compress) => {
    const archive = await damaged(damage, compress, 300);
    const [jobs, blobs] = [await jobCount(), await blobCount()];
    expectError(await upload(archive), 400, "ZIP file is corrupt");
    expect([await jobCount(), await blobCount()]).toEqual([jobs, blobs]);
  });

  it.each(DAMAGES)("%s: uploadMultimedia is BAD_USER_INPUT with the same message, no job row, no blob", async (_label, damage, compress) => {
    const archive = await damaged(damage, compress, 310);
    const [jobs, blobs] = [await jobCount(), await blobCount()];
    const res = await gqlUpload(archive);
    expect(errorCodes(res.body)).toEqual(["BAD_USER_INPUT"]);
    expect(res.body.errors[0].message).toBe("ZIP file is corrupt");
    expect(res.body.data).toBeNull();
    expect([await jobCount(), await blobCount()]).toEqual([jobs, blobs]);
  });

  it("every member is checked: a bad CRC in the last of 40 members", async () => {
    const entries = Array.from({ length: 40 }, (_, i) => ({ name: `commcare/image/f${i}.png`, data: png(400 + i) }));
    expectError(await upload(damageEntry(await zip(entries), "commcare/image/f39.png", "crc")), 400, "ZIP file is corrupt");
  });

  it("large members, streamed: a stored one with a bad CRC, a deflated one with damaged data", async () => {
    const stored = await zip([{ name: "big.png", data: Buffer.concat([png(420), randomBytes(2 * 1024 * 1024)]), compress: false }]);
    expectError(await upload(damageEntry(stored, "big.png", "crc")), 400, "ZIP file is corrupt");
    // ~2.8 MB of varied lines deflate to a few hundred kB: under the default ratio limit
    const lines = Buffer.from(Array.from({ length: 120_000 }, (_, i) => `line ${i} ${(i * 7919) % 104_729}\n`).join(""));
    const deflated = await zip([{ name: "big.png", data: Buffer.concat([png(421), lines]), compress: true }]);
    expect(entryLayout(deflated, "big.png").compressedSize).toBeLessThan(lines.length / 2);
    expectError(await upload(damageEntry(deflated, "big.png", "data")), 400, "ZIP file is corrupt");
    expectError(await upload(damageEntry(deflated, "big.png", "truncated")), 400, "ZIP file is corrupt");
    // the same archives intact are accepted
    expect((await upload(stored)).status).toBe(200);
    expect((await upload(deflated)).status).toBe(200);
  });

  it("the app check comes before the corrupt check (unknown app → 404)", async () => {
    expectError(await upload(await damaged("crc", false, 430), "0".repeat(32)), 404);
  });
});

describe("the upload check respects the zip-bomb limits: what a limit refuses is not inflated, nor called corrupt", () => {
  let limited: TestApp;
  let limitedUser: TestUser;
  let limitedApp: string;
  beforeAll(async () => {
    limited = await build({ zipMaxEntryBytes: 3 * 1024 * 1024, zipMaxRatio: 10, zipMaxTotalBytes: 4 * 1024 * 1024 });
    await createDomain(limited, DOMAIN);
    limitedUser = await createUser(limited, { domain: DOMAIN, permissions: ["edit_apps"] });
    limitedApp = await createApp(limited, limitedUser.authorization, DOMAIN, appSource({ paths: ["jr://file/small.png", "jr://file/after.png"] }));
  });
  afterAll(() => limited?.close());

  it("a damaged member over the per-entry limit, or over the ratio limit, is accepted and listed unmatched for its limit", async () => {
    let archive = await zip([
      { name: "small.png", data: png(1) },
      { name: "big.png", data: Buffer.alloc(3 * 1024 * 1024 + 1), compress: true },
      { name: "dense.png", data: Buffer.alloc(2 * 1024 * 1024), compress: true },
      { name: "after.png", data: png(2) },
    ]);
    archive = damageEntry(damageEntry(archive, "big.png", "crc"), "dense.png", "data");
    const res = await uploadAndWait(limited, limitedUser.authorization, DOMAIN, limitedApp, archive);
    expect(res.body.unmatched_files).toEqual([
      { path: "big.png", reason: expect.stringMatching(/limit/i) },
      { path: "dense.png", reason: expect.stringMatching(/ratio/i) },
    ]);
    expect(res.body.matched_count).toBe(2);
  });

  it("a damaged member past the total limit is accepted: the job fails there, as without the damage", async () => {
    const chunk = Buffer.alloc(900 * 1024, 7);
    let archive = await zip(["a.png", "b.png", "c.png", "d.png", "e.png"].map((name) => ({ name, data: chunk })));
    archive = damageEntry(archive, "e.png", "crc");
    const res = await postMultimedia(limited, limitedUser.authorization, DOMAIN, limitedApp, archive);
    expect(res.status).toBe(200);
    const status = await waitForStatus(limited, limitedUser.authorization, DOMAIN, limitedApp, res.body.processing_id);
    expect(status.status).toBe(500);
  });

  it("a member that inflates past the size it claims is corrupt, inflated no further than that", async () => {
    const archive = await zip([
      { name: "small.png", data: deflatable(3), compress: true },
      { name: "after.png", data: png(4) },
    ]);
    archive.writeUInt32LE(100, entryLayout(archive, "small.png").central + 24); // the uncompressed size it claims
    const jobs = await limited.db.prisma.multimediaJob.count();
    expectError(await postMultimedia(limited, limitedUser.authorization, DOMAIN, limitedApp, archive), 400, "ZIP file is corrupt");
    expect(await limited.db.prisma.multimediaJob.count()).toBe(jobs);
  });
});
