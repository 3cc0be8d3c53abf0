import type { Prisma } from "../db/client.ts";
import { Prisma as PrismaSql } from "../generated/prisma/client.ts";
import type { JobState, MultimediaStatus } from "./job.events.ts";
import { statusOf, type StatusRow } from "./job.status.ts";

const { raw } = PrismaSql;

/**
 * A domain's multimedia job history, newest first (CONTRACT §7.4), read as slices of a keyset
 * (created_at to the microsecond, then id) so that any page is one index range whatever its depth.
 * The GraphQL face pages it with the shared connection helper (src/graphql/connection.ts).
 */

export interface JobHistoryFilter {
  appId?: string;
  states?: JobState[];
}

/** Where a job stands in the history: its creation time in microseconds since the epoch, and its id. */
export interface JobPosition {
  createdUs: string;
  id: string;
}

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

type RawRow = {
  id: string;
  domain_id: string;
  app_id: string;
  status: string;
  current: number;
  total: number;
  result: StatusRow["result"];
  errors: StatusRow["errors"];
  uploaded_by: string | null;
  file_name: string | null;
  size_bytes: bigint | number | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  attempts: number;
  created_us: string;
};

const fromRaw = (r: RawRow): HistoryJob => ({
  status: statusOf({
    id: r.id,
    domainId: r.domain_id,
    appId: r.app_id,
    status: r.status,
    current: r.current,
    total: r.total,
    result: r.result,
    errors: r.errors,
    uploadedBy: r.uploaded_by,
    fileName: r.file_name,
    sizeBytes: r.size_bytes === null ? null : BigInt(r.size_bytes),
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    attempts: r.attempts,
  }),
  position: { createdUs: r.created_us, id: r.id },
});

/** The history's filter as statement parameters: an absent filter is a null parameter, so that one statement serves every combination. */
interface Scope {
  domainId: string;
  since: Date;
  appId: string | null;
  states: string | null;
}

/**
 * The jobs of `scope` strictly older than `older` and newer than `newer` (each optional), newest
 * first or oldest first, at most `limit`.
 */
async function read(prisma: Prisma, s: Scope, older: JobPosition | undefined, newer: JobPosition | undefined, newestFirst: boolean, limit: number) {
  const [olderUs, olderId, newerUs, newerId] = [older?.createdUs ?? null, older?.id ?? null, newer?.createdUs ?? null, newer?.id ?? null];
  const direction = raw(newestFirst ? "DESC" : "ASC");
  const rows = await prisma.$queryRaw<RawRow[]>`
    SELECT *, (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us FROM multimedia_jobs
    WHERE domain_id = ${s.domainId}::uuid AND created_at >= ${s.since}
      AND (${s.appId}::text IS NULL OR app_id = ${s.appId}::text)
      AND (${s.states}::text IS NULL OR status = ANY (string_to_array(${s.states}::text, ',')))
      AND (${olderUs}::bigint IS NULL OR (created_at, id) < (timestamptz 'epoch' + ${olderUs}::bigint * interval '1 microsecond', ${olderId}::text))
      AND (${newerUs}::bigint IS NULL OR (created_at, id) > (timestamptz 'epoch' + ${newerUs}::bigint * interval '1 microsecond', ${newerId}::text))
    ORDER BY created_at ${direction}, id ${direction} LIMIT ${limit}`;
  return rows.map(fromRaw);
}

/** Whether a job of `scope` is at `at` or beyond it: newer (`newer`) or older. */
async function anyAtOrBeyond(prisma: Prisma, s: Scope, at: JobPosition, newer: boolean): Promise<boolean> {
  const found = newer
    ? await prisma.$queryRaw<{ found: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM multimedia_jobs
          WHERE domain_id = ${s.domainId}::uuid AND created_at >= ${s.since}
            AND (${s.appId}::text IS NULL OR app_id = ${s.appId}::text)
            AND (${s.states}::text IS NULL OR status = ANY (string_to_array(${s.states}::text, ',')))
            AND (created_at, id) >= (timestamptz 'epoch' + ${at.createdUs}::bigint * interval '1 microsecond', ${at.id}::text)) AS found`
    : await prisma.$queryRaw<{ found: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM multimedia_jobs
          WHERE domain_id = ${s.domainId}::uuid AND created_at >= ${s.since}
            AND (${s.appId}::text IS NULL OR app_id = ${s.appId}::text)
            AND (${s.states}::text IS NULL OR status = ANY (string_to_array(${s.states}::text, ',')))
            AND (created_at, id) <= (timestamptz 'epoch' + ${at.createdUs}::bigint * interval '1 microsecond', ${at.id}::text)) AS found`;
  return Boolean(found[0]?.found);
}

/**
 * A slice of the domain's jobs created since `since`, newest first: `after` an edge means older
 * than it, `before` an edge newer than it.
 */
export async function historySlice(
  prisma: Prisma,
  filter: JobHistoryFilter & { domainId: string; since: Date },
  slice: JobSlice,
): Promise<JobHistoryRead> {
  const scope: Scope = {
    domainId: filter.domainId,
    since: filter.since,
    appId: filter.appId ?? null,
    states: filter.states ? [...new Set(filter.states)].join(",") : null,
  };
  const [rows, beforeAfter, afterBefore, total] = await Promise.all([
    slice.size === 0 ? Promise.resolve([]) : read(prisma, scope, slice.after, slice.before, !slice.backward, slice.size + 1),
    slice.after ? anyAtOrBeyond(prisma, scope, slice.after, true) : false,
    slice.before ? anyAtOrBeyond(prisma, scope, slice.before, false) : false,
    prisma.multimediaJob.count({
      where: {
        domainId: filter.domainId,
        createdAt: { gte: filter.since },
        ...(filter.appId !== undefined ? { appId: filter.appId } : {}),
        ...(filter.states ? { status: { in: filter.states } } : {}),
      },
    }),
  ]);
  return { rows, outside: { beforeAfter, afterBefore }, total };
}
