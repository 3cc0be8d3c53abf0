import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findReferences } from "../../src/apps/references.ts";
import { ArchiveError, processArchive } from "../../src/multimedia/archive/zip-processor.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import {
  appSource,
  createApp,
  damageEntry,
  emptyZip,
  getMediaFile,
  gif,
  jpeg,
  md5,
  mp3,
  mp4,
  png,
  postMultimedia,
  threeGp,
  uploadAndWait,
  waitForStatus,
  zeroEntries,
  zip,
  type ArchiveEntry,
} from "../helpers/archives.ts";

/**
 * CONTRACT §4 "Processing": entries in order; directories count in total_files and are skipped;
 * the media class comes from the content, falling back to the extension; non-media → skipped
 * {path, reason}; matching is case-insensitive against references of the same media type; a match
 * stores the file (deduplicated by hash) and is listed as {path, original_path, md5, size,
 * content_type}; no match → unmatched {path, reason}; progress after every entry; unsafe names and
 * zip bombs refused.
 */

const STATUS_KEYS = [
  "success",
  "complete",
  "in_queue",
  "progress",
  "errors",
  "processing_id",
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
const MATCHED_KEYS = ["path", "original_path", "md5", "size", "content_type"];
const NO_IMAGE = "Did not match any Image paths in application.";
const NO_AUDIO = "Did not match any Audio paths in application.";
const NO_VIDEO = "Did not match any Video paths in application.";

let app: TestApp;
let user: TestUser;
const DOMAIN = "demo";

beforeAll(async () => {
  app = await build();
  await createDomain(app, DOMAIN);
  user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
});
afterAll(() => app?.close());

async function newApp(paths: string[], mapPaths: string[] = []) {
  return createApp(app, user.authorization, DOMAIN, appSource({ paths, mapPaths }), "Media app");
}
async function run(appId: string, entries: ArchiveEntry[]) {
  const res = await uploadAndWait(app, user.authorization, DOMAIN, appId, await zip(entries));
  expect(res.status).toBe(200);
  return res.body;
}
const mapOf = async (appId: string) => (await app.db.prisma.app.findFirstOrThrow({ where: { id: appId } })).multimediaMap as Record<string, unknown>;

describe("a complete result: exact body, key order, counts", () => {
  it("matches, unmatched per type, skipped and directories, in archive order, with exact keys", async () => {
    const appId = await newApp(["jr://file/commcare/image/a.png", "jr://file/commcare/audio/b.mp3"], ["jr://file/commcare/video/c.mp4"]);
    const image = png(100);
    const audio = mp3(101);
    const video = mp4(102);
    const body = await run(appId, [
      { name: "commcare/" },
      { name: "commcare/image/" },
      { name: "commcare/image/a.png", data: image, compress: true },
      { name: "CommCare/Audio/B.MP3", data: audio, compress: false },
      { name: "commcare/video/c.mp4", data: video },
      { name: "readme.txt", data: Buffer.from("just text") },
      { name: "commcare/image/other.png", data: png(103) },
      { name: "commcare/audio/other.mp3", data: mp3(104) },
      { name: "commcare/video/other.mp4", data: mp4(105) },
    ]);
    expect(Object.keys(body)).toEqual(STATUS_KEYS);
    expect(body).toEqual({
      success: true,
      complete: true,
      in_queue: false,
      progress: { percent: 100, current: 9, total: 9 },
      errors: [],
      processing_id: expect.stringMatching(/^dl-[0-9a-f]{32}$/),
      matched_count: 3,
      unmatched_count: 3,
      total_files: 9,
      processed_files: 7,
      image_count: 1,
      audio_count: 1,
      video_count: 1,
      matched_files: {
        AppImage: [
          {
            path: "jr://file/commcare/image/a.png",
            original_path: "commcare/image/a.png",
            md5: md5(image),
            size: image.length,
            content_type: "image/png",
          },
        ],
        AppAudio: [
          {
            path: "jr://file/commcare/audio/b.mp3",
            original_path: "CommCare/Audio/B.MP3",
            md5: md5(audio),
            size: audio.length,
            content_type: "audio/mpeg",
          },
        ],
        AppVideo: [
          {
            path: "jr://file/commcare/video/c.mp4",
            original_path: "commcare/video/c.mp4",
            md5: md5(video),
            size: video.length,
            content_type: "video/mp4",
          },
        ],
      },
      unmatched_files: [
        { path: "commcare/image/other.png", reason: NO_IMAGE },
        { path: "commcare/audio/other.mp3", reason: NO_AUDIO },
        { path: "commcare/video/other.mp4", reason: NO_VIDEO },
      ],
      skipped_files: [{ path: "readme.txt", reason: expect.any(String) }],
    });
    expect(Object.keys(body.progress)).toEqual(["percent", "current", "total"]);
    expect(Object.keys(body.matched_files)).toEqual(["AppImage", "AppAudio", "AppVideo"]);
    for (const list of Object.values(body.matched_files) as object[][]) for (const f of list) expect(Object.keys(f)).toEqual(MATCHED_KEYS);
    for (const f of [...body.unmatched_files, ...body.skipped_files]) expect(Object.keys(f)).toEqual(["path", "reason"]);

    // the app's canonical paths now map to the stored files
    expect(Object.keys(await mapOf(appId)).sort()).toEqual([
      "jr://file/commcare/audio/b.mp3",
      "jr://file/commcare/image/a.png",
      "jr://file/commcare/video/c.mp4",
    ]);
    const audioFile = await getMediaFile(app, user.authorization, DOMAIN, appId, "commcare/audio/b.mp3");
    expect(audioFile.status).toBe(200);
    expect(audioFile.headers["content-type"]).toMatch(/^audio\/mpeg/);
    expect(Buffer.compare(audioFile.body as Buffer, audio)).toBe(0);
  });

  it("matching is case-insensitive both ways; the matched path is the app's own spelling", async () => {
    const appId = await newApp(["jr://file/CommCare/Image/Logo.PNG"]);
    const body = await run(appId, [{ name: "commcare/image/logo.png", data: png(110) }]);
    expect(body.matched_files.AppImage).toEqual([
      expect.objectContaining({ path: "jr://file/CommCare/Image/Logo.PNG", original_path: "commcare/image/logo.png" }),
    ]);
    expect(Object.keys(await mapOf(appId))).toEqual(["jr://file/CommCare/Image/Logo.PNG"]);
  });

  it("an entry named with jr://file/ already is not prefixed again", async () => {
    const appId = await newApp(["jr://file/commcare/image/j.png"]);
    const body = await run(appId, [{ name: "jr://file/commcare/image/j.png", data: png(111) }]);
    expect(body.matched_count).toBe(1);
    expect(body.matched_files.AppImage[0]).toMatchObject({ path: "jr://file/commcare/image/j.png", original_path: "jr://file/commcare/image/j.png" });
  });

  it("references in the app's multimedia_map keys and form XML are both matched", async () => {
    const appId = await newApp(["jr://file/commcare/image/xml.gif"], ["jr://file/commcare/image/map.jpg"]);
    const body = await run(appId, [
      { name: "commcare/image/xml.gif", data: gif(1) },
      { name: "commcare/image/map.jpg", data: jpeg(1) },
    ]);
    expect(body.image_count).toBe(2);
    expect(body.matched_files.AppImage.map((f: { content_type: string }) => f.content_type)).toEqual(["image/gif", "image/jpeg"]);
  });
});

describe("media class: content (magic bytes) first, extension as fallback, same type as the reference", () => {
  it("PNG bytes named .mp3 are an image: unmatched against the audio reference of that path", async () => {
    const appId = await newApp(["jr://file/commcare/audio/pic.mp3"]);
    const body = await run(appId, [{ name: "commcare/audio/pic.mp3", data: png(120) }]);
    expect(body.matched_count).toBe(0);
    expect(body.unmatched_files).toEqual([{ path: "commcare/audio/pic.mp3", reason: NO_IMAGE }]);
    expect(await mapOf(appId)).toEqual({});
  });

  it("MP3 bytes named .png are audio: unmatched against the image reference", async () => {
    const appId = await newApp(["jr://file/commcare/image/sound.png"]);
    const body = await run(appId, [{ name: "commcare/image/sound.png", data: mp3(121) }]);
    expect(body.unmatched_files).toEqual([{ path: "commcare/image/sound.png", reason: NO_AUDIO }]);
  });

  it("JPEG bytes named .png match an image reference, with the sniffed content type", async () => {
    const appId = await newApp(["jr://file/commcare/image/photo.png"]);
    const bytes = jpeg(122);
    const body = await run(appId, [{ name: "commcare/image/photo.png", data: bytes }]);
    expect(body.matched_files.AppImage).toEqual([
      {
        path: "jr://file/commcare/image/photo.png",
        original_path: "commcare/image/photo.png",
        md5: md5(bytes),
        size: bytes.length,
        content_type: "image/jpeg",
      },
    ]);
  });

  it("content that no magic recognises falls back to the extension (SVG text as .svg is an image)", async () => {
    const appId = await newApp(["jr://file/commcare/image/logo.svg", "jr://file/commcare/image/decl.svg"]);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
    // with an XML declaration the sniffer says application/xml: not media, so the extension decides
    const declared = Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"/>');
    const body = await run(appId, [
      { name: "commcare/image/logo.svg", data: svg },
      { name: "commcare/image/decl.svg", data: declared },
    ]);
    expect(body.matched_files.AppImage).toEqual([
      expect.objectContaining({ content_type: "image/svg+xml", size: svg.length }),
      expect.objectContaining({ content_type: "image/svg+xml", size: declared.length }),
    ]);
  });

  it("non-media files are skipped {path, reason}, not unmatched", async () => {
    const appId = await newApp(["jr://file/commcare/image/a.png"]);
    const body = await run(appId, [
      { name: "notes.txt", data: Buffer.from("notes") },
      { name: "form.xml", data: Buffer.from("<x/>") },
      { name: "blob", data: Buffer.from([1, 2, 3]) },
    ]);
    expect(body.skipped_files.map((f: { path: string }) => f.path)).toEqual(["notes.txt", "form.xml", "blob"]);
    for (const f of body.skipped_files) expect(typeof f.reason).toBe("string");
    expect(body.unmatched_files).toEqual([]);
    expect(body.matched_count).toBe(0);
    expect(body.total_files).toBe(3);
  });

  it("a 3gp recording under an audio path matches the audio reference (3gp is audio under an audio folder)", async () => {
    const appId = await newApp(["jr://file/commcare/audio/rec.3gp", "jr://file/audio/top.3gp", "jr://file/commcare/video/clip.3gp"]);
    const body = await run(appId, [
      { name: "commcare/audio/rec.3gp", data: threeGp(1) },
      // the entry path gets its jr://file/ prefix before its folder is read: audio/ at the top counts
      { name: "audio/top.3gp", data: threeGp(3) },
      { name: "commcare/video/clip.3gp", data: threeGp(2) },
    ]);
    expect(body.unmatched_files).toEqual([]);
    expect(body.matched_files.AppAudio.map((f: { path: string }) => f.path)).toEqual(["jr://file/commcare/audio/rec.3gp", "jr://file/audio/top.3gp"]);
    expect(body.matched_files.AppVideo.map((f: { path: string }) => f.path)).toEqual(["jr://file/commcare/video/clip.3gp"]);
    expect(body.matched_files.AppAudio[0].content_type).toBe("audio/3gpp");
    expect(body.matched_files.AppVideo[0].content_type).toBe("video/3gpp");
    expect([body.audio_count, body.video_count]).toEqual([2, 1]);
  });
});

describe("storage: deduplicated by content hash; the map accumulates across uploads", () => {
  it("the same content under two matched paths is stored once; both paths resolve to it", async () => {
    const scratch = "dedup";
    await createDomain(app, scratch);
    const other = await createUser(app, { domain: scratch, permissions: ["edit_apps"] });
    const appId = await createApp(app, other.authorization, scratch, appSource({ paths: ["jr://file/one.png", "jr://file/two.png"] }));
    const bytes = png(130);
    const res = await uploadAndWait(
      app,
      other.authorization,
      scratch,
      appId,
      await zip([
        { name: "one.png", data: bytes },
        { name: "two.png", data: bytes, compress: false },
      ]),
    );
    expect(res.body.matched_count).toBe(2);
    expect(res.body.matched_files.AppImage.map((f: { md5: string }) => f.md5)).toEqual([md5(bytes), md5(bytes)]);
    const domain = await app.db.prisma.domain.findUniqueOrThrow({ where: { name: scratch } });
    expect(await app.db.prisma.multimediaFile.count({ where: { domainId: domain.id } })).toBe(1);
    for (const p of ["one.png", "two.png"]) {
      const file = await getMediaFile(app, other.authorization, scratch, appId, p);
      expect(file.status).toBe(200);
      expect(Buffer.compare(file.body as Buffer, bytes)).toBe(0);
    }
    // uploading the same content again stores nothing new
    await uploadAndWait(app, other.authorization, scratch, appId, await zip([{ name: "one.png", data: bytes }]));
    expect(await app.db.prisma.multimediaFile.count({ where: { domainId: domain.id } })).toBe(1);
  });

  it("an entry larger than 1 MiB (stored and deflated) is matched with its exact md5 and size, and downloads intact", async () => {
    const appId = await newApp(["jr://file/big.png", "jr://file/big2.png"]);
    const big = Buffer.concat([png(180), Buffer.alloc(1536 * 1024, 0x5a)]);
    const big2 = Buffer.concat([png(181), Buffer.alloc(1280 * 1024, 0x33)]);
    const body = await run(appId, [
      { name: "big.png", data: big, compress: false },
      { name: "big2.png", data: big2, compress: false },
    ]);
    expect(body.matched_files.AppImage).toEqual([
      { path: "jr://file/big.png", original_path: "big.png", md5: md5(big), size: big.length, content_type: "image/png" },
      { path: "jr://file/big2.png", original_path: "big2.png", md5: md5(big2), size: big2.length, content_type: "image/png" },
    ]);
    const file = await getMediaFile(app, user.authorization, DOMAIN, appId, "big.png");
    expect(file.status).toBe(200);
    expect(md5(file.body as Buffer)).toBe(md5(big));
  });

  it("a later upload adds to the map and replaces the file of a path uploaded again", async () => {
    const appId = await newApp(["jr://file/img.png", "jr://file/snd.mp3"]);
    await run(appId, [{ name: "img.png", data: png(140) }]);
    await run(appId, [{ name: "snd.mp3", data: mp3(141) }]);
    expect(Object.keys(await mapOf(appId)).sort()).toEqual(["jr://file/img.png", "jr://file/snd.mp3"]);
    const newer = png(142);
    await run(appId, [{ name: "IMG.PNG", data: newer }]);
    expect(Object.keys(await mapOf(appId)).sort()).toEqual(["jr://file/img.png", "jr://file/snd.mp3"]);
    const file = await getMediaFile(app, user.authorization, DOMAIN, appId, "img.png");
    expect(Buffer.compare(file.body as Buffer, newer)).toBe(0);
    expect((await getMediaFile(app, user.authorization, DOMAIN, appId, "snd.mp3")).status).toBe(200);
  });
});

describe("edge archives", () => {
  it("an empty archive completes with percent 100 and empty results", async () => {
    const appId = await newApp(["jr://file/a.png"]);
    const res = await uploadAndWait(app, user.authorization, DOMAIN, appId, await emptyZip());
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(STATUS_KEYS);
    expect(res.body).toMatchObject({
      complete: true,
      in_queue: false,
      progress: { percent: 100, current: 0, total: 0 },
      matched_count: 0,
      unmatched_count: 0,
      total_files: 0,
      processed_files: 0,
      matched_files: { AppImage: [], AppAudio: [], AppVideo: [] },
      unmatched_files: [],
      skipped_files: [],
    });
  });

  it("an entry name with a NUL character is unmatched (shown with U+FFFD), and the job completes", async () => {
    const appId = await newApp(["jr://file/a.png"]);
    const body = await run(appId, [
      { name: "a\u0000b.png", data: png(160) },
      { name: "a.png", data: png(161) },
    ]);
    expect(body.unmatched_files).toEqual([{ path: "a\uFFFDb.png", reason: expect.any(String) }]);
    expect(body.matched_count).toBe(1);
  });

  it("directories count in total_files and are listed nowhere", async () => {
    const appId = await newApp(["jr://file/a.png"]);
    const body = await run(appId, [{ name: "a/" }, { name: "a/b/" }, { name: "c/" }]);
    expect(body).toMatchObject({
      total_files: 3,
      processed_files: 0,
      matched_count: 0,
      unmatched_count: 0,
      progress: { percent: 100, current: 3, total: 3 },
    });
    expect([body.unmatched_files, body.skipped_files]).toEqual([[], []]);
  });

  it("entry names that escape (.., absolute, drive letters) are unmatched and nothing is written outside DATA_DIR", async () => {
    const dataDir = app.services.config.dataDir;
    const names = ["../x.png", "/abs.png", "C:/x.png", "a/../../y.png", "..\\z.png", "\\w.png"];
    const appId = await newApp([
      "jr://file/x.png",
      "jr://file/abs.png",
      "jr://file/C:/x.png",
      "jr://file/y.png",
      "jr://file/z.png",
      "jr://file/w.png",
    ]);
    const body = await run(
      appId,
      names.map((name, i) => ({ name, data: png(150 + i) })),
    );
    expect(body.matched_count).toBe(0);
    // names are reported as the archive reader decodes them: backslashes become slashes
    expect(body.unmatched_files.map((f: { path: string }) => f.path)).toEqual(names.map((n) => n.replace(/\\/g, "/")));
    for (const f of body.unmatched_files) expect(f.reason).toEqual(expect.any(String));
    expect(await mapOf(appId)).toEqual({});
    for (const p of ["../x.png", "../y.png", "../z.png", "../abs.png", "x.png", "abs.png"]) expect(existsSync(path.resolve(dataDir, p))).toBe(false);
    expect(existsSync("/abs.png")).toBe(false);
    expect(existsSync(path.resolve(dataDir, "..", "..", "y.png"))).toBe(false);
    // only the store's own directories under DATA_DIR
    expect((await readdir(dataDir)).every((d) => ["blobs", "tmp", "pglite"].includes(d))).toBe(true);
  });
});

/** The files this process holds open. */
const openFiles = () =>
  readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return []; // closed while listing
    }
  });

