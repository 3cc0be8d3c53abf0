/**
 * The multimedia tables (multimedia_jobs, multimedia_files): every statement the feature makes on
 * them, the attempt-fenced writes of the worker (`locked_by`) and the history's keyset reads
 * included. Faces and the worker reach them only through job.service.ts and job.attempt.ts.
 *
 * Fenced writes that change what a subscriber sees answer with the row as the write left it
 * (`UPDATE … RETURNING`), so that the event is published from that row instead of a second read.
 */
import type { Prisma } from "../db/client.ts";
import { Prisma as PrismaSql, type MultimediaFile, type MultimediaJob } from "../generated/prisma/client.ts";
import type { Transaction } from "../apps/app.repository.ts";

const { raw, sql, empty } = PrismaSql;

/** A multimedia_jobs row. */
export type JobRecord = MultimediaJob;

/** A stored file's row. */
export type FileRecord = MultimediaFile;

/** What a new job row is made of (the upload's transaction). */
export interface NewJob {
  id: string;
  domainId: string;
  appId: string;
  archiveKey: string;
  total: number;
  uploadedBy: string;
  fileName: string | null;
  sizeBytes: number;
}

/** What a new stored file row is made of. */
export interface NewFile {
  domainId: string;
  sha256: string;
  md5: string;
  size: number;
  contentType: string;
  mediaClass: string;
  blobKey: string;
}

/** A job row's key: its processing id and its domain. */
export interface JobKey {
  id: string;
  domainId: string;
}

/**
 * Which job rows a settling write may change: the attempt's own (fenced), or any not yet settled
 * (the dead letter of a job queued before its payload carried the domain names it by id alone).
 */
export type SettleWhere = (JobKey & { lockedBy: string }) | { id: string; domainId?: string; unsettled: true };

/** The history's filter as statement parameters: an absent filter is a null parameter, so that one statement serves every combination. */
export interface HistoryScope {
  domainId: string;
  since: Date;
  appId: string | null;
  /** the states, comma-separated */
  states: string | null;
}

/** Where a job stands in the history: its creation time in microseconds since the epoch, and its id. */
export interface HistoryPosition {
  createdUs: string;
  id: string;
}

type RawJob = {
  id: string;
  domain_id: string;
  app_id: string;
  status: string;
  archive_key: string;
  current: number;
  total: number;
  result: JobRecord["result"];
  errors: JobRecord["errors"];
  attempts: number;
  uploaded_by: string | null;
  file_name: string | null;
  size_bytes: bigint | number | null;
  locked_by: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  expires_at: Date | null;
};

/** A row of a raw statement, as Prisma's client reads the same row. */
function recordOf(r: RawJob): JobRecord {
  return {
    id: r.id,
    domainId: r.domain_id,
    appId: r.app_id,
    status: r.status,
    archiveKey: r.archive_key,
    current: r.current,
    total: r.total,
    result: r.result,
    errors: r.errors,
    attempts: r.attempts,
    uploadedBy: r.uploaded_by,
    fileName: r.file_name,
    sizeBytes: r.size_bytes === null ? null : BigInt(r.size_bytes),
    lockedBy: r.locked_by,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    expiresAt: r.expires_at,
  };
}

const UNSETTLED = ["queued", "running"];

export class JobRepository {
  constructor(private readonly prisma: Prisma) {}

  transaction<T>(run: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(run);
  }

  // ---------------------------------------------------------------- the faces' reads and the upload

