import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { crc32, createInflateRaw } from "node:zlib";
import yauzl from "yauzl";
import {
  archiveRatioRefusal,
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
 * The upload-time validation of a multimedia archive (CONTRACT §4 "POST {app_id}/multimedia/"):
 * not a ZIP (its first bytes), or corrupt: a central directory that does not read, or a member
 * whose data is damaged (local header, deflate stream, length, CRC-32), as the original checks
 * every member before answering.
 *
 * The members checked are those the job will read (zip-entries.ts `entryUse`): an entry refused
 * by a zip-bomb limit is not inflated here either, and once the archive's total passes its limit
 * no later entry is read (the job fails there). A member is inflated no further than one byte past
 * the size it claims: more data than it claims is damage too (its bytes do not match its header).
 * So the work here is bounded as the job's is. Data is read from the archive in large sequential
 * windows; each member is inflated and its CRC-32 computed as it streams, memory bounded by the
 * window and one small member.
 */

export type ArchiveCheck = { state: "ok"; entries: number } | { state: "not-zip" } | { state: "corrupt" };

/** How much compressed data of a large member is handed to the inflater at a time. */
const STREAM_CHUNK_BYTES = 1024 * 1024;
/** How much of the central directory one read takes. */
const DIRECTORY_BLOCK_BYTES = 1024 * 1024;

/** A small member: one read, verified as processing verifies it. */
async function checkSmall(file: WindowedFile, entry: yauzl.Entry, start: number): Promise<void> {
  await verifiedMemberData(entry, await file.bytes(start, entry.compressedSize));
}

/** A large member: its compressed data in chunks, through a streaming inflate when deflated. */
async function checkLarge(file: WindowedFile, entry: yauzl.Entry, start: number): Promise<void> {
  async function* compressed() {
    for (let at = 0; at < entry.compressedSize; ) {
      const chunk = await file.chunk(start + at, Math.min(STREAM_CHUNK_BYTES, entry.compressedSize - at));
      if (chunk.length === 0) throw new MemberDamage("data cut short");
      at += chunk.length;
      yield chunk;
    }
  }
  let crc = 0;
  let size = 0;
  const consume = async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > entry.uncompressedSize) throw new MemberDamage("more data than it claims", true);
      crc = crc32(chunk, crc);
    }
  };
  if (entry.compressionMethod === STORED) {
    await consume(compressed());
  } else {
    const inflater = createInflateRaw({ chunkSize: 64 * 1024 });
    await pipeline(Readable.from(compressed(), { objectMode: false }), inflater, consume).catch((error) => {
      throw error instanceof MemberDamage ? error : new MemberDamage("deflate stream");
    });
  }
  if (size !== entry.uncompressedSize) throw new MemberDamage("not the size it claims");
  if (crc !== entry.crc32) throw new MemberDamage("CRC-32");
}

/** Checks one member's data; throws MemberDamage when it is. */
async function checkMember(file: WindowedFile, entry: yauzl.Entry): Promise<void> {
  // Encrypted members and other compression methods are not damage: processing lists them
  // unreadable, as it always did.
  if (entry.isEncrypted() || (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED)) return;
  const start = await dataStart(file, entry);
  const small = entry.compressedSize <= IN_MEMORY_BYTES && entry.uncompressedSize <= IN_MEMORY_BYTES;
  await (small ? checkSmall(file, entry, start) : checkLarge(file, entry, start));
}

const ZIP_MAGIC = ["PK\x03\x04", "PK\x05\x06", "PK\x07\x08"];

/** Checks the members the job will read, in central-directory order; rejects at the first damaged one. */
function checkMembers(zip: yauzl.ZipFile, data: WindowedFile, limits: ZipLimits): Promise<void> {
  let expanded = 0;
  const check = async (entry: yauzl.Entry) => {
    if (expanded > limits.maxTotalBytes || entryUse(entryName(entry), entry, limits) !== "read") return;
    expanded += entry.uncompressedSize;
    // past the total limit the job stops at this entry, reading nothing more
    if (expanded <= limits.maxTotalBytes) await checkMember(data, entry);
  };
  return new Promise<void>((resolve, reject) => {
    // a throw from readEntry rejects too (never an unhandled rejection)
    zip.on("entry", (entry: yauzl.Entry) =>
      check(entry)
        .then(() => zip.readEntry())
        .catch(reject),
    );
    zip.on("end", resolve);
    zip.on("error", reject);
    zip.readEntry();
  });
}

/** Whether the entries the job reads expand the archive beyond its ratio limit (a second pass over the directory). */
async function overArchiveRatio(source: ByteSource, limits: ZipLimits): Promise<boolean> {
  const zip = await openDirectory(source, DIRECTORY_BLOCK_BYTES);
  try {
    return archiveRatioRefusal(await declaredExpansion(zip, limits), source.size, limits) !== undefined;
  } finally {
    zip.close();
  }
}

/**
 * Checks that an archive (a local file, or its bytes read by range from a store, which the caller
 * owns and closes) is a ZIP whose central directory reads and whose members' data is intact.
 */
export async function checkArchive(archive: string | ByteSource, limits: ZipLimits): Promise<ArchiveCheck> {
  if (typeof archive !== "string") return checkSource(archive, limits);
  const source = await fileSource(archive);
  try {
    return await checkSource(source, limits);
  } finally {
    await source.close();
  }
}

async function checkSource(source: ByteSource, limits: ZipLimits): Promise<ArchiveCheck> {
  const head = Buffer.alloc(4);
  const headBytes = source.size >= 4 ? await source.read(head, 0, 4, 0) : 0;
  if (headBytes < 4 || !ZIP_MAGIC.includes(head.toString("latin1"))) return { state: "not-zip" };
  // a directory that does not read is corrupt; a failure to read the source is not (as for members)
  const zip = await openDirectory(source, DIRECTORY_BLOCK_BYTES).catch((error: unknown) => {
    if (isSystemError(error)) throw error;
  });
  if (!zip) return { state: "corrupt" };
  const data = new WindowedFile(source, source.size);
  try {
    // an archive refused whole for its ratio is not inflated here: its job fails before any entry
    if (await overArchiveRatio(source, limits)) return { state: "ok", entries: zip.entryCount };
    await checkMembers(zip, data, limits);
    return { state: "ok", entries: zip.entryCount };
  } catch (error) {
    if (error instanceof MemberDamage || !isSystemError(error)) return { state: "corrupt" };
    throw error;
  } finally {
    zip.close();
    await data.settle();
  }
}
