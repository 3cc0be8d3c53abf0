import { createHash, hash } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { mkdtemp, open, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { setImmediate as nextTurn, setTimeout as delay } from "node:timers/promises";
import { crc32 } from "node:zlib";
import { fileTypeFromBuffer } from "file-type";
import yauzl from "yauzl";
import { tempPrefix } from "../../util/temp-entries.ts";
import { referencePathOf, type MediaType, type Reference } from "../../apps/references.ts";
import { emptyArchiveResult, type ArchiveResult, type StoredMedia } from "./archive-result.ts";
import { MEDIA_CLASS, MEDIA_LABEL, mediaOfContent } from "./media-types.ts";
import {
  archiveRatioRefusal,
  compressionRatio,
  declaredExpansion,
  DEFLATED,
  entryName,
  entryUse,
  IN_MEMORY_BYTES,
  isSystemError,
  MemberDamage,
  STORED,
  verifiedMemberData,
} from "./zip-entries.ts";
import type { ZipLimits } from "./zip-limits.ts";
import { fileSource, type ByteSource } from "./byte-source.ts";
import { dataStart, openDirectory, WindowedFile } from "./zip-file.ts";

/**
 * Processes a multimedia archive (CONTRACT §4 "Processing"): entries in order, streamed one at a
 * time (memory stays bounded whatever the archive's size), each classified by its content (magic
 * bytes, then extension), hashed, and matched against the app's references of the same type.
 * Unsafe names and zip bombs are refused entry by entry, or stop the job. An entry whose data is
 * damaged (local header, deflate stream, CRC, truncation) is listed unmatched and the next entry is
 * read: each entry is opened from the central directory, so one bad entry does not hide the rest.
 * (The upload refuses an archive with such an entry, zip-check.ts; this is for one damaged after.)
 */

export interface ProcessHooks {
  /** entries done and total, after every entry (persisted by the caller) */
  progress(current: number, total: number): Promise<void>;
  /**
   * keeps a matched file (deduplicated by content hash) and returns its id; a `buffer` given is
   * valid only until the returned promise settles (it may show the archive's read window)
   */
  store(file: {
    content: { buffer: Buffer } | { file: string };
    sha256: string;
    md5: string;
    size: number;
    contentType: string;
    mediaType: MediaType;
  }): Promise<string>;
  /** true when the job should stop (shutdown): the caller leaves it resumable */
  stopping(): boolean;
  /**
   * how many matched files may be stored at once while the next entries are read (default 1: each
   * store is waited for before the next entry); progress still counts entries in order, each once
   * its store has settled
   */
  storesAtOnce?: number;
}

export class ArchiveError extends Error {}
export class Stopped extends Error {}

const SNIFF_BYTES = 4100;

/** The reason listed for an entry whose data is damaged (header, deflate stream, CRC, truncation). */
export const UNREADABLE_ENTRY = "Error reading file";

type Digests = { sha256: string; md5: string };

/**
 * An entry read; a small one's digests are computed only once it matches (digestsOf). A small
 * stored entry's bytes may be a view of the archive's window (`release` lets the window go).
 */
type Spooled = { size: number; head: Buffer; release?: () => void } & (
  | { buffer: Buffer }
  | ({ buffer: Buffer } & Digests)
  | ({ file: string } & Digests)
);

/** sha256 for the dedupe, md5 for the wire: from memory, unless the read computed them already. */
function digestsOf(spooled: Spooled): Digests {
  if ("sha256" in spooled) return spooled;
  return { sha256: hash("sha256", spooled.buffer, "hex"), md5: hash("md5", spooled.buffer, "hex") };
}

/** Waits until a stream has let go of its file descriptor, however it ended. */
async function released(stream: WriteStream | undefined): Promise<void> {
  if (!stream) return;
  stream.destroy();
  await finished(stream).catch(() => {});
}

/**
 * Reads one entry, hashing it and keeping its first bytes for sniffing: small entries stay in
 * memory (no file to create and remove per entry), larger ones are written to `target`, so memory
 * stays bounded by IN_MEMORY_BYTES whatever the entry's size. yauzl checks the entry's sizes but
 * not its CRC-32, so that is checked here. On any failure the entry stream and the partial file
 * are gone before this returns.
 */
async function spool(stream: Readable, target: string, expected: { crc32: number; maxBytes: number }): Promise<Spooled> {
  const sha256 = createHash("sha256");
  const md5 = createHash("md5");
  let crc = 0;
  let size = 0;
  let chunks: Buffer[] = [];
  let file: WriteStream | undefined;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > expected.maxBytes) throw new ArchiveError("entry larger than the limit");
      sha256.update(chunk);
      md5.update(chunk);
      crc = crc32(chunk, crc);
      if (!file) {
        chunks.push(chunk);
        if (size <= IN_MEMORY_BYTES) continue;
        file = createWriteStream(target);
        // a write error is reported by `drain` or `finished` below, not as an unhandled event
        file.on("error", () => {});
        for (const held of chunks) file.write(held);
        chunks = [];
      } else if (!file.write(chunk)) {
        await once(file, "drain");
      }
    }
    if (crc !== expected.crc32) throw new Error("CRC-32 mismatch");
    if (file) {
      file.end();
      await finished(file);
    }
  } catch (error) {
    stream.destroy();
    await released(file);
    await rm(target, { force: true });
    throw error;
  }
  const digests = { size, sha256: sha256.digest("hex"), md5: md5.digest("hex") };
  if (!file) {
    const buffer = Buffer.concat(chunks);
    return { ...digests, head: buffer.subarray(0, SNIFF_BYTES), buffer };
  }
  return { ...digests, head: await readHead(target), file: target };
}

