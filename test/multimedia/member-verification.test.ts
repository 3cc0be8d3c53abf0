import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkArchive } from "../../src/multimedia/archive/zip-check.ts";
import { processArchive, UNREADABLE_ENTRY } from "../../src/multimedia/archive/zip-processor.ts";
import { damageEntry, entryLayout, png, zip } from "../helpers/archives.ts";

/**
 * One verification of a member held in memory (zip-entries.ts), for the upload check and the job
 * alike: a member inflating past the size it claims, or damaged, is corrupt at upload; in a job
 * (an archive damaged after its upload) it is listed unmatched, "larger than it claims" apart from
 * other damage, whether it is inflated on the spot (≤ 64 KiB compressed) or on the thread pool.
 */

const LIMITS = { maxEntryBytes: 512 * 1024 * 1024, maxTotalBytes: 8 * 1024 * 1024 * 1024, maxRatio: 1000, ratioFloorBytes: 16 * 1024 * 1024 };
const LARGER = "File is larger than it claims to be.";

let dir: string;
beforeAll(async () => void (dir = await mkdtemp(path.join(os.tmpdir(), "member-verification-"))));
afterAll(() => rm(dir, { recursive: true, force: true }));

async function fileOf(bytes: Buffer): Promise<string> {
  const file = path.join(dir, `archive-${Math.random().toString(36).slice(2)}.zip`);
  await writeFile(file, bytes);
  return file;
}

async function unmatchedOf(bytes: Buffer) {
  const file = await fileOf(bytes);
  const references = ["small.png", "mid.png", "after.png"].map((p) => ({ path: `jr://file/${p}`, mediaType: "image" as const }));
  const { result } = await processArchive(file, references, LIMITS, dir, {
    progress: async () => {},
    store: async () => "file-id",
    stopping: () => false,
  });
  return result.unmatched_files;
}

/** Claims `size` bytes uncompressed in the central directory. */
function claiming(archive: Buffer, name: string, size: number): Buffer {
  const copy = Buffer.from(archive);
  copy.writeUInt32LE(size, entryLayout(copy, name).central + 24);
  return copy;
}

describe("a small member is verified alike at upload and in the job: larger than it claims apart from other damage", () => {
  const small = Buffer.concat([png(1), Buffer.from("chunk ".repeat(400))]); // deflates far below 64 KiB
  const mid = Buffer.concat([png(2), randomBytes(200 * 1024)]); // over 64 KiB compressed, under 1 MiB
  const entries = () => [
    { name: "small.png", data: small, compress: true },
    { name: "mid.png", data: mid, compress: true },
    { name: "after.png", data: png(3) },
  ];

  it("inflating past the size it claims: corrupt at upload; 'File is larger than it claims to be.' in the job, both inflate paths", async () => {
    for (const name of ["small.png", "mid.png"]) {
      const archive = claiming(await zip(entries()), name, 100);
      expect(await checkArchive(await fileOf(archive), LIMITS), name).toEqual({ state: "corrupt" });
      expect(await unmatchedOf(archive), name).toEqual([{ path: name, reason: LARGER }]);
    }
  });

  it("a broken deflate stream or a wrong CRC-32: corrupt at upload; 'Error reading file' in the job, both inflate paths", async () => {
    for (const name of ["small.png", "mid.png"]) {
      for (const damage of ["data", "crc"] as const) {
        const archive = damageEntry(await zip(entries()), name, damage);
        expect(await checkArchive(await fileOf(archive), LIMITS), `${name} ${damage}`).toEqual({ state: "corrupt" });
        expect(await unmatchedOf(archive), `${name} ${damage}`).toEqual([{ path: name, reason: UNREADABLE_ENTRY }]);
      }
    }
  });

  it("an intact archive: ok at upload, every member matched in the job", async () => {
    const archive = await zip(entries());
    expect(await checkArchive(await fileOf(archive), LIMITS)).toEqual({ state: "ok", entries: 3 });
    expect(await unmatchedOf(archive)).toEqual([]);
  });
});
