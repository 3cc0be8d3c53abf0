import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { deflateRawSync, deflateSync } from "node:zlib";
import type { Response } from "supertest";
import { expect } from "vitest";
import yazl from "yazl";
import type { TestApp } from "./app.ts";

/**
 * ZIP archives built in memory with yazl, and minimal media bytes that file-type recognises by
 * their magic, for the multimedia tests. Archives stay tiny: the machine is shared.
 */

export interface ArchiveEntry {
  /** the name as stored in the archive; may escape (`../x.png`, `/abs.png`, `C:/x.png`) */
  name: string;
  /** contents; omit for a directory (the name should end with `/`) */
  data?: Buffer;
  /** deflate (default) or store */
  compress?: boolean;
}

const MTIME = new Date("2024-01-01T00:00:00Z");

/**
 * yazl refuses names that escape, so such entries are written under a placeholder of the same
 * byte length and the placeholder is then replaced in the local and central headers (the CRC
 * covers only the data, so the archive stays valid).
 */
export async function zip(entries: ArchiveEntry[]): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  const renames: [Buffer, Buffer][] = [];
  entries.forEach((entry, index) => {
    let name = entry.name;
    if (/^[a-zA-Z]:/.test(name) || name.startsWith("/") || name.startsWith("\\") || name.split(/[\\/]/).includes("..")) {
      const wanted = Buffer.from(name, "utf8");
      const stem = `zz${index}q`;
      const placeholder = Buffer.from(stem + "x".repeat(wanted.length - stem.length), "utf8");
      if (placeholder.length !== wanted.length) throw new Error(`name too short to rewrite: ${name}`);
      renames.push([placeholder, wanted]);
      name = placeholder.toString("utf8");
    }
    if (entry.data === undefined) archive.addEmptyDirectory(name, { mtime: MTIME });
    else archive.addBuffer(entry.data, name, { compress: entry.compress ?? true, mtime: MTIME });
  });
  archive.end();
  const chunks: Buffer[] = [];
  for await (const chunk of archive.outputStream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  for (const [placeholder, wanted] of renames) {
    let at = bytes.indexOf(placeholder);
    let seen = 0;
    while (at !== -1) {
      wanted.copy(bytes, at);
      seen += 1;
      at = bytes.indexOf(placeholder, at + 1);
    }
    if (seen !== 2) throw new Error(`expected the placeholder in 2 headers, found ${seen}`);
  }
  return bytes;
}

async function _zipToFile(file: string, entries: ArchiveEntry[]): Promise<string> {
  await writeFile(file, await zip(entries));
  return file;
}

/** An archive with no entries (only the end of central directory record). */
export const emptyZip = () => zip([]);

/** The offset of the central directory, from the end of central directory record. */
function centralDirectoryOffset(bytes: Buffer): number {
  const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error("no end of central directory record");
  return bytes.readUInt32LE(eocd + 16);
}

/** A valid archive cut short inside its central directory: it still starts with `PK\x03\x04`. */
export function truncatedInCentralDirectory(bytes: Buffer): Buffer {
  const start = centralDirectoryOffset(bytes);
  return bytes.subarray(0, start + 10);
}

/** A valid archive whose central directory header signature is overwritten. */
export function brokenCentralDirectory(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy.write("XXXX", centralDirectoryOffset(copy), "latin1");
  return copy;
}

/** Where one entry's headers and data lie in an archive, read from its central directory. */
export interface EntryLayout {
  /** offset of the entry's central directory header */
  central: number;
  /** offset of its local file header */
  local: number;
  /** offset of its (compressed) data */
  data: number;
  compressedSize: number;
}

export function entryLayout(bytes: Buffer, name: string): EntryLayout {
  const eocd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = bytes.readUInt16LE(eocd + 10);
  let central = centralDirectoryOffset(bytes);
  for (let i = 0; i < count; i++) {
    const nameLength = bytes.readUInt16LE(central + 28);
    const next = central + 46 + nameLength + bytes.readUInt16LE(central + 30) + bytes.readUInt16LE(central + 32);
    if (bytes.toString("utf8", central + 46, central + 46 + nameLength) === name) {
      const local = bytes.readUInt32LE(central + 42);
      const data = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
      return { central, local, data, compressedSize: bytes.readUInt32LE(central + 20) };
    }
    central = next;
  }
  throw new Error(`no entry named ${name}`);
}

