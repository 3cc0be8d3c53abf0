import type { Readable } from "node:stream";
import yauzl from "yauzl";
import type { ByteSource } from "./byte-source.ts";
import { MemberDamage, ZIP_OPTIONS } from "./zip-entries.ts";

/**
 * How the upload check (zip-check.ts) and the processor (zip-processor.ts) read an archive's
 * bytes: few, large reads. Each read is a round trip to the thread pool, and with thousands of
 * small members those round trips, not the bytes, were most of the time (yauzl's own file reader
 * takes two reads per directory record and one or two per local header).
 */

/** How much of the archive one read of `WindowedFile` takes (several small members at once). */
const WINDOW_BYTES = 4 * 1024 * 1024;
const LOCAL_HEADER_BYTES = 30;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;

interface Window {
  start: number;
  data: Buffer;
}

/** Bytes lent by `WindowedFile.lend`: a view of a window, valid until `release` is called. */
export interface Loan {
  data: Buffer;
  release(): void;
}

/**
 * How many of `length` bytes at `position` the source still holds. Bytes read earlier are served
 * only as far as the source still goes, so that an archive cut short while it is read fails as it
 * did when every record was read from it.
 */
function stillThere(source: ByteSource, position: number, length: number): number {
  return Math.max(0, Math.min(length, source.sizeNow() - position));
}

/** Reads `length` bytes at `position` into a fresh buffer (fewer only at the end of the source). */
async function readAt(source: ByteSource, position: number, length: number): Promise<Window> {
  const data = Buffer.allocUnsafe(Math.max(0, length));
  return { start: position, data: data.subarray(0, await source.read(data, 0, data.length, position)) };
}

const NO_WINDOW: Window = { start: 0, data: Buffer.alloc(0) };

/**
 * Reads of the archive served from a window of it, the next window being read ahead while this
 * one is used (members lie one after the other, so reads mostly run forward). Window buffers are
 * allocated once and reused: a fresh 4 MiB buffer per window was garbage that V8 collected late
 * (a 1 GB archive made the server grow by 118-166 MB, not 71-74). `bytes` and `chunk` serve
 * copies; `lend` serves a view of the window itself (no copy: with every member copied out, the
 * copies were most of the garbage collector's work), and the window's buffer is read into again
 * only once every view of it is released. A buffer is reused only once no call can be served from
 * it and nothing borrowed from it is held: besides the window and the read ahead, at most one
 * buffer per loan held (the processor holds one per store running and one for the entry it reads
 * ahead, so four stores at once hold seven window buffers at most). Calls may overlap (the processor reads one entry ahead): they take turns, so that the
 * read ahead is used once.
 */
export class WindowedFile {
  private window = NO_WINDOW;
  private ahead: { start: number; buffer: Buffer; read: Promise<Window> } | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  /** window buffers free to be read into */
  private readonly spare: Buffer[] = [];
  /** views lent and not yet released, by the window buffer they show */
  private readonly lent = new Map<ArrayBufferLike, { buffer: Buffer; count: number; leftBehind: boolean }>();

  constructor(
    private readonly source: ByteSource,
    readonly size: number,
  ) {}

  /** `length` bytes at `position` (fewer only at the end of the file), the caller's own. */
  async bytes(position: number, length: number): Promise<Buffer> {
    const first = await this.chunk(position, length);
    if (first.length === length || first.length === 0) return first;
    // across the end of a window: the rest from the next
    const parts = [first];
    let got = first.length;
    while (got < length) {
      const next = await this.chunk(position + got, length - got);
      if (next.length === 0) break;
      parts.push(next);
      got += next.length;
    }
    return Buffer.concat(parts);
  }

  /**
   * Up to `maxLength` bytes at `position`, as far as the window holding `position` goes (none past
   * the end of the file), the caller's own.
   */
  chunk(position: number, maxLength: number): Promise<Buffer> {
    return this.served(position, (window) => Buffer.from(this.view(window, position, maxLength)));
  }

  /**
   * `length` bytes at `position` (fewer only at the end of the file) as a loan: a view of the
   * window when they lie within one, a copy otherwise. The bytes stay as they are until `release`;
   * the window they show is not read into again before.
   */
  async lend(position: number, length: number): Promise<Loan> {
    const loan = await this.served(position, (window) => {
      const data = this.view(window, position, length);
      return data.length === length ? this.loanOf(data) : undefined;
    });
    return loan ?? { data: await this.bytes(position, length), release: () => {} };
  }

  /** Lets the reads in flight finish (before the file is closed). */
  async settle(): Promise<void> {
    await this.turn;
    await this.ahead?.read.catch(() => {});
  }

  /** `serve(window)` once the window holds `position`: at once when it does already. */
  private served<T>(position: number, serve: (window: Window) => T): Promise<T> {
    if (this.holds(this.window, position)) return Promise.resolve(serve(this.window));
    const read = this.turn.then(async () => {
      if (!this.holds(this.window, position)) await this.moveTo(position);
      return serve(this.window);
    });
    this.turn = read.catch(() => {});
    return read;
  }