async function readHead(file: string): Promise<Buffer> {
  const handle = await open(file, "r");
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) => (error || !stream ? reject(error ?? new Error("no stream")) : resolve(stream))),
  );
}

/** Whether an entry is read whole into memory by `readSmall` rather than streamed. */
function isSmall(entry: yauzl.Entry): boolean {
  return (
    entry.compressedSize <= IN_MEMORY_BYTES &&
    entry.uncompressedSize <= IN_MEMORY_BYTES &&
    !entry.isEncrypted() &&
    (entry.compressionMethod === STORED || entry.compressionMethod === DEFLATED)
  );
}

/**
 * A small entry read whole from the archive's windows (no read of its own: in archives of many
 * small files the reads, not the bytes, were most of the time) and inflated at once, with the same
 * checks as the stream: the size it claims, then its CRC-32. Not hashed yet: an entry that matches
 * no reference never is.
 */
async function readSmall(archive: WindowedFile, entry: yauzl.Entry): Promise<Spooled> {
  const raw = await archive.lend(await dataStart(archive, entry), entry.compressedSize);
  try {
    const data = await verifiedMemberData(entry, raw.data);
    // inflated data is its own buffer: the window's bytes are no longer needed
    const lent = data === raw.data;
    if (!lent) raw.release();
    return { size: data.length, head: data.subarray(0, SNIFF_BYTES), buffer: data, release: lent ? raw.release : undefined };
  } catch (error) {
    raw.release();
    throw error;
  }
}

/**
 * Reads an entry, or says why it cannot be read: an entry larger than it claims, or damaged. A
 * failure to read the archive file itself is thrown, since no later entry could be read either.
 */
async function readEntry(
  zip: yauzl.ZipFile,
  archive: WindowedFile,
  entry: yauzl.Entry,
  target: string,
  maxBytes: number,
): Promise<Spooled | { unreadable: string }> {
  try {
    if (isSmall(entry)) return await readSmall(archive, entry);
    return await spool(await openEntry(zip, entry), target, { crc32: entry.crc32, maxBytes });
  } catch (error) {
    const larger = error instanceof ArchiveError || (error instanceof MemberDamage && error.larger);
    if (larger) return { unreadable: "File is larger than it claims to be." };
    if (isSystemError(error)) throw error;
    return { unreadable: UNREADABLE_ENTRY };
  }
}

/** How long closing an archive may wait for its file descriptor to be closed. */
const FD_CLOSE_WAIT_MS = 5000;

/**
 * Closes the archive's directory and waits until every entry stream has let go of the file too,
 * so that closing the file afterwards leaves nothing reading it (bounded, should a stream still
 * hold it).
 */
async function closeArchive(zip: yauzl.ZipFile, fdClosed: Promise<void>): Promise<void> {
  zip.close();
  await Promise.race([fdClosed, delay(FD_CLOSE_WAIT_MS, undefined, { ref: false })]);
}

/** The archive's entries one at a time, in central-directory order; null after the last. */
function entryReader(zip: yauzl.ZipFile): { next(): Promise<yauzl.Entry | null> } {
  let waiting: { resolve(entry: yauzl.Entry | null): void; reject(error: Error): void } | undefined;
  let failure: Error | undefined;
  let ended = false;
  zip.on("entry", (entry: yauzl.Entry) => waiting?.resolve(entry));
  zip.on("end", () => {
    ended = true;
    waiting?.resolve(null);
  });
  zip.on("error", (error: Error) => {
    failure = new ArchiveError(`ZIP file is corrupt: ${error.message}`);
    waiting?.reject(failure);
  });
  return {
    next() {
      if (failure) return Promise.reject(failure);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        zip.readEntry();
      });
    },
  };
}

