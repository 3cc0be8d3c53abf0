import { statfs } from "node:fs/promises";
import { DomainError } from "../errors.ts";

/**
 * What an upload may take of the machine (issue #24, G7): each archive is kept until its job has
 * run, and jobs run one at a time per worker, so without a bound one member could fill the disk (or,
 * on PostgreSQL, the database) with queued archives.
 *
 * - The archives of a domain's queued and running jobs together stay within
 *   MULTIMEDIA_QUEUE_LIMIT_BYTES (0: no bound): beyond it an upload is refused with 429 and
 *   Retry-After, as the room comes back once jobs run.
 * - An upload is spooled only while the spool's filesystem keeps UPLOAD_MIN_FREE_BYTES free after
 *   the bytes the request declares (its Content-Length, when it has one): else 507, before a byte is
 *   read.
 */

/** What a client refused for a full queue is asked to wait: about one job's run. */
const QUEUE_FULL_RETRY_SECONDS = 60;

const queueFullMessage = (limitBytes: number) =>
  `Multimedia archives waiting to be processed in this domain would exceed ${limitBytes} bytes. Retry once they are processed.`;

const LOW_DISK_MESSAGE = "Not enough free disk space to accept this upload. Retry later.";

/** 429 QUOTA_EXCEEDED when `queuedBytes` plus `incomingBytes` would pass the domain's bound. */
export function checkQueueRoom(queuedBytes: number, incomingBytes: number, limitBytes: number): void {
  if (limitBytes <= 0 || queuedBytes + incomingBytes <= limitBytes) return;
  throw new DomainError("QUOTA_EXCEEDED", queueFullMessage(limitBytes), {}, { "Retry-After": String(QUEUE_FULL_RETRY_SECONDS) });
}

/** 507 INSUFFICIENT_STORAGE unless `dir`'s filesystem keeps `minFreeBytes` free after `incomingBytes`. */
export async function checkFreeSpace(dir: string, incomingBytes: number, minFreeBytes: number): Promise<void> {
  const { bavail, bsize } = await statfs(dir);
  if (bavail * bsize - incomingBytes >= minFreeBytes) return;
  throw new DomainError("INSUFFICIENT_STORAGE", LOW_DISK_MESSAGE);
}
