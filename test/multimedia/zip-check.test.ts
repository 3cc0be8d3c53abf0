import { randomBytes } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, open, rm, writeFile, type FileHandle } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import yauzl from "yauzl";
import { checkArchive } from "../../src/multimedia/archive/zip-check.ts";
import { damageEntry, entryLayout, png, zeroEntries, zip } from "../helpers/archives.ts";

/**
 * The upload-time check (CONTRACT §4 "POST {app_id}/multimedia/", corrupt → 400) on its own: it
 * reads the archive in windows, so damage is found wherever it lies, across window boundaries too,
 * and it leaves no file open whatever it answers.
 */

const LIMITS = { maxEntryBytes: 512 * 1024 * 1024, maxTotalBytes: 8 * 1024 * 1024 * 1024, maxRatio: 100, ratioFloorBytes: 16 * 1024 * 1024 };
const WINDOW = 4 * 1024 * 1024;

let dir: string;
beforeAll(async () => void (dir = await mkdtemp(path.join(os.tmpdir(), "zip-check-"))));
afterAll(() => rm(dir, { recursive: true, force: true }));

async function check(bytes: Buffer) {
  const file = path.join(dir, "archive.zip");
  await writeFile(file, bytes);
  return checkArchive(file, LIMITS);
}

const openFiles = () =>
  readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });

describe("checkArchive", () => {
  it("finds damage in members that straddle the end of a read window, stored or deflated", async () => {
    // ~13 MB of 700 kB members (hex text deflates to about half): several cross a 4 MiB boundary
    const entries = Array.from({ length: 24 }, (_, i) => ({
      name: `m${i}.png`,
      data: Buffer.concat([png(i), i % 2 ? randomBytes(700 * 1024) : Buffer.from(randomBytes(350 * 1024).toString("hex"))]),
      compress: i % 2 === 0,
    }));
    const archive = await zip(entries);
    expect(await check(archive)).toEqual({ state: "ok", entries: 24 });
    const straddling = entries.filter(({ name }) => {
      const at = entryLayout(archive, name);
      return Math.floor(at.local / WINDOW) !== Math.floor((at.data + at.compressedSize) / WINDOW);
    });
    expect(straddling.length).toBeGreaterThan(1);
    for (const { name } of straddling) {
      expect(await check(damageEntry(archive, name, "data")), name).toEqual({ state: "corrupt" });
      expect(await check(damageEntry(archive, name, "crc")), name).toEqual({ state: "corrupt" });
    }
  });

  it("leaves no file open, whatever it answers", async () => {
    const archive = await zip([
      { name: "a.png", data: png(1) },
      { name: "b.png", data: png(2) },
    ]);
    const answers = [];
    for (const bytes of [archive, damageEntry(archive, "b.png", "crc"), Buffer.from("not a zip"), archive.subarray(0, 40)]) {
      answers.push((await check(bytes)).state);
      expect(openFiles().filter((f) => f.startsWith(dir))).toEqual([]);
    }
    expect(answers).toEqual(["ok", "corrupt", "not-zip", "corrupt"]);
  });

  describe("a system error is a failure to read the upload (thrown, a 500), not a corrupt archive, wherever it happens", () => {
    afterEach(() => vi.restoreAllMocks());
    const systemError = (syscall: string, code: string) => Object.assign(new Error(`${code}: i/o failed, ${syscall}`), { syscall, code });

    it("while reading the central directory (EIO) → thrown, not corrupt", async () => {
      const archive = await zip([{ name: "a.png", data: png(3) }]);
      const file = path.join(dir, "directory-eio.zip");
      await writeFile(file, archive);
      const probe = await open(file, "r");
      const prototype = Object.getPrototypeOf(probe) as FileHandle;
      await probe.close();
      const read = prototype.read;
      // the first four bytes read (the ZIP magic); every later read (the end record, the directory) fails
      vi.spyOn(prototype, "read").mockImplementation(function (this: FileHandle, ...args: unknown[]) {
        if (args[2] === 4) return (read as (...a: unknown[]) => ReturnType<FileHandle["read"]>).apply(this, args);
        return Promise.reject(systemError("read", "EIO"));
      } as FileHandle["read"]);
      await expect(checkArchive(file, LIMITS)).rejects.toMatchObject({ code: "EIO", syscall: "read" });
      vi.restoreAllMocks();
      expect(openFiles().filter((f) => f.startsWith(dir))).toEqual([]);
    });

    it("reading the next entry throws (EMFILE) → rejected, never an unhandled rejection", async () => {
      const archive = await zip([
        { name: "a.png", data: png(4) },
        { name: "b.png", data: png(5) },
      ]);
      const readEntry = yauzl.ZipFile.prototype.readEntry;
      let calls = 0;
      vi.spyOn(yauzl.ZipFile.prototype, "readEntry").mockImplementation(function (this: yauzl.ZipFile) {
        if (++calls === 2) throw systemError("open", "EMFILE");
        readEntry.call(this);
      });
      await expect(check(archive)).rejects.toMatchObject({ code: "EMFILE" });
      expect(calls).toBe(2);
      expect(openFiles().filter((f) => f.startsWith(dir))).toEqual([]);
    });
  });
});

describe("F18: an archive refused whole for its expansion ratio is not inflated at upload", () => {
  it("F18: 600 × 1 MiB of zeros (~680 KB) is accepted without reading a member (a damaged one goes unseen; the job fails on the ratio)", async () => {
    expect(await check(damageEntry(zeroEntries(600), "zeros/599.png", "crc"))).toEqual({ state: "ok", entries: 600 });
  });

  it("F18: up to ZIP_RATIO_FLOOR_BYTES every member is still checked (16 × 1 MiB of zeros, one damaged: corrupt)", async () => {
    expect(await check(damageEntry(zeroEntries(16), "zeros/15.png", "crc"))).toEqual({ state: "corrupt" });
    expect(await check(zeroEntries(16))).toEqual({ state: "ok", entries: 16 });
  });
});
