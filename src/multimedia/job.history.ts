/**
 * A domain's multimedia job history, newest first (CONTRACT §7.4), read as slices of a keyset
 * (created_at to the microsecond, then id) so that any page is one index range whatever its depth.
 * The statements are job.repository.ts's; the GraphQL face pages the slices with the shared
 * connection helper (src/graphql/connection.ts).
 */
import type { JobState, MultimediaStatus } from "./job.events.ts";
import type { HistoryPosition, HistoryScope, JobRepository } from "./job.repository.ts";
import { statusOf } from "./job.status.ts";

export interface JobHistoryFilter {
  appId?: string;
  states?: JobState[];
}

/** Where a job stands in the history: its creation time in microseconds since the epoch, and its id. */
export type JobPosition = HistoryPosition;

/** A window of the history: up to `size` jobs strictly between `after` and `before`, from the newest end or (`backward`) the oldest. */
export interface JobSlice {
  size: number;
  backward: boolean;
  after?: JobPosition;
  before?: JobPosition;
}

export interface HistoryJob {
  status: MultimediaStatus;
  position: JobPosition;
}

export interface JobHistoryRead {
  /** up to size + 1 jobs, in reading order (newest first; oldest first when backward) */
  rows: HistoryJob[];
  /** whether jobs lie at or before `after`, and at or after `before` */
  outside: { beforeAfter: boolean; afterBefore: boolean };
  /** every job the filter matches */
  total: number;
}

/** A position as a cursor gave it, or undefined when it is not one. */
export function positionOf(parts: readonly string[]): JobPosition | undefined {
  const [createdUs, id] = parts;
  return parts.length === 2 && /^\d{1,20}$/.test(createdUs!) && id!.length > 0 && id!.length <= 200 ? { createdUs: createdUs!, id: id! } : undefined;
}

/**
 * A slice of the domain's jobs created since `since`, newest first: `after` an edge means older
 * than it, `before` an edge newer than it.
 */
export async function historySlice(
  repository: JobRepository,
  filter: JobHistoryFilter & { domainId: string; since: Date },
  slice: JobSlice,
): Promise<JobHistoryRead> {
  const scope: HistoryScope = {
    domainId: filter.domainId,
    since: filter.since,
    appId: filter.appId ?? null,
    states: filter.states ? [...new Set(filter.states)].join(",") : null,
  };
  const [rows, beforeAfter, afterBefore, total] = await Promise.all([
    slice.size === 0 ? Promise.resolve([]) : repository.historyRows(scope, slice.after, slice.before, !slice.backward, slice.size + 1),
    slice.after ? repository.historyReaches(scope, slice.after, true) : false,
    slice.before ? repository.historyReaches(scope, slice.before, false) : false,
    repository.historyCount(scope),
  ]);
  return {
    rows: rows.map(({ job, position }) => ({ status: statusOf(job), position })),
    outside: { beforeAfter, afterBefore },
    total,
  };
}
