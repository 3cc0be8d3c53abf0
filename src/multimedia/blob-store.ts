import { createReadStream, createWriteStream } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { tempPrefix } from "../util/temp-entries.ts";
import { fileSource, temporaryFileSource, type ByteSource } from "./archive/byte-source.ts";

/**
 * Where uploaded archives and media files live: the filesystem under DATA_DIR for the embedded
 * database, PostgreSQL itself (in 1 MiB chunks) when several processes share a server, so that
 * every process reads what any process wrote, or an S3-compatible object store (s3-blob-store.ts)
 * when BLOB_STORE_URL names one.
 */
export interface BlobStore {
  /**
   * Takes an upload's bytes as they arrive, for `key` but not yet kept: they can be read back by
   * range (the upload check), then kept under `key` or dropped.
   */
  stage(key: string, source: Readable): Promise<StagedBlob>;
  /** stores the file at `file` under `key`; the file may be moved away */
  putFile(key: string, file: string): Promise<void>;
  putBuffer(key: string, data: Buffer): Promise<void>;
  /** the blob's bytes read by position (a local copy for the database store), or null; the caller closes it */
  open(key: string): Promise<ByteSource | null>;
  /** the blob's bytes, all of them or those of `range` (both ends included), or null when there is no such blob */
  stream(key: string, range?: ByteRange): Promise<Readable | null>;
  has(key: string): Promise<boolean>;
  /** the blob's size in bytes, or null when there is none */
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /** every key stored (the move to another store) */
  keys(): AsyncIterable<string>;
  /** a URL that fetches the blob without this server for a while (pre-signed), or null when the store has none */
  downloadUrl(key: string, contentType: string): Promise<string | null>;
  /** whether an upload is spooled on this machine's disk (so the free-space check applies to it) */
  readonly spoolsLocally: boolean;
  /**
   * how many matched files a multimedia job stores at once while it reads on: more than one where
   * each store is round trips to another machine (stored one after the other, those were most of
   * a job's time); 1 keeps the order of every step as it was
   */
  readonly storesAtOnce: number;
  /** whether a store outside the process answers, with its credentials (/readyz); absent for local storage */
  check?(): Promise<boolean>;
  /** a directory for files on their way in, on the store's own device where that matters */
  tempDir(): Promise<string>;
  close(): Promise<void>;
}

/** An upload's bytes, received, until they are kept or dropped. */
export interface StagedBlob {
  readonly key: string;
  readonly size: number;
  /** the bytes by position; the caller closes the source */
  open(): Promise<ByteSource>;
  /** stores them under `key` */
  keep(): Promise<void>;
  /** forgets them, unless they were kept */
  drop(): Promise<void>;
}

/** Bytes `start` to `end` of a blob, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

export const safeKey = (key: string) => {
  if (!/^[a-z0-9][a-z0-9/_.-]*$/i.test(key) || key.includes("..")) throw new Error(`bad blob key ${key}`);
  return key;
};

/** An upload spooled to a file of `tempDir` (the local stores): kept by `putFile`, which may move it. */
async function stageLocally(store: BlobStore, key: string, source: Readable): Promise<StagedBlob> {
  const dir = await mkdtemp(path.join(await store.tempDir(), tempPrefix("upload")));
  const file = path.join(dir, "archive");
  try {
    await pipeline(source, createWriteStream(file));
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const { size } = await stat(file);
  let kept = false;
  return {
    key,
    size,
    open: () => fileSource(file),
    async keep() {
      await store.putFile(key, file);
      kept = true;
      await rm(dir, { recursive: true, force: true });
    },
    async drop() {
      if (!kept) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The files under `dir`, as keys relative to `root`, depth first. */
async function* filesUnder(root: string, dir = root): AsyncIterable<string> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(root, full);
    // a `.tmp` file is a write in progress (putBuffer), not a blob yet
    else if (entry.isFile() && !entry.name.endsWith(".tmp")) yield path.relative(root, full).split(path.sep).join("/");
  }
}

export class FileBlobStore implements BlobStore {
  readonly spoolsLocally = true;
  readonly storesAtOnce = 1;

  constructor(private readonly root: string) {}

  stage(key: string, source: Readable): Promise<StagedBlob> {
    return stageLocally(this, key, source);
  }

  private file(key: string) {
    return path.join(this.root, "blobs", safeKey(key));
  }

  async putFile(key: string, file: string): Promise<void> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await rename(file, target);
    } catch {
      await copyFile(file, target);
      await rm(file, { force: true });
    }
  }

  async putBuffer(key: string, data: Buffer): Promise<void> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temp, data);
    await rename(temp, target);
  }

  async open(key: string) {
    return fileSource(this.file(key)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return null;
      throw error;
    });
  }

  async stream(key: string, range?: ByteRange) {
    return (await this.has(key)) ? createReadStream(this.file(key), range ? { start: range.start, end: range.end } : {}) : null;
  }

  keys(): AsyncIterable<string> {
    return filesUnder(path.join(this.root, "blobs"));
  }

  async downloadUrl() {
    return null;
  }

  async has(key: string) {
    return (await this.size(key)) !== null;
  }

  async size(key: string) {
    return stat(this.file(key)).then(
      (found) => found.size,
      () => null,
    );
  }

  async delete(key: string) {
    await rm(this.file(key), { force: true });
  }

  async tempDir() {
    const dir = path.join(this.root, "tmp");
    await mkdir(dir, { recursive: true });
    return dir;
  }

  async close() {}
}

