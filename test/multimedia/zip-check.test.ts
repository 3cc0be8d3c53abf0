import { randomBytes } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkArchive } from "../../src/multimedia/zip-check.ts";
import { damageEntry, entryLayout, png, zip } from "../helpers/archives.ts";

/**
 * The upload-time check (CONTRACT §4 "POST {app_id}/multimedia/", corrupt → 400) on its own: it
 * reads the archive in windows, so damage is found wherever it lies, across window boundaries too,
 * and it leaves no file open whatever it answers.
 */

const LIMITS = { maxEntryBytes: 512 * 1024 * 1024, maxTotalBytes: 8 * 1024 * 1024 * 1024, maxRatio: 100 };
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
});
