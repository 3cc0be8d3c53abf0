import { createReadStream, createWriteStream } from "node:fs";
import { copyFile, mkdir, mkdtemp, open, rename, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Prisma } from "../db/client.ts";

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
}

const CHUNK = 1024 * 1024;

export class DatabaseBlobStore implements BlobStore {
  constructor(private readonly prisma: Prisma) {}

  async putFile(key: string, file: string): Promise<void> {
    const handle = await open(file, "r");
    try {
      const { size } = await handle.stat();
      await this.prisma.$transaction(
        async (tx) => {
          await tx.blob.deleteMany({ where: { key } });
          await tx.blob.create({ data: { key, size: BigInt(size) } });
          const buffer = Buffer.alloc(CHUNK);
          for (let seq = 0, offset = 0; offset < size; seq++, offset += CHUNK) {
            const { bytesRead } = await handle.read(buffer, 0, CHUNK, offset);
            await tx.blobChunk.create({ data: { key, seq, data: new Uint8Array(buffer.subarray(0, bytesRead)) } });
          }
        },
        { timeout: 10 * 60_000, maxWait: 60_000 },
      );
    } finally {
      await handle.close();
    }
    await rm(file, { force: true });
  }

  async putBuffer(key: string, data: Buffer): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      await tx.blob.deleteMany({ where: { key } });
      await tx.blob.create({ data: { key, size: BigInt(data.length) } });
      for (let seq = 0, offset = 0; offset < data.length || seq === 0; seq++, offset += CHUNK) {
        await tx.blobChunk.create({ data: { key, seq, data: new Uint8Array(data.subarray(offset, offset + CHUNK)) } });
      }
    });
  }

  async localFile(key: string) {
    const source = await this.stream(key);
    if (!source) return null;
    const dir = await mkdtemp(path.join(os.tmpdir(), "blob-"));
    const file = path.join(dir, "blob");
    await pipeline(source, createWriteStream(file));
    return { path: file, release: () => rm(dir, { recursive: true, force: true }) };
  }

  async stream(key: string) {
    const blob = await this.prisma.blob.findUnique({ where: { key }, select: { key: true } });
    if (!blob) return null;
    const prisma = this.prisma;
    async function* chunks() {
      for (let seq = 0; ; seq++) {
        const chunk = await prisma.blobChunk.findUnique({ where: { key_seq: { key, seq } }, select: { data: true } });
        if (!chunk) return;
        yield Buffer.from(chunk.data);
      }
    }
    return Readable.from(chunks());
  }

  async has(key: string) {
    return (await this.prisma.blob.count({ where: { key } })) > 0;
  }

  async delete(key: string) {
    await this.prisma.blob.deleteMany({ where: { key } });
  }

  async tempDir() {
    return os.tmpdir();
  }
}