/**
 * Why the whole archive is refused for its expansion ratio, from its central directory alone
 * (before any entry is inflated), or undefined. A directory that does not read is corrupt.
 */
async function ratioRefusal(source: ByteSource, limits: ZipLimits): Promise<string | undefined> {
  const zip = await openDirectory(source, BLOCK_BYTES).catch((error: Error) => {
    throw new ArchiveError(`ZIP file is corrupt: ${error.message}`);
  });
  const fdClosed = new Promise<void>((resolve) => zip.once("close", resolve));
  try {
    const expanded = await declaredExpansion(zip, limits).catch((error: Error) => {
      throw new ArchiveError(`ZIP file is corrupt: ${error.message}`);
    });
    return archiveRatioRefusal(expanded, source.size, limits);
  } finally {
    await closeArchive(zip, fdClosed);
  }
}

/**
 * How much of the file one read of the central directory or of a large entry's local header takes
 * (small entries are read from the windows of WindowedFile).
 */
const BLOCK_BYTES = 64 * 1024;

/** The archive file, open; any failure to open it is the archive's. */
async function openArchive(file: string): Promise<ByteSource> {
  try {
    return await fileSource(file);
  } catch (error) {
    throw new ArchiveError(`ZIP file is corrupt: ${(error as Error).message}`);
  }
}

/**
 * Processes an archive: a local file, or its bytes read by range from a store (the caller owns
 * that source and closes it). Large entries are spooled one at a time under `tempRoot`.
 */
export async function processArchive(
  archive: string | ByteSource,
  references: Reference[],
  limits: ZipLimits,
  tempRoot: string,
  hooks: ProcessHooks,
): Promise<{ result: ArchiveResult; stored: StoredMedia[] }> {
  if (typeof archive !== "string") return processSource(archive, references, limits, tempRoot, hooks);
  const source = await openArchive(archive);
  try {
    return await processSource(source, references, limits, tempRoot, hooks);
  } finally {
    await source.close();
  }
}

