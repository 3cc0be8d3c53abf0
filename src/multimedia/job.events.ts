import type { ArchiveResult } from "./archive-result.ts";

/** The event a multimedia job publishes on every progress change and when it settles (CONTRACT §5). */

export const MULTIMEDIA_PROGRESS = "multimediaProgress" as const;

export type JobState = "queued" | "running" | "complete" | "failed";

/** A job's status as the domain knows it; each face makes its own wire format of it. */
export interface MultimediaStatus {
  /** the processing id */
  id: string;
  state: JobState;
  /** entries done */
  current: number;
  /** entries in the archive */
  total: number;
  /** once complete */
  result: ArchiveResult | null;
  /** why it failed */
  errors: string[];
}

/** floor(100·current/total); an empty archive is 100 once complete (CONTRACT §4 "Processing"). */
export function progressPercent(status: Pick<MultimediaStatus, "state" | "current" | "total">): number {
  if (status.total === 0) return status.state === "complete" ? 100 : 0;
  return Math.floor((100 * status.current) / status.total);
}
