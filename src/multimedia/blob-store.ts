import { createReadStream, createWriteStream } from "node:fs";
import { copyFile, mkdir, mkdtemp, open, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { tempPrefix } from "../util/temp-entries.ts";

/**
 * Where uploaded archives and media files live: the filesystem under DATA_DIR for the embedded
 * database, PostgreSQL itself (in 1 MiB chunks) when several processes share a server, so that
 * every process reads what any process wrote.
 */
export interface BlobStore {
  /** stores the file at `file` under `key`; the file may be moved away */
  putFile(key: string, file: string): Promise<void>;
  putBuffer(key: string, data: Buffer): Promise<void>;
  /** a local file holding the blob (a copy for the database store), and how to let it go */
  localFile(key: string): Promise<{ path: string; release(): Promise<void> } | null>;
  stream(key: string): Promise<Readable | null>;
  has(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** a directory for files on their way in, on the store's own device where that matters */
  tempDir(): Promise<string>;
  close(): Promise<void>;
}

const safeKey = (key: string) => {
  if (!/^[a-z0-9][a-z0-9/_.-]*$/i.test(key) || key.includes("..")) throw new Error(`bad blob key ${key}`);
  return key;
};

export class FileBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

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

  async localFile(key: string) {
    return (await this.has(key)) ? { path: this.file(key), release: async () => {} } : null;
  }

  async stream(key: string) {
    return (await this.has(key)) ? createReadStream(this.file(key)) : null;
  }

  async has(key: string) {
    return stat(this.file(key)).then(
      () => true,
      () => false,
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

  async putFile(key: string, file: string): Promise<void> {
    const handle = await open(file, "r");
    try {
      const { size } = await handle.stat();
      const buffer = Buffer.alloc(CHUNK);
      await this.write(key, size, async function* () {
        for (let offset = 0; offset < size; offset += CHUNK) {
          const { bytesRead } = await handle.read(buffer, 0, CHUNK, offset);
          yield buffer.subarray(0, bytesRead);
        }
      });
    } finally {
      await handle.close();
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

  async localFile(key: string) {
    const source = await this.stream(key);
    if (!source) return null;
    const dir = await mkdtemp(path.join(await this.tempDir(), tempPrefix("blob")));
    const file = path.join(dir, "blob");
    await pipeline(source, createWriteStream(file));
    return { path: file, release: () => rm(dir, { recursive: true, force: true }) };
  }

  async stream(key: string) {
    if (!(await this.has(key))) return null;
    const pool = this.pool;
    async function* chunks() {
      for (let seq = 0; ; seq++) {
        const { rows } = await pool.query<{ data: Buffer }>("SELECT data FROM blob_chunks WHERE key = $1 AND seq = $2", [key, seq]);
        if (!rows[0]) return;
        yield rows[0].data;
      }
    }
    return Readable.from(chunks());
  }

  async has(key: string) {
    const { rowCount } = await this.pool.query("SELECT 1 FROM blobs WHERE key = $1", [key]);
    return (rowCount ?? 0) > 0;
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