/**
 * Damage to one entry that the central directory (and so the upload check) does not show: a
 * broken local header signature, flipped data bytes (in the middle of the data: a broken deflate
 * stream, or content that no longer matches its CRC), a wrong CRC-32, or compressed data cut short.
 */
export type EntryDamage = "local-header" | "data" | "crc" | "truncated";

export function damageEntry(bytes: Buffer, name: string, damage: EntryDamage): Buffer {
  const copy = Buffer.from(bytes);
  const at = entryLayout(copy, name);
  if (damage === "local-header") copy.write("XXXX", at.local, "latin1");
  if (damage === "data") {
    const middle = at.data + Math.floor(at.compressedSize / 2);
    for (let i = middle; i < Math.min(middle + 16, at.data + at.compressedSize); i++) copy[i] ^= 0xa5;
  }
  if (damage === "crc") copy.writeUInt32LE(~copy.readUInt32LE(at.central + 16) >>> 0, at.central + 16);
  // the central directory's compressed size is what the reader goes by
  if (damage === "truncated") copy.writeUInt32LE(Math.floor(at.compressedSize / 2), at.central + 20);
  return copy;
}

// ---- media bytes ---------------------------------------------------------------------------

function crc32(data: Buffer): number {
  let crc = ~0;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A real 1×1 grey PNG; `seed` changes the pixel so that contents differ. */
export function png(seed = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const row = Buffer.from([0, seed & 0xff]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(row)),
    // a text chunk makes larger seeds distinct too
    pngChunk("tEXt", Buffer.from(`seed\0${seed}`, "latin1")),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** JPEG magic (SOI + APP0 JFIF) followed by filler and EOI. */
export function jpeg(seed = 0): Buffer {
  return Buffer.concat([
    Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
    Buffer.from("JFIF\0", "latin1"),
    Buffer.from([0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
    Buffer.from(`seed${seed}`, "latin1"),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** A 1×1 GIF89a. */
export function gif(seed = 0): Buffer {
  return Buffer.concat([
    Buffer.from("GIF89a", "latin1"),
    Buffer.from([0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, seed & 0xff, 0, 0, 0xff, 0xff, 0xff]),
    Buffer.from([0x2c, 0, 0, 0, 0, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b]),
  ]);
}

/** An ID3v2.3 header (with a small padded tag) followed by MPEG-1 Layer III frame headers. */
export function mp3(seed = 0): Buffer {
  const tagSize = 10;
  const header = Buffer.from([0x49, 0x44, 0x33, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, tagSize]);
  const tag = Buffer.alloc(tagSize);
  tag.write(`s${seed}`, 0, "latin1");
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat([header, tag, frame, frame]);
}

/** An ISO base media file: an `ftyp` box with the given major brand (isom → MP4, 3gp4 → 3GPP). */
function isoMedia(brand = "isom", seed = 0): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write("ftyp", 4, "latin1");
  ftyp.write(brand.padEnd(4, " "), 8, "latin1");
  ftyp.writeUInt32BE(0x200, 12);
  ftyp.write(brand.padEnd(4, " "), 16, "latin1");
  ftyp.write("mp41", 20, "latin1");
  const free = Buffer.alloc(16);
  free.writeUInt32BE(16, 0);
  free.write("free", 4, "latin1");
  free.write(`seed${seed}`, 8, "latin1");
  return Buffer.concat([ftyp, free]);
}

export const mp4 = (seed = 0) => isoMedia("isom", seed);
export const threeGp = (seed = 0) => isoMedia("3gp4", seed);

export const md5 = (data: Buffer) => createHash("md5").update(data).digest("hex");

// ---- the Import App API over HTTP (supertest) ------------------------------------------------

export const appsBase = (domain: string) => `/a/${domain}/apps/api`;

export interface ImportOptions {
  /** the app_file: an object/array/value is sent as JSON, a Buffer or string as is; undefined: no file */
  source?: unknown;
  appName?: string;
  appId?: string;
  /** extra text fields */
  fields?: Record<string, string>;
}

export function postImport(app: TestApp, authorization: string | undefined, domain: string, options: ImportOptions = {}) {
  let req = app.http().post(`${appsBase(domain)}/import_app/`);
  if (authorization) req = req.set("Authorization", authorization);
  if (options.appName !== undefined) req = req.field("app_name", options.appName);
  if (options.appId !== undefined) req = req.field("app_id", options.appId);
  for (const [name, value] of Object.entries(options.fields ?? {})) req = req.field(name, value);
  if (options.source !== undefined) {
    const bytes = Buffer.isBuffer(options.source)
      ? options.source
      : Buffer.from(typeof options.source === "string" ? options.source : JSON.stringify(options.source));
    req = req.attach("app_file", bytes, { filename: "app.json", contentType: "application/json" });
  }
  return req;
}

/** Imports a new app and returns its id (fails the test on anything but 201). */
export async function createApp(app: TestApp, authorization: string, domain: string, source: unknown, appName = "App"): Promise<string> {
  const res = await postImport(app, authorization, domain, { source, appName });
  if (res.status !== 201) throw new Error(`import answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.app_id as string;
}

export function postMultimedia(app: TestApp, authorization: string | undefined, domain: string, appId: string, archive?: Buffer) {
  let req = app.http().post(`${appsBase(domain)}/${appId}/multimedia/`);
  if (authorization) req = req.set("Authorization", authorization);
  if (archive) req = req.attach("bulk_upload_file", archive, { filename: "media.zip", contentType: "application/zip" });
  else req = req.field("other", "x");
  return req;
}

export function getStatus(app: TestApp, authorization: string | undefined, domain: string, appId: string, processingId: string) {
  let req = app.http().get(`${appsBase(domain)}/${appId}/multimedia/status/${processingId}/`);
  if (authorization) req = req.set("Authorization", authorization);
  return req;
}

/** Polls the status until it is complete or not 200, within `timeoutMs`. */
export async function waitForStatus(
  app: TestApp,
  authorization: string,
  domain: string,
  appId: string,
  processingId: string,
  timeoutMs = 20_000,
): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await getStatus(app, authorization, domain, appId, processingId);
    if (res.status !== 200 || res.body.complete === true) return res;
    if (Date.now() > deadline) throw new Error(`processing ${processingId} not complete after ${timeoutMs} ms: ${JSON.stringify(res.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Uploads an archive and waits for its job: the final status response. */
export async function uploadAndWait(app: TestApp, authorization: string, domain: string, appId: string, archive: Buffer): Promise<Response> {
  const res = await postMultimedia(app, authorization, domain, appId, archive);
  if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  return waitForStatus(app, authorization, domain, appId, res.body.processing_id);
}

/** GET …/{app_id}/multimedia/file/{path}, the body as a Buffer. */
export function getMediaFile(app: TestApp, authorization: string, domain: string, appId: string, mediaPath: string) {
  return app
    .http()
    .get(`${appsBase(domain)}/${appId}/multimedia/file/${mediaPath.split("/").map(encodeURIComponent).join("/")}`)
    .set("Authorization", authorization)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done(null, Buffer.concat(chunks)));
    });
}

/** An application source whose form XML (in `_attachments`) and multimedia_map reference `paths`. */
export function appSource(options: { paths?: string[]; mapPaths?: string[]; docType?: string | null; extra?: Record<string, unknown> } = {}) {
  const xml = (options.paths ?? []).map((p) => `<text id="q-${p.length}"><value form="image">${p}</value></text>`).join("");
  const source: Record<string, unknown> = {
    ...(options.docType === null ? {} : { doc_type: options.docType ?? "Application" }),
    name: "Source name",
    modules: [{ name: { en: "Module" }, forms: [{ unique_id: "form-1" }] }],
    _attachments: { "form-1.xml": `<?xml version="1.0"?><h:html><itext>${xml}</itext></h:html>` },
    multimedia_map: Object.fromEntries((options.mapPaths ?? []).map((p) => [p, { doc_type: "HQMediaMapItem", multimedia_id: "x" }])),
    ...options.extra,
  };
  return source;
}

/** The Import App API's error body: exactly {"success": false, "error"}, with this status and message. */
export function expectAppsError(res: { status: number; body: any }, status: number, message?: string) {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body)).toEqual(["success", "error"]);
  expect(res.body.success).toBe(false);
  if (message === undefined) expect(typeof res.body.error).toBe("string");
  else expect(res.body.error).toBe(message);
}

/**
 * The review's ratio bomb (issue #12 F18): `count` entries of 1 MiB of zeros, each just at the
 * size below which the per-entry ratio is not checked; 600 of them make a ~600 KB archive that
 * expands to 600 MiB. Written by hand with one deflate shared by every entry: deflating 600 MiB
 * for each run would cost the shared machine seconds.
 */
export function zeroEntries(count: number): Buffer {
  const size = 1024 * 1024;
  const data = deflateRawSync(Buffer.alloc(size));
  const crc = crc32(Buffer.alloc(size));
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const name = Buffer.from(`zeros/${i}.png`);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(8, 8); // deflated
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