async function processSource(
  file: ByteSource,
  references: Reference[],
  limits: ZipLimits,
  tempRoot: string,
  hooks: ProcessHooks,
): Promise<{ result: ArchiveResult; stored: StoredMedia[] }> {
  const byPath = new Map(references.map((r) => [r.path.toLowerCase(), r]));
  const result = emptyArchiveResult();
  const stored: StoredMedia[] = [];
  const refusal = await ratioRefusal(file, limits);
  if (refusal) throw new ArchiveError(refusal);
  const dir = await mkdtemp(path.join(tempRoot, tempPrefix("archive")));
  let zip: yauzl.ZipFile;
  try {
    zip = await openDirectory(file, BLOCK_BYTES);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new ArchiveError(`ZIP file is corrupt: ${(error as Error).message}`);
  }
  const fdClosed = new Promise<void>((resolve) => zip.once("close", resolve));
  const archive = new WindowedFile(file, file.size);
  const total = zip.entryCount;
  result.total_files = total;
  let current = 0;
  let expanded = 0;
  // a NUL in a name cannot be stored in the result (jsonb): it is reported as U+FFFD
  const shown = (p: string) => p.replaceAll("\u0000", "\uFFFD");
  const unmatched = (p: string, reason: string) => result.unmatched_files.push({ path: shown(p), reason });

  type Read = Promise<Spooled | { unreadable: string }>;
  // Matched files being stored, by content hash: an entry with the same content waits for that
  // store rather than storing it again (the caller's dedupe looks at what is stored already).
  const storing = new Map<string, Promise<string>>();
  const storeOnce = (sha256: string, file: Parameters<ProcessHooks["store"]>[0]): Promise<string> => {
    const earlier = storing.get(sha256);
    if (earlier) return earlier;
    const store = hooks.store(file).finally(() => storing.delete(sha256));
    storing.set(sha256, store);
    return store;
  };

  /**
   * Handles an entry up to its storing: what is left to wait for, when a small matched entry's
   * store is still running (its result is listed already, in order; its file id comes with it).
   */
  const handle = async (entry: yauzl.Entry, prefetched: Read | undefined): Promise<{ running?: Promise<void> } | undefined> => {
    const name = entryName(entry);
    const use = entryUse(name, entry, limits);
    if (use === "directory") return; // directories count in total_files and are skipped
    result.processed_files += 1;
    if (use === "unsafe-name") return void unmatched(name, "Unsafe path: the file name leaves the archive.");
    if (use === "over-entry-limit") return void unmatched(name, `File is larger than the limit of ${limits.maxEntryBytes} bytes.`);
    if (use === "over-ratio") {
      return void unmatched(name, `Compression ratio ${Math.round(compressionRatio(entry))} exceeds the limit of ${limits.maxRatio}.`);
    }
    expanded += entry.uncompressedSize;
    if (expanded > limits.maxTotalBytes) {
      throw new ArchiveError(`The archive expands beyond the limit of ${limits.maxTotalBytes} bytes.`);
    }
    const target = path.join(dir, "entry");
    const spooled = await (prefetched ?? readEntry(zip, archive, entry, target, limits.maxEntryBytes));
    if ("unreadable" in spooled) return void unmatched(name, spooled.unreadable);
    let running: Promise<void> | undefined;
    try {
      const sniffed = await fileTypeFromBuffer(spooled.head).catch(() => undefined);
      // the path as the app names it: its folder (e.g. audio/x.3gp) counts as for a reference
      const referencePath = referencePathOf(name);
      const media = mediaOfContent(sniffed?.mime, referencePath);
      if (!media) return void result.skipped_files.push({ path: shown(name), reason: "Not an image, audio or video file." });
      const { mediaType, contentType } = media;
      const reference = byPath.get(referencePath.toLowerCase());
      if (!reference || reference.mediaType !== mediaType) {
        return void unmatched(name, `Did not match any ${MEDIA_LABEL[mediaType]} paths in application.`);
      }
      const content = "buffer" in spooled ? { buffer: spooled.buffer } : { file: spooled.file };
      const { sha256, md5 } = digestsOf(spooled);
      const kept: StoredMedia = { canonicalPath: reference.path, mediaType, fileId: "", sha256 };
      const store = storeOnce(sha256, { content, sha256, md5, size: spooled.size, contentType, mediaType }).then((fileId) => {
        kept.fileId = fileId;
      });
      // a spooled file's path is the next large entry's too: that store is waited for here
      if ("file" in spooled) await store;
      else running = store;
      stored.push(kept);
      result.matched_files[MEDIA_CLASS[mediaType]].push({
        path: reference.path,
        original_path: name,
        md5,
        size: spooled.size,
        content_type: contentType,
      });
      result.matched_count += 1;
      result[`${mediaType}_count`] += 1;
    } finally {
      // the bytes a running store reads are let go once it has settled
      if (running) running = running.finally(() => spooled.release?.());
      else spooled.release?.();
      if ("file" in spooled) await rm(target, { force: true });
    }
    // in an object: an async function returning a promise would wait for it
    return { running };
  };

  // Entries handled whose store may still run, oldest first: progress counts an entry once its
  // store has settled, so it still goes one by one, in order, and a failed store is thrown before
  // any later entry is counted. With one store at a time each is waited for at once, as before.
  const storesAfterThis = Math.max(1, hooks.storesAtOnce ?? 1) - 1;
  const inFlight: { done: boolean; settled: Promise<void> }[] = [];
  const countOldest = async () => {
    await inFlight.shift()?.settled;
    await hooks.progress(++current, total);
  };
  try {
    const entries = entryReader(zip);
    // A small entry's data is read while the one before it is hashed and matched (one entry ahead
    // at most, so memory stays bounded); entries are still handled strictly in order.
    const prefetch = (entry: yauzl.Entry | null): Read | undefined => {
      if (!entry || entryName(entry).endsWith("/") || !isSmall(entry)) return undefined;
      const read = readEntry(zip, archive, entry, path.join(dir, "entry"), limits.maxEntryBytes);
      read.catch(() => {}); // awaited in turn; a job stopped early must not leave it unhandled
      return read;
    };
    let entry = await entries.next();
    let read = prefetch(entry);
    while (entry) {
      if (hooks.stopping()) throw new Stopped();
      const following = await entries.next();
      const followingRead = prefetch(following);
      const running = (await handle(entry, read))?.running;
      const handled = { done: !running, settled: running ?? Promise.resolve() };
      // awaited in turn (a failed store is thrown at once); a job stopped early must not leave it unhandled
      running
        ?.finally(() => {
          handled.done = true;
        })
        .catch(() => {});
      inFlight.push(handled);
      while (inFlight.length > storesAfterThis || inFlight[0]?.done) await countOldest();
      // entries read from memory settle as microtasks: a turn of the event loop after each lets
      // the server's timers and sockets (the progress events sent out) run meanwhile
      await nextTurn();
      [entry, read] = [following, followingRead];
    }
    while (inFlight.length > 0) await countOldest();
  } finally {
    // no store may still read the archive's windows once the archive is closed
    await Promise.allSettled(inFlight.map((handled) => handled.settled));
    await closeArchive(zip, fdClosed);
    await archive.settle();
    await rm(dir, { recursive: true, force: true });
  }
  result.unmatched_count = result.unmatched_files.length;
  if (total === 0) await hooks.progress(0, 0);
  return { result, stored };
}
