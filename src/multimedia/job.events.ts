import type { ArchiveResult } from "./archive/archive-result.ts";

/**
 * The event a multimedia job publishes when it is queued, on every state change, on progress and
 * when it settles (CONTRACT §5, §7.4), on the topic of its domain: a job's own feed and the
 * domain's dashboard feed both read it.
 */

export const MULTIMEDIA_PROGRESS = "multimediaProgress" as const;

const JOB_STATES = ["queued", "running", "complete", "failed"] as const;
export type JobState = (typeof JOB_STATES)[number];

/** A job's status as the domain knows it; each face makes its own wire format of it. */
export interface MultimediaStatus {
  /** the processing id */
  id: string;
  domainId: string;
  appId: string;
  state: JobState;
  /** entries done */
  current: number;
  /** entries in the archive */
  total: number;
  /** once complete */
  result: ArchiveResult | null;
  /** why it failed */
  errors: string[];
  /** the username of who uploaded the archive (null for jobs from before it was recorded) */
  uploadedBy: string | null;
  /** the archive's file name as uploaded */
  fileName: string | null;
  /** the archive's size in bytes */
  sizeBytes: number | null;
  /** Dates in process; ISO strings once an event went through the PostgreSQL bus (JSON) */
  createdAt: Date | string;
  startedAt: Date | string | null;
  finishedAt: Date | string | null;
  /** attempts started so far (1 = the first) */
  attempts: number;
}

export const isSettled = (state: JobState) => state === "complete" || state === "failed";

/** floor(100·current/total); an empty archive is 100 once complete (CONTRACT §4 "Processing"). */
export function progressPercent(status: Pick<MultimediaStatus, "state" | "current" | "total">): number {
  if (status.total === 0) return status.state === "complete" ? 100 : 0;
  return Math.floor((100 * status.current) / status.total);
}

declare module "../events/bus.ts" {
  interface TopicRegistry {
    /** keyed by domain id: a job's own feed and its domain's dashboards read the same events */
    multimediaProgress: [string, MultimediaStatus];
  }
}
