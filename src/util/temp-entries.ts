import { createHash } from "node:crypto";
import { readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/**
 * The temporary entries under DATA_DIR/tmp (uploads being read, archives being processed, blobs
 * copied out of the database) carry the process that made them in their name, so that the ones a
 * killed process left behind can be told from those of a live one. On PostgreSQL several server
 * processes may share one DATA_DIR (the default `./data` of one working directory): an entry is
 * removed only when its owner is certainly gone.
 */

/** The kinds of temporary entries this service makes (the mkdtemp prefixes). */
export type TempKind = "upload" | "gql-upload" | "blob" | "archive";

/** Hosts (or containers) sharing DATA_DIR have separate process ids: the name says which host. */
const HOST_TAG = createHash("sha256").update(os.hostname()).digest("hex").slice(0, 8);

/** The mkdtemp prefix of an entry of this process: `upload-<pid>.<host>-` (mkdtemp adds 6 characters). */
export function tempPrefix(kind: TempKind): string {
  return `${kind}-${process.pid}.${HOST_TAG}-`;
}

const OWNED = /^(?:upload|gql-upload|blob|archive)-(\d+)\.([0-9a-f]{8})-[A-Za-z0-9]{6}$/;
/** Names made before entries carried their owner. */
const UNOWNED = /^(?:upload|gql-upload|blob|archive)-[A-Za-z0-9]{6}$/;

/**
 * An unowned entry is removed once nothing in it has changed for this long: an upload being
 * written or an archive being processed touches its entry far more often.
 */
export const UNOWNED_STALE_MS = 60 * 60 * 1000;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** The latest modification of an entry or of what it directly holds. */
async function lastTouched(entry: string): Promise<number> {
  const own = await stat(entry);
  if (!own.isDirectory()) return own.mtimeMs;
  const children = await readdir(entry).catch(() => []);
  const times = await Promise.all(
    children.map((child) =>
      stat(path.join(entry, child)).then(
        (s) => s.mtimeMs,
        () => 0,
      ),
    ),
  );
  return Math.max(own.mtimeMs, ...times);
}

/**
 * Whether an entry is safely stale at start-up: made on this host by a process that no longer
 * runs, or by this process id (a previous run: in a container every run may be pid 1, and this
 * run has made nothing yet); an entry of another host is left to that host. An entry without an
 * owner is stale once untouched for UNOWNED_STALE_MS.
 */
async function isStale(dir: string, name: string, now: number): Promise<boolean> {
  const owned = OWNED.exec(name);
  if (owned) {
    const pid = Number(owned[1]);
    return owned[2] === HOST_TAG && (pid === process.pid || !isRunning(pid));
  }
  if (UNOWNED.test(name)) return now - (await lastTouched(path.join(dir, name))) >= UNOWNED_STALE_MS;
  return false;
}

/**
 * Removes the temporary entries under `dir` that killed processes left behind; returns their
 * names. Run at start-up, before this process makes temporary entries of its own.
 */
export async function sweepStaleTempEntries(dir: string, now = Date.now()): Promise<string[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  const removed: string[] = [];
  for (const name of names) {
    // an entry removed meanwhile by its owner is not stale, merely gone
    const stale = await isStale(dir, name, now).catch(() => false);
    if (!stale) continue;
    await rm(path.join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
