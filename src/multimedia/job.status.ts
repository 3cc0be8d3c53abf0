import type { ArchiveResult } from "./archive/archive-result.ts";
import type { JobState, MultimediaStatus } from "./job.events.ts";
import type { JobRecord } from "./job.repository.ts";

/** A multimedia_jobs row, as Prisma reads it (the columns a status is made of). */
export type StatusRow = Pick<
  JobRecord,
  | "id"
  | "domainId"
  | "appId"
  | "status"
  | "current"
  | "total"
  | "result"
  | "errors"
  | "uploadedBy"
  | "fileName"
  | "sizeBytes"
  | "createdAt"
  | "startedAt"
  | "completedAt"
  | "attempts"
>;

/** A job row's status as the domain knows it. */
export function statusOf(job: StatusRow): MultimediaStatus {
  const state = job.status as JobState;
  return {
    id: job.id,
    domainId: job.domainId,
    appId: job.appId,
    state,
    current: job.current,
    total: job.total,
    result: state === "complete" ? (job.result as unknown as ArchiveResult) : null,
    errors: (Array.isArray(job.errors) ? job.errors : []) as string[],
    uploadedBy: job.uploadedBy,
    fileName: job.fileName,
    sizeBytes: job.sizeBytes === null ? null : Number(job.sizeBytes),
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.completedAt,
    attempts: job.attempts,
  };
}
