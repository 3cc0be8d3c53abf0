import type { Principal } from "../auth/principal.ts";
import type { Config } from "../config.ts";
import type { Prisma } from "../db/client.ts";
import { DomainError, badInput, notFound } from "../errors.ts";
import type { PubSub } from "../events/bus.ts";
import { MULTIMEDIA_PROGRESS, type MultimediaStatus } from "./job.events.ts";
import { newHexId } from "../util/ids.ts";
import { storable, type AppService, type MultimediaMap } from "../apps/app.service.ts";
import type { BlobStore } from "./blob-store.ts";
import { attemptKey, type JobQueue, type TaskAttempt } from "./job.queue.ts";
import { checkArchive, type ArchiveResult, type StoredMedia } from "./zip-processor.ts";

/**
 * Multimedia jobs (CONTRACT §4): an upload becomes a stored archive, a job row and a pg-boss job
 * (committed together) before the request returns. pg-boss hands each job to one worker and
 * retries it when that worker dies; the row records status and progress, and its locked_by names
 * the attempt allowed to write them, so a stale attempt can never overwrite a newer one.
 */

export interface JobRow {
  id: string;
  /** the attempt running it (see attemptKey): fences its writes */
  attempt: string;
  domainId: string;
  appId: string;
  status: string;
  archiveKey: string;
  current: number;
  total: number;
  result: unknown;
  errors: unknown;
  attempts: number;
  expiresAt: Date | null;
}

/** Another attempt owns the job now (this one's heartbeat went stale): this one stops, writing nothing. */
export class Superseded extends Error {
  constructor() {
    super("a later attempt owns this job");
  }
}

export class TaskFailed extends DomainError {
  constructor() {
    super("INTERNAL_SERVER_ERROR", "Multimedia processing task failed");
  }
}

/**
 * The result fields in the contract's order. The result is stored as jsonb, which keeps no key
 * order, so it is rebuilt key by key.
 */
function orderedResult(r: ArchiveResult) {
  const file = (f: ArchiveResult["matched_files"]["AppImage"][number]) => ({
    path: f.path,
    original_path: f.original_path,
    md5: f.md5,
    size: f.size,
    content_type: f.content_type,
  });
  const reasoned = (f: { path: string; reason: string }) => ({ path: f.path, reason: f.reason });
  return {
    matched_count: r.matched_count,
    unmatched_count: r.unmatched_count,
    total_files: r.total_files,
    processed_files: r.processed_files,
    image_count: r.image_count,
    audio_count: r.audio_count,
    video_count: r.video_count,
    matched_files: {
      AppImage: r.matched_files.AppImage.map(file),
      AppAudio: r.matched_files.AppAudio.map(file),
      AppVideo: r.matched_files.AppVideo.map(file),
    },
    unmatched_files: r.unmatched_files.map(reasoned),
    skipped_files: r.skipped_files.map(reasoned),
  };
}

/** The status record of CONTRACT §4, result fields only once complete. */
export function statusOf(job: Pick<JobRow, "id" | "status" | "current" | "total" | "result" | "errors">): MultimediaStatus {
  const complete = job.status === "complete";
  // floor(100·current/total); an empty archive is 100 once complete
  const percent = job.total === 0 ? (complete ? 100 : 0) : Math.floor((100 * job.current) / job.total);
  return {
    success: true,
    complete,
    in_queue: !complete,
    progress: { percent, current: job.current, total: job.total },
    errors: Array.isArray(job.errors) ? job.errors : [],
    processing_id: job.id,
    ...(complete ? orderedResult(job.result as ArchiveResult) : {}),
  };
}

export class MultimediaJobService {
  constructor(
    private readonly prisma: Prisma,
    private readonly blobs: BlobStore,
    private readonly pubsub: PubSub,
    private readonly apps: AppService,
    private readonly config: Config,
    private readonly queue: JobQueue,
  ) {}

  /** Validates and stores an uploaded archive and queues its job: the processing id. */
  async upload(principal: Principal, domainName: string, appId: string, file: { path: string } | undefined): Promise<string> {
    const domain = await this.apps.domain(principal, domainName);
    const app = await this.apps.app(domain, appId);
    if (!file) throw badInput("bulk_upload_file is required");
    const check = await checkArchive(file.path);
    if (check.state !== "ok") {
      throw badInput(check.state === "not-zip" ? "Uploaded file is not a valid ZIP file" : "ZIP file is corrupt");
    }
    const id = `dl-${newHexId()}`;
    const archiveKey = `archives/${id}`;
    await this.blobs.putFile(archiveKey, file.path);
    await this.prisma.$transaction(async (tx) => {
      await tx.multimediaJob.create({
        data: { id, domainId: domain.id, appId: app.id, archiveKey, total: check.entries, status: "queued" },
      });
      await this.queue.enqueue(id, tx);
    });
    return id;
  }