  private view(window: Window, position: number, maxLength: number): Buffer {
    const offset = position - window.start;
    return window.data.subarray(offset, offset + stillThere(this.source, position, maxLength));
  }

  private loanOf(data: Buffer): Loan {
    const held = this.lent.get(data.buffer) ?? { buffer: this.bufferOf(data), count: 0, leftBehind: false };
    held.count += 1;
    this.lent.set(data.buffer, held);
    let released = false;
    return {
      data,
      release: () => {
        if (released) return;
        released = true;
        held.count -= 1;
        if (held.count > 0) return;
        this.lent.delete(data.buffer);
        if (held.leftBehind) this.spare.push(held.buffer);
      },
    };
  }

  /** The whole window buffer a view of a window belongs to. */
  private bufferOf(data: Buffer): Buffer {
    return Buffer.from(data.buffer, 0, data.buffer.byteLength);
  }

  private holds(window: Window, position: number): boolean {
    return position >= window.start && position < window.start + window.data.length;
  }

  /** A window's buffer no call is served from any more: free once nothing lent from it is held. */
  private leave(data: Buffer): void {
    if (data.buffer === NO_WINDOW.data.buffer || data.buffer.byteLength === 0) return;
    const held = this.lent.get(data.buffer);
    if (held) held.leftBehind = true;
    else this.spare.push(this.bufferOf(data));
  }

  /** Makes the window the one holding `position`, and reads the next one ahead. */
  private async moveTo(position: number): Promise<void> {
    const ahead = this.ahead;
    this.ahead = undefined;
    // nothing is served from the window left behind any more: its buffer is read into next
    this.leave(this.window.data);
    this.window = NO_WINDOW;
    let window: Window | undefined;
    if (ahead) {
      const wanted = position >= ahead.start && position < ahead.start + WINDOW_BYTES;
      // a failed read ahead fails this read only when this read wanted its bytes
      const read = await ahead.read.catch((error: unknown) => {
        if (wanted) throw error;
        return undefined;
      });
      if (wanted && read && this.holds(read, position)) window = read;
      else this.spare.push(ahead.buffer);
    }
    this.window = window ?? (await this.read(position, this.take()));
    const next = this.window.start + this.window.data.length;
    if (this.window.data.length > 0 && next < this.size) {
      const buffer = this.take();
      const read = this.read(next, buffer);
      read.catch(() => {}); // awaited when used, or by settle()
      this.ahead = { start: next, buffer, read };
    }
  }

  /** A window buffer to read into: a spare one, else a new one. */
  private take(): Buffer {
    return this.spare.pop() ?? Buffer.allocUnsafeSlow(Math.min(WINDOW_BYTES, this.size));
  }

  private async read(position: number, into: Buffer): Promise<Window> {
    const length = Math.min(into.length, this.size - position);
    return { start: position, data: into.subarray(0, await this.source.read(into, 0, length, position)) };
  }
}

/**
 * yauzl's reads (the end record, the central directory record by record, local headers) served
 * from blocks of the source: one read per block rather than two per record. Member data streamed
 * by yauzl (`openReadStream`) is streamed straight from the source. The caller owns `source` and
 * closes it once the ZipFile has emitted "close" (every stream let go of it).
 */
class BlockReader extends yauzl.RandomAccessReader {
  private block: Window = { start: 0, data: Buffer.alloc(0) };

  constructor(
    private readonly source: ByteSource,
    private readonly blockBytes: number,
  ) {
    super();
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (error: Error | null, bytesRead?: number) => void): void {
    const copy = (block: Window) =>
      block.data.copy(
        buffer,
        offset,
        position - block.start,
        Math.min(position - block.start + stillThere(this.source, position, length), block.data.length),
      );
    if (position >= this.block.start && position + length <= this.block.start + this.block.data.length) {
      const copied = copy(this.block);
      return void process.nextTick(callback, null, copied);
    }
    readAt(this.source, position, Math.max(length, this.blockBytes)).then(
      (block) => {
        this.block = block;
        callback(null, copy(block));
      },
      (error: Error) => callback(error),
    );
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return this.source.stream(start, end);
  }
}

/**
 * The archive's central directory, read from `source` in blocks of `blockBytes`; yauzl's error
 * when it does not read.
 */
export function openDirectory(source: ByteSource, blockBytes: number): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.fromRandomAccessReader(new BlockReader(source, blockBytes), source.size, { ...ZIP_OPTIONS, autoClose: false }, (error, zip) =>
      error || !zip ? reject(error ?? new Error("no zip")) : resolve(zip),
    ),
  );
}

/** Where the member's data starts, after its local header (whose signature must be there). */
export async function dataStart(file: WindowedFile, entry: yauzl.Entry): Promise<number> {
  const header = await file.bytes(entry.relativeOffsetOfLocalHeader, LOCAL_HEADER_BYTES);
  if (header.length < LOCAL_HEADER_BYTES || header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) throw new MemberDamage("local header");
  const start = entry.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (start + entry.compressedSize > file.size) throw new MemberDamage("data past the end of the file");
  return start;
}
