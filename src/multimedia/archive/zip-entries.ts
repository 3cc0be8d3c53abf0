import { promisify } from "node:util";
import { crc32, inflateRaw, inflateRawSync } from "node:zlib";
import yauzl from "yauzl";
import { SourceReadError } from "./byte-source.ts";
import type { ZipLimits } from "./zip-limits.ts";

/**
 * What the upload check (zip-check.ts) and the processor (zip-processor.ts) agree on about an
 * archive's entries: how the archive is opened, how a name is read, and which entries have their
 * data read at all. An entry refused by a limit (CONTRACT §4 "Safety": zip bombs) is never
 * inflated, neither at upload nor when the job runs. And how both verify a member held in memory,
 * and tell damage from a failure to read the file.
 */

/** Entries up to this size are held in memory; larger ones are streamed. */
export const IN_MEMORY_BYTES = 1024 * 1024;

export const STORED = 0;
export const DEFLATED = 8;

/** The entry's name (UTF-8 when flagged, else CP437, as yauzl decodes it). */
export function entryName(entry: yauzl.Entry): string {
  const raw = entry as unknown as { generalPurposeBitFlag: number; fileNameRaw?: Buffer; fileName: Buffer | string; extraFields: unknown[] };
  const lowLevel = (yauzl as unknown as { getFileNameLowLevel(flag: number, name: Buffer, extra: unknown[], strict: boolean): string })
    .getFileNameLowLevel;
  return lowLevel(raw.generalPurposeBitFlag, raw.fileNameRaw ?? (raw.fileName as Buffer), raw.extraFields, false);
}

function unsafeName(name: string): boolean {
  return (
    name.includes("\0") || name.startsWith("/") || name.startsWith("\\") || /^[a-z]:/i.test(name) || name.split(/[\\/]/).some((part) => part === "..")
  );
}

/**
 * How the archive is read. Names are decoded by entryName rather than by yauzl, which would refuse
 * the whole archive for one unsafe name: such an entry is reported unmatched instead.
 */
export const ZIP_OPTIONS = { lazyEntries: true, validateEntrySizes: true, decodeStrings: false } as const;

export function compressionRatio(entry: yauzl.Entry): number {
  return entry.compressedSize > 0 ? entry.uncompressedSize / entry.compressedSize : entry.uncompressedSize;
}

/**
 * Whether the processor reads an entry's data, or why not: a directory (skipped), an unsafe name,
 * a size over the per-entry limit, a compression ratio over the limit (for entries over 1 MiB).
 * An entry that is read counts its size towards the total limit, which, once passed, stops the job.
 */
export type EntryUse = "read" | "directory" | "unsafe-name" | "over-entry-limit" | "over-ratio";

export function entryUse(name: string, entry: yauzl.Entry, limits: ZipLimits): EntryUse {
  if (name.endsWith("/")) return "directory";
  if (unsafeName(name)) return "unsafe-name";
  if (entry.uncompressedSize > limits.maxEntryBytes) return "over-entry-limit";
  if (entry.uncompressedSize > 1024 * 1024 && compressionRatio(entry) > limits.maxRatio) return "over-ratio";
  return "read";
}

/**
 * The bytes the entries that are read (entryUse) expand to, from the central directory alone:
 * nothing is inflated. Reads the directory to its end; the caller closes `zip`.
 */
export function declaredExpansion(zip: yauzl.ZipFile, limits: ZipLimits): Promise<number> {
  let expanded = 0;
  return new Promise((resolve, reject) => {
    // a throw from readEntry (e.g. EMFILE) rejects too, never an uncaught exception
    const next = () => {
      try {
        zip.readEntry();
      } catch (error) {
        reject(error);
      }
    };
    zip.on("entry", (entry: yauzl.Entry) => {
      if (entryUse(entryName(entry), entry, limits) === "read") expanded += entry.uncompressedSize;
      next();
    });
    zip.on("end", () => resolve(expanded));
    zip.on("error", reject);
    next();
  });
}

/**
 * Why a whole archive is refused for its expansion (issue #12 F18: the per-entry ratio alone let
 * 600 entries of 1 MiB of zeros through), or undefined: its entries expand beyond `maxRatio` times
 * the archive's size, once they total more than `ratioFloorBytes` (small archives of text, which
 * compresses well, are never refused for it).
 */
export function archiveRatioRefusal(expanded: number, archiveBytes: number, limits: ZipLimits): string | undefined {
  if (expanded <= limits.ratioFloorBytes || expanded <= limits.maxRatio * archiveBytes) return undefined;
  return `Compression ratio ${Math.round(expanded / Math.max(archiveBytes, 1))} of the archive exceeds the limit of ${limits.maxRatio}.`;
}

/**
 * Whether a failure happened in a system call or the object store (the archive file unreadable,
 * too many open files, the spool disk full, the store refusing) rather than on the archive's own bytes: the upload answers it with a 500,
 * not a 400 "corrupt"; the job stops rather than list one entry unreadable.
 */
export function isSystemError(error: unknown): boolean {
  return error instanceof SourceReadError || typeof (error as { syscall?: unknown } | null)?.syscall === "string";
}

/** A member's data is not what its directory entry claims; `larger`: it holds more than it claims. */
export class MemberDamage extends Error {
  constructor(
    message: string,
    readonly larger = false,
  ) {
    super(message);
  }
}

/** Members with at most this much compressed data are inflated on the spot (no thread-pool round trip). */
const INFLATE_IN_PLACE_BYTES = 64 * 1024;

const inflate = promisify(inflateRaw);

/**
 * The data of a member held whole in memory (IN_MEMORY_BYTES), from its compressed bytes `raw`,
 * verified: inflated when deflated, no further than one byte past the size it claims (enough to
 * know it lies), then its size and CRC-32 checked against its entry. Stored data is returned as
 * given, not copied. Throws MemberDamage.
 */
export async function verifiedMemberData(entry: yauzl.Entry, raw: Buffer): Promise<Buffer> {
  let data = raw;
  if (entry.compressionMethod === DEFLATED) {
    const options = { maxOutputLength: entry.uncompressedSize + 1 };
    try {
      data = raw.length <= INFLATE_IN_PLACE_BYTES ? inflateRawSync(raw, options) : await inflate(raw, options);
    } catch (error) {
      const larger = (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE";
      throw new MemberDamage(larger ? "more data than it claims" : "deflate stream", larger);
    }
  }
  if (data.length > entry.uncompressedSize) throw new MemberDamage("more data than it claims", true);
  if (data.length !== entry.uncompressedSize) throw new MemberDamage("less data than it claims");
  if (crc32(data) !== entry.crc32) throw new MemberDamage("CRC-32");
  return data;
}