  async status(principal: Principal, domainName: string, appId: string, processingId: string): Promise<MultimediaStatus> {
    const domain = await this.apps.domain(principal, domainName);
    await this.apps.app(domain, appId);
    const job = await this.liveJob(processingId, { appId, domainId: domain.id });
    if (job.status === "failed") throw new TaskFailed();
    return statusOf(job);
  }

  /** The job status for GraphQL: any job of the domain, by id. */
  async statusById(principal: Principal, domainName: string, processingId: string): Promise<MultimediaStatus & { failed: boolean }> {
    const domain = await this.apps.domain(principal, domainName);
    const job = await this.liveJob(processingId, { domainId: domain.id });
    return { ...statusOf(job), failed: job.status === "failed" };
  }

  /** The job with this id within `scope`, unless it is unknown or past its lifetime (404). */
  private async liveJob(processingId: string, scope: { domainId: string; appId?: string }) {
    const job = storable(processingId)
      ? await this.prisma.multimediaJob.findFirst({ where: { id: processingId, ...scope } })
      : null;
    if (!job || (job.expiresAt && job.expiresAt.getTime() < Date.now())) throw notFound("Processing ID not found or expired");
    return job;
  }

  /**
   * Starts `attempt` on its job row: null when the job is already settled, or when a later attempt
   * has taken it over. The row's locked_by then fences every write of this attempt.
   */
  async begin(attempt: TaskAttempt): Promise<JobRow | null> {
    const key = attemptKey(attempt);
    const rows = await this.prisma.$queryRaw<
      { id: string; domain_id: string; app_id: string; status: string; archive_key: string; current: number; total: number; result: unknown; errors: unknown; attempts: number; expires_at: Date | null }[]
    >`
      UPDATE multimedia_jobs SET status = 'running', locked_by = ${key}, attempts = ${attempt.retryCount + 1},
             current = 0, started_at = COALESCE(started_at, now())
      WHERE id = ${attempt.data.processingId} AND status IN ('queued', 'running')
      RETURNING id, domain_id, app_id, status, archive_key, current, total, result, errors, attempts, expires_at`;
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      attempt: key,
      domainId: row.domain_id,
      appId: row.app_id,
      status: row.status,
      archiveKey: row.archive_key,
      current: row.current,
      total: row.total,
      result: row.result,
      errors: row.errors,
      attempts: row.attempts,
      expiresAt: row.expires_at,
    };
  }

  /**
   * The embedded database has one process: at start, whatever was running belongs to no one, so
   * its attempts are failed now (pg-boss retries them or gives them up) rather than when their
   * heartbeat goes stale.
   */
  async failOrphans(): Promise<void> {
    const running = await this.prisma.multimediaJob.findMany({ where: { status: "running" }, select: { lockedBy: true } });
    await this.queue.failAttempts(running.flatMap((job) => (job.lockedBy ? [job.lockedBy] : [])));
  }

  /** Persists and publishes progress; throws Superseded when another attempt owns the job now. */
  async progress(job: JobRow, current: number, total: number): Promise<void> {
    const updated = await this.prisma.$executeRaw`
      UPDATE multimedia_jobs SET current = ${current}, total = ${total}
      WHERE id = ${job.id} AND locked_by = ${job.attempt}`;
    if (updated === 0) throw new Superseded();
    this.publish({ ...job, status: "running", current, total });
  }

  /** Stores a matched file once per domain and content hash; returns its id. */
  async storeMedia(
    job: JobRow,
    file: { content: { buffer: Buffer } | { file: string }; sha256: string; md5: string; size: number; contentType: string; mediaClass: string },
  ): Promise<string> {
    const existing = await this.prisma.multimediaFile.findUnique({ where: { domainId_sha256: { domainId: job.domainId, sha256: file.sha256 } } });
    if (existing) return existing.id;
    const blobKey = `media/${file.sha256}`;
    if (!(await this.blobs.has(blobKey))) {
      if ("buffer" in file.content) await this.blobs.putBuffer(blobKey, file.content.buffer);
      else await this.blobs.putFile(blobKey, file.content.file);
    }
    try {
      const created = await this.prisma.multimediaFile.create({
        data: {
          domainId: job.domainId,
          sha256: file.sha256,
          md5: file.md5,
          size: BigInt(file.size),
          contentType: file.contentType,
          mediaClass: file.mediaClass,
          blobKey,
        },
      });
      return created.id;
    } catch (error) {
      if ((error as { code?: string }).code !== "P2002") throw error;
      const raced = await this.prisma.multimediaFile.findUniqueOrThrow({ where: { domainId_sha256: { domainId: job.domainId, sha256: file.sha256 } } });
      return raced.id;
    }
  }

  /** Maps the matched paths in the app and completes the job, in one transaction. */
  async complete(job: JobRow, result: ArchiveResult, stored: StoredMedia[]): Promise<void> {
    const expiresAt = new Date(Date.now() + this.config.multimediaJobTtlSeconds * 1000);
    const current = job.total;
    await this.prisma.$transaction(async (tx) => {
      const [app] = await tx.$queryRaw<{ multimedia_map: MultimediaMap }[]>`
        SELECT multimedia_map FROM apps WHERE id = ${job.appId} FOR UPDATE`;
      const map: MultimediaMap = { ...(app?.multimedia_map ?? {}) };
      for (const s of stored) {
        for (const key of Object.keys(map)) if (key.toLowerCase() === s.canonicalPath.toLowerCase()) delete map[key];
        map[s.canonicalPath] = { fileId: s.fileId, mediaType: s.mediaType, sha256: s.sha256 };
      }
      const settled = await tx.multimediaJob.updateMany({
        where: { id: job.id, lockedBy: job.attempt },
        data: { status: "complete", current, result: result as object, completedAt: new Date(), expiresAt, lockedBy: null },
      });
      if (settled.count === 0) throw new Superseded();
      if (app) await tx.app.update({ where: { id: job.appId }, data: { multimediaMap: map } });
    });
    await this.blobs.delete(job.archiveKey);
    this.publish({ ...job, status: "complete", current, result });
  }

  /** Fails the job for good (its archive cannot be processed); a no-op once another attempt owns it. */
  async fail(job: JobRow, reason: string): Promise<void> {
    await this.settleFailed({ id: job.id, lockedBy: job.attempt }, reason);
  }

  /** The job's attempts are used up (pg-boss's dead letter): it is failed unless already settled. */
  async giveUp(processingId: string): Promise<void> {
    await this.settleFailed({ id: processingId, status: { in: ["queued", "running"] } }, "The processing task crashed.");
  }

  private async settleFailed(where: { id: string; lockedBy?: string; status?: { in: string[] } }, reason: string): Promise<void> {
    const expiresAt = new Date(Date.now() + this.config.multimediaJobTtlSeconds * 1000);
    const job = await this.prisma.$transaction(async (tx) => {
      const settled = await tx.multimediaJob.updateMany({
        where,
        data: { status: "failed", errors: [reason], completedAt: new Date(), expiresAt, lockedBy: null },
      });
      return settled.count ? tx.multimediaJob.findUnique({ where: { id: where.id } }) : null;
    });
    if (!job) return;
    await this.blobs.delete(job.archiveKey);
    this.publish({ ...job, status: "failed", errors: [reason] });
  }

  /**
   * Gives a job back to the queue (shutdown) as a fresh job, so that a restart does not count as a
   * failed attempt: another process, or this one restarted, resumes it.
   */
  async requeue(job: JobRow): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const released = await tx.multimediaJob.updateMany({
        where: { id: job.id, lockedBy: job.attempt },
        data: { status: "queued", lockedBy: null, current: 0 },
      });
      if (released.count) await this.queue.enqueue(job.id, tx);
    });
  }

  private publish(job: Pick<JobRow, "id" | "status" | "current" | "total" | "result" | "errors">): void {
    this.pubsub.publish(MULTIMEDIA_PROGRESS, job.id, { ...statusOf(job), failed: job.status === "failed" });
  }

  /** Forgets jobs past their lifetime. */
  async purgeExpired(): Promise<void> {
    await this.prisma.multimediaJob.deleteMany({ where: { expiresAt: { lt: new Date() } } });
  }
}
