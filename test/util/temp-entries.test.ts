import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sweepStaleTempEntries, tempPrefix, UNOWNED_STALE_MS } from "../../src/util/temp-entries.ts";

/**
 * Issue #12 F17: the temporary entries a killed process left in DATA_DIR/tmp are swept at
 * start-up, and only those: on PostgreSQL several processes may share one DATA_DIR.
 */

let dir: string;
beforeEach(async () => void (dir = await mkdtemp(path.join(os.tmpdir(), "temp-entries-"))));
afterEach(() => rm(dir, { recursive: true, force: true }));

/** The id of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid!;
}

const hostTag = () => tempPrefix("upload").split("-")[1].split(".")[1];

async function entry(name: string, options: { ageMs?: number } = {}): Promise<string> {
  const at = path.join(dir, name);
  await mkdir(at);
  await writeFile(path.join(at, "0-bulk_upload_file"), "partial upload");
  if (options.ageMs) {
    const then = new Date(Date.now() - options.ageMs);
    await utimes(path.join(at, "0-bulk_upload_file"), then, then);
    await utimes(at, then, then);
  }
  return name;
}

describe("sweepStaleTempEntries", () => {
  it("F17: entries of processes that no longer run, and of this pid's previous run, are removed; live ones stay", async () => {
    const dead = await deadPid();
    const host = hostTag();
    const otherHost = host === "00000000" ? "11111111" : "00000000";
    const stale = [
      await entry(`upload-${dead}.${host}-aB3dE6`),
      await entry(`archive-${dead}.${host}-Zz9Yy8`),
      await entry(`gql-upload-${dead}.${host}-q1w2e3`),
      await entry(`blob-${dead}.${host}-r4t5y6`),
      // at start-up this pid has made nothing yet: an entry with it is a previous run's (pid 1 in a container)
      await entry(`upload-${process.pid}.${host}-own123`),
    ];
    const live = [
      // the parent of this test process runs: its entry may be an upload in progress
      await entry(`upload-${process.ppid}.${host}-live12`),
      // another host's (or container's) pids mean nothing here
      await entry(`upload-${dead}.${otherHost}-other1`),
      await entry("notes-kept-by-someone"),
    ];
    const removed = await sweepStaleTempEntries(dir);
    expect(removed.sort()).toEqual([...stale].sort());
    expect((await readdir(dir)).sort()).toEqual([...live].sort());
  });

  it("F17: entries without an owner in their name (made before this version) are removed once untouched for an hour", async () => {
    const old = await entry("upload-AbC123", { ageMs: UNOWNED_STALE_MS + 60_000 });
    const oldArchive = await entry("archive-XyZ789", { ageMs: 2 * UNOWNED_STALE_MS });
    const recent = await entry("upload-DeF456", { ageMs: 60_000 });
    expect((await sweepStaleTempEntries(dir)).sort()).toEqual([old, oldArchive].sort());
    expect(await readdir(dir)).toEqual([recent]);
  });

  it("F17: a missing temp dir is nothing to sweep", async () => {
    expect(await sweepStaleTempEntries(path.join(dir, "absent"))).toEqual([]);
  });

  it("F17: the entries this process makes carry its pid and host", async () => {
    const mine = await mkdtemp(path.join(dir, tempPrefix("archive")));
    expect(path.basename(mine)).toMatch(new RegExp(`^archive-${process.pid}\\.[0-9a-f]{8}-[A-Za-z0-9]{6}$`));
  });
});
