import { fstatSync } from "node:fs";
import { open, rm, type FileHandle } from "node:fs/promises";
import { Readable } from "node:stream";

/**
 * An archive's bytes read by position, wherever they are kept: a local file, or an object of an
 * S3-compatible store read by ranged GETs. The upload check (zip-check.ts) and the processor
 * (zip-processor.ts) read archives only through this, so neither needs a local copy.
 */
export interface ByteSource {
  readonly size: number;
  /** Reads up to `length` bytes at `position` into `buffer` at `offset`: how many it read (fewer only at the end). */
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /**
   * How many bytes the source holds now: a local file may be cut short while it is read, and an
   * archive cut short must fail as it would had every record been read from it.
   */
  sizeNow(): number;
  /** The bytes from `start` up to `end` (exclusive), streamed. */
  stream(start: number, end: number): Readable;
  close(): Promise<void>;
}

/**
 * A failure to reach an archive's bytes (the store refused or went away), not damage in them: the
 * upload answers it as a failure of the server, the job stops rather than list an entry unreadable.
 */
export class SourceReadError extends Error {}

/** How much of a file one read of a stream takes. */
const FILE_STREAM_CHUNK_BYTES = 256 * 1024;

/** Reads `length` bytes at `position` into `buffer` at `offset` from a file; how many it read. */
async function readFully(handle: FileHandle, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, offset + filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}

/** A local file as a ByteSource; `onClose` runs after its descriptor is closed (a temporary copy's removal). */
export async function fileSource(file: string, onClose: () => Promise<void> = async () => {}): Promise<ByteSource> {
  const handle = await open(file, "r");
  let size: number;
  try {
    size = (await handle.stat()).size;
  } catch (error) {
    await handle.close();
    throw error;
  }
  return {
    size,
    read: (buffer, offset, length, position) => readFully(handle, buffer, offset, length, position),
    // synchronous: no thread-pool round trip per record read
    sizeNow: () => fstatSync(handle.fd).size,
    stream(start, end) {
      // not handle.createReadStream: destroying such a stream closes the handle, autoClose or not
      async function* range() {
        for (let at = start; at < end; ) {
          const data = Buffer.allocUnsafe(Math.min(FILE_STREAM_CHUNK_BYTES, end - at));
          const read = await readFully(handle, data, 0, data.length, at);
          if (read === 0) return;
          at += read;
          yield data.subarray(0, read);
        }
      }
      return Readable.from(range(), { objectMode: false });
    },
    async close() {
      await handle.close();
      await onClose();
    },
  };
}

/** A temporary file as a ByteSource: the file is removed when the source is closed. */
export function temporaryFileSource(file: string, dir: string): Promise<ByteSource> {
  return fileSource(file, () => rm(dir, { recursive: true, force: true }));
}
