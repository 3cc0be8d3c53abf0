import { open } from "node:fs/promises";
import type yauzl from "yauzl";
import { openZip, type ZipLimits } from "./zip-entries.ts";

/**
 * The upload-time validation of a multimedia archive (CONTRACT §4 "POST {app_id}/multimedia/"):
 * not a ZIP (its first bytes), or corrupt (a central directory that does not read).
 */

export type ArchiveCheck = { state: "ok"; entries: number } | { state: "not-zip" } | { state: "corrupt" };

async function startsLikeZip(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  const head = Buffer.alloc(4);
  try {
    await handle.read(head, 0, 4, 0);
  } finally {
    await handle.close();
  }
  const magic = head.toString("latin1");
  return magic === "PK\x03\x04" || magic === "PK\x05\x06" || magic === "PK\x07\x08";
}

/** Checks that a file is a ZIP whose central directory reads. */
export async function checkArchive(file: string, _limits: ZipLimits): Promise<ArchiveCheck> {
  if (!(await startsLikeZip(file))) return { state: "not-zip" };
  try {
    const zip: yauzl.ZipFile = await openZip(file);
    await new Promise<void>((resolve, reject) => {
      zip.on("entry", () => zip.readEntry());
      zip.on("end", resolve);
      zip.on("error", reject);
      zip.readEntry();
    });
    return { state: "ok", entries: zip.entryCount };
  } catch {
    return { state: "corrupt" };
  }
}