  /** Holds the domain's queue lock until `tx` ends: concurrent uploads are counted one after another. */
  async lockQueue(tx: Transaction, domainId: string): Promise<void> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`multimedia-queue:${domainId}`}, 0))`;
  }

  /** The archives of the domain's jobs not yet settled (queued or running), in bytes. */
  async queuedBytes(domainId: string, tx?: Transaction): Promise<number> {
    const db = tx ?? this.prisma;
    const { _sum } = await db.multimediaJob.aggregate({ where: { domainId, status: { in: UNSETTLED } }, _sum: { sizeBytes: true } });
    return Number(_sum.sizeBytes ?? 0);
  }

  /** A new queued job. */
  create(tx: Transaction, job: NewJob): Promise<JobRecord> {
    const { sizeBytes, ...columns } = job;
    return tx.multimediaJob.create({ data: { ...columns, status: "queued", sizeBytes: BigInt(sizeBytes) } });
  }

  /** The job with this id in the domain (of the app, when named; created since `since`, when given). */
  find(where: { id: string; domainId: string; appId?: string; since?: Date }): Promise<JobRecord | null> {
    const { since, ...columns } = where;
    return this.prisma.multimediaJob.findFirst({ where: { ...columns, ...(since ? { createdAt: { gte: since } } : {}) } });
  }

  /** The domain's stored files with these ids, in one query. */
  files(domainId: string, fileIds: readonly string[]): Promise<FileRecord[]> {
    return this.prisma.multimediaFile.findMany({ where: { id: { in: [...fileIds] }, domainId } });
  }

  /** The domain's stored file with this id, or null. */
  file(domainId: string, fileId: string): Promise<FileRecord | null> {
    return this.prisma.multimediaFile.findFirst({ where: { id: fileId, domainId } });
  }

  /** Forgets the settled jobs created before `before`. */
  async purgeSettled(before: Date): Promise<void> {
    await this.prisma.multimediaJob.deleteMany({ where: { createdAt: { lt: before }, status: { in: ["complete", "failed"] } } });
  }

  // ---------------------------------------------------------------- the worker's fenced writes
  //
  // Each statement names the job by its key, id and domain: on a cluster sharded by domain_id it
  // goes to one shard. Only `begin` may lack the domain (a job queued before its payload carried it).

  /**
   * Takes the job for the attempt `lockedBy` (its `attempts`-th): the row as it is now running, or
   * null when the job is settled already.
   */
  async begin(job: { id: string; domainId?: string }, lockedBy: string, attempts: number): Promise<JobRecord | null> {
    const inDomain = job.domainId === undefined ? empty : sql`AND domain_id = ${job.domainId}::uuid`;
    const rows = await this.prisma.$queryRaw<RawJob[]>`
      UPDATE multimedia_jobs SET status = 'running', locked_by = ${lockedBy}, attempts = ${attempts},
             current = 0, started_at = COALESCE(started_at, now())
      WHERE id = ${job.id} ${inDomain} AND status IN ('queued', 'running')
      RETURNING *`;
    return rows[0] ? recordOf(rows[0]) : null;
  }

  /** Records the attempt's progress: the row as it is now, or null when another attempt owns the job. */
  async progress(job: JobKey, lockedBy: string, current: number, total: number): Promise<JobRecord | null> {
    const rows = await this.prisma.$queryRaw<RawJob[]>`
      UPDATE multimedia_jobs SET current = ${current}, total = ${total}
      WHERE id = ${job.id} AND domain_id = ${job.domainId}::uuid AND locked_by = ${lockedBy} RETURNING *`;
    return rows[0] ? recordOf(rows[0]) : null;
  }

  /** The job as it is now, or null when it is gone. */
  current(job: JobKey): Promise<JobRecord | null> {
    return this.prisma.multimediaJob.findUnique({ where: { id_domainId: job } });
  }

  /**
   * The attempts that hold a running job, in every domain: the embedded database's start (one
   * process, one node), so the one statement here that reads all domains.
   */
  async runningLocks(): Promise<string[]> {
    const running = await this.prisma.multimediaJob.findMany({ where: { status: "running" }, select: { lockedBy: true } });
    return running.flatMap((job) => (job.lockedBy ? [job.lockedBy] : []));
  }

  /** The domain's file with this content hash, if stored. */
  async fileIdBySha(domainId: string, sha256: string): Promise<string | undefined> {
    const found = await this.prisma.multimediaFile.findUnique({ where: { domainId_sha256: { domainId, sha256 } }, select: { id: true } });
    return found?.id;
  }

  /** Stores a file's row once per domain and content hash (a concurrent store of the same content wins the race): its id. */
  async createFile(file: NewFile): Promise<string> {
    try {
      const created = await this.prisma.multimediaFile.create({ data: { ...file, size: BigInt(file.size) } });
      return created.id;
    } catch (error) {
      if ((error as { code?: string }).code !== "P2002") throw error;
      const raced = await this.prisma.multimediaFile.findUniqueOrThrow({
        where: { domainId_sha256: { domainId: file.domainId, sha256: file.sha256 } },
      });
      return raced.id;
    }
  }

  /** Completes the attempt's job within `tx`: the settled row, or null when another attempt owns it. */
  async complete(
    tx: Transaction,
    job: JobKey,
    lockedBy: string,
    done: { current: number; result: object; completedAt: Date; expiresAt: Date },
  ): Promise<JobRecord | null> {
    const settled = await tx.multimediaJob.updateMany({ where: { ...job, lockedBy }, data: { status: "complete", ...done, lockedBy: null } });
    return settled.count ? tx.multimediaJob.findUniqueOrThrow({ where: { id_domainId: job } }) : null;
  }

  /** Fails the job (`where`): the settled row, or null when it did not match. */
  fail(where: SettleWhere, failed: { errors: string[]; completedAt: Date; expiresAt: Date }): Promise<JobRecord | null> {
    const key = { id: where.id, ...(where.domainId === undefined ? {} : { domainId: where.domainId }) };
    const match = "lockedBy" in where ? { ...key, lockedBy: where.lockedBy } : { ...key, status: { in: UNSETTLED } };
    return this.prisma.$transaction(async (tx) => {
      const settled = await tx.multimediaJob.updateMany({ where: match, data: { status: "failed", ...failed, lockedBy: null } });
      return settled.count ? tx.multimediaJob.findFirst({ where: key }) : null;
    });
  }

  /** Gives the attempt's job back to the queue within `tx`: the queued row, or null when another attempt owns it. */
  async release(tx: Transaction, job: JobKey, lockedBy: string): Promise<JobRecord | null> {
    const updated = await tx.multimediaJob.updateMany({ where: { ...job, lockedBy }, data: { status: "queued", lockedBy: null, current: 0 } });
    return updated.count ? tx.multimediaJob.findUnique({ where: { id_domainId: job } }) : null;
  }

  // ---------------------------------------------------------------- the history (CONTRACT §7.4)

  /**
   * The jobs of `s` strictly older than `older` and newer than `newer` (each optional), newest
   * first or oldest first, at most `limit`: each with its position.
   */
  async historyRows(
    s: HistoryScope,
    older: HistoryPosition | undefined,
    newer: HistoryPosition | undefined,
    newestFirst: boolean,
    limit: number,
  ): Promise<{ job: JobRecord; position: HistoryPosition }[]> {
    const [olderUs, olderId, newerUs, newerId] = [older?.createdUs ?? null, older?.id ?? null, newer?.createdUs ?? null, newer?.id ?? null];
    const direction = raw(newestFirst ? "DESC" : "ASC");
    const rows = await this.prisma.$queryRaw<(RawJob & { created_us: string })[]>`
      SELECT *, (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us FROM multimedia_jobs
      WHERE domain_id = ${s.domainId}::uuid AND created_at >= ${s.since}
        AND (${s.appId}::text IS NULL OR app_id = ${s.appId}::text)
        AND (${s.states}::text IS NULL OR status = ANY (string_to_array(${s.states}::text, ',')))
        AND (${olderUs}::bigint IS NULL OR (created_at, id) < (timestamptz 'epoch' + ${olderUs}::bigint * interval '1 microsecond', ${olderId}::text))
        AND (${newerUs}::bigint IS NULL OR (created_at, id) > (timestamptz 'epoch' + ${newerUs}::bigint * interval '1 microsecond', ${newerId}::text))
      ORDER BY created_at ${direction}, id ${direction} LIMIT ${limit}`;
    return rows.map((r) => ({ job: recordOf(r), position: { createdUs: r.created_us, id: r.id } }));
  }

  /** Whether a job of `s` is at `at` or beyond it: newer (`newer`) or older. */
  async historyReaches(s: HistoryScope, at: HistoryPosition, newer: boolean): Promise<boolean> {
    const found = newer
      ? await this.prisma.$queryRaw<{ found: boolean }[]>`
          SELECT EXISTS (SELECT 1 FROM multimedia_jobs
            WHERE domain_id = ${s.domainId}::uuid AND created_at >= ${s.since}
              AND (${s.appId}::text IS NULL OR app_id = ${s.appId}::text)
              AND (${s.states}::text IS NULL OR status = ANY (string_to_array(${s.states}::text, ',')))
              AND (created_at, id) >= (timestamptz 'epoch' + ${at.createdUs}::bigint * interval '1 microsecond', ${at.id}::text)) AS found`
      : await this.prisma.$queryRaw<{ found: boolean }[]>`
          SELECT EXISTS (SELECT 1 FROM multimedia_jobs
            WHERE domain_id = ${s.domainId}::uuid AND created_at >= ${s.since}
              AND (${s.appId}::text IS NULL OR app_id = ${s.appId}::text)
              AND (${s.states}::text IS NULL OR status = ANY (string_to_array(${s.states}::text, ',')))
              AND (created_at, id) <= (timestamptz 'epoch' + ${at.createdUs}::bigint * interval '1 microsecond', ${at.id}::text)) AS found`;
    return Boolean(found[0]?.found);
  }

  /** Every job of `s`. */
  historyCount(s: HistoryScope): Promise<number> {
    return this.prisma.multimediaJob.count({
      where: {
        domainId: s.domainId,
        createdAt: { gte: s.since },
        ...(s.appId !== null ? { appId: s.appId } : {}),
        ...(s.states !== null ? { status: { in: s.states.split(",") } } : {}),
      },
    });
  }
}