const CHUNK = 1024 * 1024;

/**
 * Chunks go through node-postgres on a small pool of their own, not through Prisma: Prisma's
 * engine carries bytes as base64 strings, which for a 1 GB upload cost hundreds of MB of memory
 * and ran at a fraction of the speed. One chunk at a time is in memory, in either direction.
 */
export class DatabaseBlobStore implements BlobStore {
  readonly spoolsLocally = true;
  readonly storesAtOnce = 1;
  private readonly pool: pg.Pool;

  /** `tempRoot`: where blobs are copied to be read as files, and uploads spooled */
  constructor(
    url: string,
    private readonly tempRoot: string,
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000, keepAlive: true });
    // an idle client losing its connection (database restart) must not take the process down
    this.pool.on("error", () => {});
  }

  stage(key: string, source: Readable): Promise<StagedBlob> {
    return stageLocally(this, key, source);
  }

  async putFile(key: string, file: string): Promise<void> {
    const source = await fileSource(file);
    try {
      const buffer = Buffer.alloc(CHUNK);
      await this.write(key, source.size, async function* () {
        for (let offset = 0; offset < source.size; offset += CHUNK) {
          const bytesRead = await source.read(buffer, 0, CHUNK, offset);
          yield buffer.subarray(0, bytesRead);
        }
      });
    } finally {
      await source.close();
    }
    await rm(file, { force: true });
  }

  async putBuffer(key: string, data: Buffer): Promise<void> {
    await this.write(key, data.length, function* () {
      for (let offset = 0; offset < data.length || offset === 0; offset += CHUNK) yield data.subarray(offset, offset + CHUNK);
    });
  }

  /** Replaces the blob `key` with the chunks given, in one transaction. */
  private async write(key: string, size: number, chunks: () => AsyncIterable<Buffer> | Iterable<Buffer>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("DELETE FROM blobs WHERE key = $1", [key]);
      await client.query("INSERT INTO blobs (key, size) VALUES ($1, $2)", [key, size]);
      let seq = 0;
      for await (const chunk of chunks()) {
        await client.query("INSERT INTO blob_chunks (key, seq, data) VALUES ($1, $2, $3)", [key, seq++, chunk]);
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** A local copy: chunks are not read by position cheaply enough for the ZIP reader's many small reads. */
  async open(key: string) {
    const source = await this.stream(key);
    if (!source) return null;
    const dir = await mkdtemp(path.join(await this.tempDir(), tempPrefix("blob")));
    const file = path.join(dir, "blob");
    try {
      await pipeline(source, createWriteStream(file));
      return await temporaryFileSource(file, dir);
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  async stream(key: string, range?: ByteRange) {
    if (!(await this.has(key))) return null;
    const pool = this.pool;
    // every chunk but the last holds CHUNK bytes: a range starts in chunk start / CHUNK
    const first = range ? Math.floor(range.start / CHUNK) : 0;
    let skip = range ? range.start - first * CHUNK : 0;
    let left = range ? range.end - range.start + 1 : Number.POSITIVE_INFINITY;
    async function* chunks() {
      for (let seq = first; left > 0; seq++) {
        const { rows } = await pool.query<{ data: Buffer }>("SELECT data FROM blob_chunks WHERE key = $1 AND seq = $2", [key, seq]);
        if (!rows[0]) return;
        const data = rows[0].data.subarray(skip, skip + left);
        skip = 0;
        left -= data.length;
        yield data;
      }
    }
    return Readable.from(chunks());
  }

  async *keys(): AsyncIterable<string> {
    // in pages by key, so that a store of millions of blobs is never listed at once
    for (let after = ""; ; ) {
      const { rows } = await this.pool.query<{ key: string }>("SELECT key FROM blobs WHERE key > $1 ORDER BY key LIMIT 500", [after]);
      for (const row of rows) yield row.key;
      if (rows.length < 500) return;
      after = rows.at(-1)!.key;
    }
  }

  async downloadUrl() {
    return null;
  }

  async has(key: string) {
    const { rowCount } = await this.pool.query("SELECT 1 FROM blobs WHERE key = $1", [key]);
    return (rowCount ?? 0) > 0;
  }

  async size(key: string) {
    const { rows } = await this.pool.query<{ size: string }>("SELECT size FROM blobs WHERE key = $1", [key]);
    return rows[0] ? Number(rows[0].size) : null;
  }

  async delete(key: string) {
    await this.pool.query("DELETE FROM blobs WHERE key = $1", [key]);
  }

  async tempDir() {
    await mkdir(this.tempRoot, { recursive: true });
    return this.tempRoot;
  }

  async close() {
    await this.pool.end();
  }
}
