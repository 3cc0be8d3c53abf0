import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fileSource, type ByteSource } from "../../src/multimedia/archive/byte-source.ts";
import { WindowedFile } from "../../src/multimedia/archive/zip-file.ts";

/**
 * The windowed reads the processor and the upload check share: two 4 MiB buffers filled in turn,
 * so every byte served must be the caller's own copy, right whatever order the reads come in.
 */

const MiB = 1024 * 1024;
const CONTENT = randomBytes(19 * MiB + 12_345);

let dir: string;
let source: ByteSource | undefined;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "zip-file-"));
  await writeFile(path.join(dir, "data"), CONTENT);
});
afterEach(() => source?.close());
afterAll(() => rm(dir, { recursive: true, force: true }));

async function windowed(): Promise<WindowedFile> {
  source = await fileSource(path.join(dir, "data"));
  return new WindowedFile(source, CONTENT.length);
}

describe("WindowedFile", () => {
  it("serves copies: bytes read earlier stay what they were after the windows move on", async () => {
    const file = await windowed();
    const held: { at: number; bytes: Buffer }[] = [];
    for (let at = 0; at < CONTENT.length; at += 700 * 1024) held.push({ at, bytes: await file.bytes(at, 300 * 1024) });
    await file.settle();
    expect(held.length).toBeGreaterThan(25);
    for (const { at, bytes } of held) expect(bytes.equals(CONTENT.subarray(at, at + 300 * 1024))).toBe(true);
  });

  it("reads spanning windows, backwards and overlapping (several calls in flight) get the file's bytes", async () => {
    const file = await windowed();
    const reads = [
      [4 * MiB - 10, 20],
      [0, 5 * MiB],
      [17 * MiB, 3 * MiB],
      [8 * MiB + 1, 1],
      [CONTENT.length - 5, 100],
      [CONTENT.length, 10],
      [2 * MiB, 9 * MiB],
    ].map(async ([at, length]) => ({ at: at!, length: length!, bytes: await file.bytes(at!, length!) }));
    for (const { at, length, bytes } of await Promise.all(reads)) expect(bytes.equals(CONTENT.subarray(at, at + length))).toBe(true);
    await file.settle();
  });

  it("a chunk stops at the end of its window (the window starts at the first read), and the next one goes on from there", async () => {
    const file = await windowed();
    expect((await file.chunk(0, 10)).equals(CONTENT.subarray(0, 10))).toBe(true);
    const first = await file.chunk(4 * MiB - 100, MiB);
    expect(first.length).toBe(100);
    const next = await file.chunk(4 * MiB, MiB);
    expect(Buffer.concat([first, next]).equals(CONTENT.subarray(4 * MiB - 100, 5 * MiB))).toBe(true);
    await file.settle();
  });

  it("lends views that stay the file's bytes until released while the windows move on, then reuses their buffers", async () => {
    const file = await windowed();
    const held: { at: number; loan: Awaited<ReturnType<WindowedFile["lend"]>> }[] = [];
    for (let at = 0; at < CONTENT.length; at += 3 * MiB) held.push({ at, loan: await file.lend(at, 100 * 1024) });
    for (const { at, loan } of held) expect(loan.data.equals(CONTENT.subarray(at, at + 100 * 1024))).toBe(true);
    for (const { loan } of held) loan.release();
    // released: the next windows are read into the buffers the loans held, not into new ones
    const buffers = new Set<ArrayBufferLike>();
    for (let at = 0; at < CONTENT.length; at += 2 * MiB) {
      const loan = await file.lend(at, 1024);
      expect(loan.data.equals(CONTENT.subarray(at, at + 1024))).toBe(true);
      buffers.add(loan.data.buffer);
      loan.release();
    }
    expect(buffers.size).toBeLessThanOrEqual(held.length + 2);
    await file.settle();
  });

  it("lends a copy of bytes across two windows, and bytes past the end as far as the file goes", async () => {
    const file = await windowed();
    const across = await file.lend(4 * MiB - 10, 20);
    expect(across.data.equals(CONTENT.subarray(4 * MiB - 10, 4 * MiB + 10))).toBe(true);
    const end = await file.lend(CONTENT.length - 5, 100);
    expect(end.data.equals(CONTENT.subarray(CONTENT.length - 5))).toBe(true);
    across.release();
    end.release();
    await file.settle();
  });
});