describe("damaged entry data (central directory intact): the entry is unmatched, the others go on", () => {
  const UNREADABLE = "Error reading file";
  // The upload refuses such an archive (upload.test.ts "corrupt members"): these are archives
  // damaged once stored, queued on an app whose worker starts after the damage.
  let stored: TestApp;
  let storedUser: TestUser;
  beforeAll(async () => {
    stored = await build({ workers: 0 });
    await createDomain(stored, DOMAIN);
    storedUser = await createUser(stored, { domain: DOMAIN, permissions: ["edit_apps"] });
  });
  afterAll(() => stored?.close());

  it('a broken local header, deflate stream or CRC, or cut-short data: each unmatched "Error reading file", exact body', async () => {
    const paths = ["first", "header", "deflate", "crc", "truncated", "last"].map((n) => `jr://file/media/${n}.png`);
    const appId = await createApp(
      stored,
      storedUser.authorization,
      DOMAIN,
      appSource({ paths: [...paths, "jr://file/media/song.mp3"] }),
      "Media app",
    );
    const first = png(200);
    const song = mp3(201);
    const last = png(202);
    // text-like PNG bytes deflate to a real stream, so damage lands inside it
    const deflatable = (seed: number) => Buffer.concat([png(seed), Buffer.from(`chunk ${seed} `.repeat(400))]);
    const intact = await zip([
      { name: "media/first.png", data: first },
      { name: "media/header.png", data: png(203) },
      { name: "media/deflate.png", data: deflatable(204), compress: true },
      { name: "media/crc.png", data: png(205), compress: false },
      { name: "media/truncated.png", data: deflatable(206), compress: true },
      { name: "media/song.mp3", data: song, compress: false },
      { name: "media/last.png", data: last },
    ]);
    let archive = intact;
    archive = damageEntry(archive, "media/header.png", "local-header");
    archive = damageEntry(archive, "media/deflate.png", "data");
    archive = damageEntry(archive, "media/crc.png", "crc");
    archive = damageEntry(archive, "media/truncated.png", "truncated");

    const upload = await postMultimedia(stored, storedUser.authorization, DOMAIN, appId, intact);
    expect(upload.status).toBe(200);
    const job = await stored.db.prisma.multimediaJob.findFirstOrThrow({ where: { id: upload.body.processing_id } });
    await stored.services.blobs.putBuffer(job.archiveKey, archive);
    await stored.services.worker.start(1);
    const res = await waitForStatus(stored, storedUser.authorization, DOMAIN, appId, upload.body.processing_id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(STATUS_KEYS);
    const matched = (name: string, bytes: Buffer, contentType: string) => ({
      path: `jr://file/media/${name}`,
      original_path: `media/${name}`,
      md5: md5(bytes),
      size: bytes.length,
      content_type: contentType,
    });
    expect(res.body).toEqual({
      success: true,
      complete: true,
      in_queue: false,
      progress: { percent: 100, current: 7, total: 7 },
      errors: [],
      processing_id: upload.body.processing_id,
      matched_count: 3,
      unmatched_count: 4,
      total_files: 7,
      processed_files: 7,
      image_count: 2,
      audio_count: 1,
      video_count: 0,
      matched_files: {
        AppImage: [matched("first.png", first, "image/png"), matched("last.png", last, "image/png")],
        AppAudio: [matched("song.mp3", song, "audio/mpeg")],
        AppVideo: [],
      },
      unmatched_files: ["header", "deflate", "crc", "truncated"].map((n) => ({ path: `media/${n}.png`, reason: UNREADABLE })),
      skipped_files: [],
    });
    for (const f of res.body.unmatched_files) expect(Object.keys(f)).toEqual(["path", "reason"]);
    const map = (await stored.db.prisma.app.findFirstOrThrow({ where: { id: appId } })).multimediaMap as Record<string, unknown>;
    expect(Object.keys(map).sort()).toEqual(["jr://file/media/first.png", "jr://file/media/last.png", "jr://file/media/song.mp3"]);
  });

  it("a damaged entry larger than the in-memory limit leaves no spool file and no open file behind, and still counts in progress", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "zip-damaged-"));
    const temp = path.join(dir, "temp");
    await mkdir(temp);
    try {
      const lines = Buffer.from(Array.from({ length: 120_000 }, (_, i) => `line ${i} ${(i * 7919) % 104_729}\n`).join(""));
      const bigDeflated = Buffer.concat([png(210), lines]); // ~2.8 MB, deflated to a few hundred kB
      const bigStored = Buffer.concat([png(211), randomBytes(2 * 1024 * 1024)]);
      let bytes = await zip([
        { name: "big-deflated.png", data: bigDeflated, compress: true },
        { name: "big-stored.png", data: bigStored, compress: false },
        { name: "after.png", data: png(212) },
      ]);
      bytes = damageEntry(bytes, "big-deflated.png", "data");
      bytes = damageEntry(bytes, "big-stored.png", "crc");
      const file = path.join(dir, "damaged.zip");
      await writeFile(file, bytes);

      const leftovers: { current: number; spooled: string[]; open: string[] }[] = [];
      const hooks = {
        progress: async (current: number) => {
          const spooled = (await readdir(temp, { recursive: true })).filter((f) => !/^archive-[^/]*$/.test(f));
          leftovers.push({ current, spooled, open: openFiles().filter((f) => f.startsWith(temp)) });
        },
        store: async () => "file-id",
        stopping: () => false,
      };
      const limits = { maxEntryBytes: 1e9, maxTotalBytes: 1e9, maxRatio: 100, ratioFloorBytes: 16 * 1024 * 1024 };
      const refs = findReferences({ a: "jr://file/big-deflated.png", b: "jr://file/big-stored.png", c: "jr://file/after.png" });
      const { result } = await processArchive(file, refs, limits, temp, hooks);

      expect(result.unmatched_files).toEqual([
        { path: "big-deflated.png", reason: UNREADABLE },
        { path: "big-stored.png", reason: UNREADABLE },
      ]);
      expect(result.matched_files.AppImage.map((f) => f.original_path)).toEqual(["after.png"]);
      expect(leftovers).toEqual([1, 2, 3].map((current) => ({ current, spooled: [], open: [] })));
      expect(await readdir(temp)).toEqual([]);
      expect(openFiles()).not.toContain(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a failure that stops the reading of further entries still fails the job", () => {
  it("an archive file cut short while it is processed: processing rejects, and leaves nothing open or spooled", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "zip-cut-"));
    try {
      const file = path.join(dir, "cut.zip");
      await writeFile(
        file,
        await zip([
          { name: "a.png", data: png(220) },
          { name: "b.png", data: png(221) },
          { name: "c.png", data: png(222) },
        ]),
      );
      const hooks = {
        // after the first entry the file loses its central directory
        progress: async (current: number) => void (current === 1 && (await truncate(file, 10))),
        store: async () => "file-id",
        stopping: () => false,
      };
      const limits = { maxEntryBytes: 1e9, maxTotalBytes: 1e9, maxRatio: 100, ratioFloorBytes: 16 * 1024 * 1024 };
      await expect(processArchive(file, findReferences({ a: "jr://file/a.png" }), limits, dir, hooks)).rejects.toBeInstanceOf(ArchiveError);
      expect(await readdir(dir)).toEqual(["cut.zip"]);
      expect(openFiles().filter((f) => f.startsWith(dir))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("§4: stores at once (an object store) give the same result, stored files and progress as one at a time", () => {
  it("lists and stores every match in archive order, counts progress in order, stores the same content once, and fails on a failed store", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "zip-stores-"));
    try {
      const limits = { maxEntryBytes: 1e9, maxTotalBytes: 1e9, maxRatio: 100, ratioFloorBytes: 16 * 1024 * 1024 };
      // entry i: png(i % 7), so entries 7 to 13 repeat 0 to 6; every third is not referred to; one is a text file
      const names = Array.from({ length: 20 }, (_, i) => `m/e${i}.png`);
      const file = path.join(dir, "a.zip");
      await writeFile(
        file,
        await zip([
          ...names.map((name, i) => ({ name, data: png(i % 7) })),
          { name: "t.txt", data: Buffer.from("t") },
          { name: "big.png", data: Buffer.concat([png(99), randomBytes(2 * 1024 * 1024)]) },
        ]),
      );
      const references = findReferences(
        Object.fromEntries([...names.filter((_, i) => i % 3 !== 1), "big.png"].map((name, i) => [`r${i}`, `jr://file/${name}`])),
      );
      const run = async (storesAtOnce: number, failing?: string) => {
        const progress: number[] = [];
        const stores: string[] = [];
        let running = 0;
        let most = 0;
        const { result, stored } = await processArchive(file, references, limits, dir, {
          progress: async (current) => void progress.push(current),
          store: async ({ sha256, content }) => {
            stores.push(sha256);
            most = Math.max(most, ++running);
            const bytes = "buffer" in content ? Buffer.from(content.buffer) : null;
            await new Promise((resolve) => setTimeout(resolve, 5 + (sha256.charCodeAt(0) % 4) * 5));
            running -= 1;
            if (sha256 === failing) throw new Error("the store refused");
            // the bytes given stay the entry's until the store has settled
            if (bytes && "buffer" in content && !bytes.equals(content.buffer)) throw new Error("bytes changed under the store");
            return `id-${sha256.slice(0, 8)}`;
          },
          stopping: () => false,
          storesAtOnce,
        });
        return { result, stored, progress, stores, most };
      };
      const one = await run(1);
      const four = await run(4);
      expect(four.result).toEqual(one.result);
      expect(four.stored).toEqual(one.stored);
      expect(one.stored.map((s) => s.fileId).every((id) => id.startsWith("id-"))).toBe(true);
      expect(four.progress).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
      expect(one.progress).toEqual(four.progress);
      expect(one.most).toBe(1);
      expect(four.most).toBeGreaterThan(1);
      expect(four.most).toBeLessThanOrEqual(4);
      expect(new Set(four.stores).size).toBe(new Set(one.stores).size);
      await expect(run(4, one.stores[3])).rejects.toThrow("the store refused");
      expect(await readdir(dir)).toEqual(["a.zip"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("progress is persisted after every entry (current, total, floor percent)", () => {
  it("reports (1,3), (2,3), (3,3) for three entries and (0,0) for an empty archive", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "zip-progress-"));
    try {
      const limits = { maxEntryBytes: 1e9, maxTotalBytes: 1e9, maxRatio: 100, ratioFloorBytes: 16 * 1024 * 1024 };
      const calls: [number, number][] = [];
      const hooks = {
        progress: async (c: number, t: number) => void calls.push([c, t]),
        store: async () => "file-id",
        stopping: () => false,
      };
      const file = path.join(dir, "a.zip");
      await writeFile(file, await zip([{ name: "d/" }, { name: "d/a.png", data: png(1) }, { name: "t.txt", data: Buffer.from("t") }]));
      const { result, stored } = await processArchive(file, findReferences({ a: "jr://file/d/a.png" }), limits, dir, hooks);
      expect(calls).toEqual([
        [1, 3],
        [2, 3],
        [3, 3],
      ]);
      expect(result.matched_count).toBe(1);
      expect(stored).toEqual([expect.objectContaining({ canonicalPath: "jr://file/d/a.png", mediaType: "image", fileId: "file-id" })]);
      calls.length = 0;
      await writeFile(file, await emptyZip());
      await processArchive(file, [], limits, dir, hooks);
      expect(calls).toEqual([[0, 0]]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("zip-bomb limits", () => {
  let limited: TestApp;
  let limitedUser: TestUser;
  beforeAll(async () => {
    limited = await build({ zipMaxEntryBytes: 3 * 1024 * 1024, zipMaxRatio: 10, zipMaxTotalBytes: 4 * 1024 * 1024 });
    await createDomain(limited, DOMAIN);
    limitedUser = await createUser(limited, { domain: DOMAIN, permissions: ["edit_apps"] });
  });
  afterAll(() => limited?.close());

  const paths = ["jr://file/small.png", "jr://file/big.png", "jr://file/dense.png", "jr://file/after.png"];

  it("an entry over the per-entry limit, or over the compression ratio, is unmatched with a reason; the others go on", async () => {
    const appId = await createApp(limited, limitedUser.authorization, DOMAIN, appSource({ paths }));
    const res = await uploadAndWait(
      limited,
      limitedUser.authorization,
      DOMAIN,
      appId,
      await zip([
        { name: "small.png", data: png(1) },
        { name: "big.png", data: Buffer.alloc(3 * 1024 * 1024 + 1), compress: true },
        { name: "dense.png", data: Buffer.alloc(2 * 1024 * 1024), compress: true },
        { name: "after.png", data: png(2) },
      ]),
    );
    expect(res.status).toBe(200);
    expect(res.body.matched_files.AppImage.map((f: { original_path: string }) => f.original_path)).toEqual(["small.png", "after.png"]);
    expect(res.body.unmatched_files).toEqual([
      { path: "big.png", reason: expect.stringMatching(/limit/i) },
      { path: "dense.png", reason: expect.stringMatching(/ratio/i) },
    ]);
    expect(res.body).toMatchObject({ total_files: 4, matched_count: 2, unmatched_count: 2 });
  });

  it("an archive whose entries expand beyond the total limit fails the job: status 500 {success: false, error: Multimedia processing task failed}", async () => {
    const appId = await createApp(limited, limitedUser.authorization, DOMAIN, appSource({ paths }));
    const chunk = Buffer.alloc(900 * 1024, 7);
    const upload = await postMultimedia(
      limited,
      limitedUser.authorization,
      DOMAIN,
      appId,
      await zip(["small.png", "big.png", "dense.png", "after.png", "more.png"].map((name) => ({ name, data: chunk }))),
    );
    expect(upload.status).toBe(200);
    const res = await waitForStatus(limited, limitedUser.authorization, DOMAIN, appId, upload.body.processing_id);
    expect(res.status).toBe(500);
    expect(Object.keys(res.body)).toEqual(["success", "error"]);
    expect(res.body).toEqual({ success: false, error: "Multimedia processing task failed" });
    // nothing of a failed job is mapped
    expect((await limited.db.prisma.app.findFirstOrThrow({ where: { id: appId } })).multimediaMap).toEqual({});
  });
});

describe("F18: the whole archive's expansion ratio (ZIP_MAX_RATIO past ZIP_RATIO_FLOOR_BYTES)", () => {
  const bomb = zeroEntries(600);
  const refusal = `Compression ratio ${Math.round((600 * 1024 * 1024) / bomb.length)} of the archive exceeds the limit of 100.`;

  it("F18: 600 × 1 MiB of zeros (~680 KB) fails before any entry is inflated, hashed or stored, leaving nothing spooled", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "zip-ratio-"));
    try {
      const file = path.join(dir, "bomb.zip");
      await writeFile(file, bomb);
      const temp = path.join(dir, "tmp");
      await mkdir(temp);
      const calls: string[] = [];
      const hooks = {
        progress: async (current: number) => void calls.push(`progress ${current}`),
        store: async () => (calls.push("store"), "file-id"),
        stopping: () => false,
      };
      const limits = { maxEntryBytes: 512 * 1024 * 1024, maxTotalBytes: 8 * 1024 ** 3, maxRatio: 100, ratioFloorBytes: 16 * 1024 * 1024 };
      const refs = findReferences({ a: "jr://file/zeros/0.png" });
      const failure = processArchive(file, refs, limits, temp, hooks);
      await expect(failure).rejects.toBeInstanceOf(ArchiveError);
      await expect(failure).rejects.toThrow(refusal);
      expect(calls).toEqual([]);
      expect(await readdir(temp)).toEqual([]);
      expect(openFiles()).not.toContain(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("F18: uploaded, the bomb's job fails with the ratio as its reason (status 500 'Multimedia processing task failed'), nothing mapped", async () => {
    const appId = await newApp(["jr://file/zeros/0.png"]);
    const upload = await postMultimedia(app, user.authorization, DOMAIN, appId, bomb);
    expect(upload.status).toBe(200);
    const res = await waitForStatus(app, user.authorization, DOMAIN, appId, upload.body.processing_id);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, error: "Multimedia processing task failed" });
    const job = await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id: upload.body.processing_id } });
    expect(job.errors).toEqual([refusal]);
    expect(job.current).toBe(0);
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id: appId } })).multimediaMap).toEqual({});
  });

  it("F18: an archive expanding to no more than ZIP_RATIO_FLOOR_BYTES is processed whatever its ratio (16 × 1 MiB of zeros)", async () => {
    const appId = await newApp(["jr://file/zeros/0.png"]);
    const res = await uploadAndWait(app, user.authorization, DOMAIN, appId, zeroEntries(16));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ complete: true, total_files: 16, processed_files: 16 });
  });
});
