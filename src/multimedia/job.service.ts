import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import type { Principal } from "../auth/principal.ts";
import type { DomainRef } from "../auth/permissions.ts";
import type { Config } from "../config.ts";
import type { Prisma } from "../db/client.ts";
import { badInput, notFound } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { MultimediaFile, MultimediaJob as MultimediaJobRow } from "../generated/prisma/client.ts";
import { newHexId } from "../util/ids.ts";
import { isStorableText } from "../util/text.ts";
import { log } from "../log.ts";
import { mappedFile, type AppRecord, type AppService } from "../apps/app.service.ts";
import type { ArchiveResult, StoredMedia } from "./archive/archive-result.ts";
import type { BlobStore } from "./blob-store.ts";
import { MULTIMEDIA_PROGRESS, type MultimediaStatus } from "./job.events.ts";
import { attemptKey, type JobQueue, type TaskAttempt } from "./job.queue.ts";
import { historySlice, type JobHistoryFilter, type JobHistoryRead, type JobSlice } from "./job.history.ts";
import { RateWindow } from "./rate-window.ts";
import { statusOf, type StatusRow } from "./job.status.ts";
import { checkFreeSpace, checkQueueRoom } from "./upload.rules.ts";
import { checkArchive } from "./archive/zip-check.ts";
import type { ZipLimits } from "./archive/zip-entries.ts";

/**
 * Multimedia jobs (CONTRACT §4): an upload becomes a stored archive, a job row and a pg-boss job
 * (committed together) before the request returns. pg-boss hands each job to one worker and
 * retries it when that worker dies; the row records status and progress, and its locked_by names
 * the attempt allowed to write them, so a stale attempt can never overwrite a newer one.
 *
 * Scope first: `in(principal, domain)` answers 401/403/404, then `scope.app(appId)` the app's 404,
 * before the upload is read; upload, status and file are methods of that app scope. Statuses are
 * domain values (job.events.ts); the REST body is made by job.serializer.ts.
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

/** An archive as the upload received it, on disk. */
export interface UploadedArchive {
  path: string;
  /** the file name the client gave it */
  filename?: string;
  size?: number;
}

/** A stored multimedia file: its content, kept once per domain and content hash. */
export interface MediaFile {
  id: string;
  sha256: string;
  md5: string;
  size: number;
  contentType: string;
  /** AppImage | AppAudio | AppVideo */
  mediaClass: string;
}

function mediaFileOf(row: MultimediaFile): MediaFile {
  return { id: row.id, sha256: row.sha256, md5: row.md5, size: Number(row.size), contentType: row.contentType, mediaClass: row.mediaClass };
}

/** A stored multimedia file and a stream of its bytes. */
export interface MediaFileContent {
  file: MediaFile;
  stream: Readable;
}

/** The caller's multimedia in one domain (edit_apps). */
export interface MultimediaScope {
  readonly domain: DomainRef;
  /** The app's multimedia, or 404 when the domain has no such app. */
  app(appId: string): Promise<AppMultimedia>;
  /** Any job of the domain's history by its processing id, failed ones included (404 when unknown or purged). */
  job(processingId: string): Promise<MultimediaStatus>;
  /** A slice of the domain's job history, newest first (CONTRACT §7.4). */
  jobs(filter: JobHistoryFilter, slice: JobSlice): Promise<JobHistoryRead>;
}

/** The multimedia of one app the caller may edit. */
export interface AppMultimedia {
  readonly app: AppRecord;
  /**
   * Where to spool an upload that declares `declaredBytes` (undefined: not declared), once the
   * domain's queue has room and the disk the space (upload.rules.ts: 429, 507), before it is read.
   */
  spoolDir(declaredBytes?: number): Promise<string>;
  /** Validates and stores an uploaded archive and queues its job (within the domain's queue bound): the processing id. */
  upload(file: UploadedArchive | undefined): Promise<string>;
  /** The app's job by its processing id (404 when unknown, of another app, or expired). */
  status(processingId: string): Promise<MultimediaStatus>;
  /** The stored file the app maps a path to (`jr://file/` optional, any case), or null. */
  file(path: string): Promise<MediaFileContent | null>;
}

/** How a running job publishes its progress: within its rate, the latest one held back to be sent when the window frees. */
interface ProgressOutlet {
  window: RateWindow;
  held?: NodeJS.Timeout;
  /** the progress this attempt published last: a row read later that has not moved past it is not news */
  published?: { current: number; total: number };
}

export class MultimediaJobService {
  /** the progress outlets of the jobs this process runs, by processing id */
  private readonly outlets = new Map<string, ProgressOutlet>();

  constructor(
    private readonly prisma: Prisma,
    private readonly blobs: BlobStore,
    private readonly events: EventBus,
    private readonly apps: AppService,
    private readonly config: Config,
    private readonly queue: JobQueue,
  ) {}

  /** The caller's multimedia in the domain: 401/403/404 (edit_apps) before anything else. */
  async in(principal: Principal, domainName: string): Promise<MultimediaScope> {
    const apps = await this.apps.in(principal, domainName);
    const domain = apps.domain;
    return {
      domain,
      app: async (appId) => this.appMultimedia(domain, await apps.app(appId), principal),
      job: async (processingId) => statusOf(await this.historyJob(processingId, domain.id)),
      jobs: (filter, slice) => historySlice(this.prisma, { ...filter, domainId: domain.id, since: this.historySince() }, slice),
    };
  }

  private appMultimedia(domain: DomainRef, app: AppRecord, principal: Principal): AppMultimedia {
    return {
      app,
      spoolDir: (declaredBytes) => this.spoolDir(domain, declaredBytes),
      upload: (file) => this.upload(domain, app, file, principal.username),
      status: async (processingId) => statusOf(await this.liveJob(processingId, { appId: app.id, domainId: domain.id })),
      file: async (path) => {
        const entry = mappedFile(app, path);
        const file = entry ? await this.prisma.multimediaFile.findFirst({ where: { id: entry.fileId, domainId: domain.id } }) : null;
        const stream = file && (await this.blobs.stream(file.blobKey));
        return file && stream ? { file: mediaFileOf(file), stream } : null;
      },
    };
  }

  /** A domain already at its queue bound is refused before anything is read; then the disk. */
  private async spoolDir(domain: DomainRef, declaredBytes: number | undefined): Promise<string> {
    checkQueueRoom(await this.queuedBytes(this.prisma, domain.id), 1, this.config.multimediaQueueLimitBytes);
    const dir = await this.blobs.tempDir();
    await checkFreeSpace(dir, declaredBytes ?? 0, this.config.uploadMinFreeBytes);
    return dir;
  }

  /** The upload's checks in the contract's order (after the app's 404): file missing, not a ZIP, corrupt; then the queue's room. */
  private async upload(domain: DomainRef, app: AppRecord, file: UploadedArchive | undefined, uploadedBy: string): Promise<string> {
    if (!file) throw badInput("bulk_upload_file is required");
    const check = await checkArchive(file.path, this.limits);
    if (check.state === "not-zip") throw badInput("Uploaded file is not a valid ZIP file");
    if (check.state === "corrupt") throw badInput("ZIP file is corrupt");
    const size = file.size ?? (await stat(file.path)).size;
    const limit = this.config.multimediaQueueLimitBytes;
    checkQueueRoom(await this.queuedBytes(this.prisma, domain.id), size, limit); // before the archive is stored
    const id = `dl-${newHexId()}`;
    const archiveKey = `archives/${id}`;
    await this.blobs.putFile(archiveKey, file.path);
    const fileName = file.filename && isStorableText(file.filename) ? file.filename : null;
    let job: MultimediaJobRow;
    try {
      job = await this.prisma.$transaction(async (tx) => {
        // again under the domain's lock: concurrent uploads are counted one after another
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`multimedia-queue:${domain.id}`}, 0))`;
        checkQueueRoom(await this.queuedBytes(tx, domain.id), size, limit);
        const created = await tx.multimediaJob.create({
          data: {
            id,
            domainId: domain.id,
            appId: app.id,
            archiveKey,
            total: check.entries,
            status: "queued",
            uploadedBy,
            fileName,
            sizeBytes: BigInt(size),
          },
        });
        await this.queue.enqueue(id, tx);
        return created;
      });
    } catch (error) {
      await this.blobs.delete(archiveKey).catch(() => {}); // no job will ever read it
      throw error;
    }
    // the dashboards' first event of a job: queued
    this.publish(job);
    return id;
  }

  /** The archives of the domain's jobs not yet settled (queued or running), in bytes. */
  private async queuedBytes(db: Pick<Prisma, "multimediaJob">, domainId: string): Promise<number> {
    const { _sum } = await db.multimediaJob.aggregate({ where: { domainId, status: { in: ["queued", "running"] } }, _sum: { sizeBytes: true } });
    return Number(_sum.sizeBytes ?? 0);
  }

  /** Calls `hear` with each job event of the domain as this process receives it (a feed's source); returns what stops it. */
  listen(domainId: string, hear: (status: MultimediaStatus) => void): () => void {
    return this.events.listen(MULTIMEDIA_PROGRESS, domainId, hear);
  }

  /** Progress events of one job, at most, per second (PROGRESS_EVENTS_PER_SECOND): each subscription's bound too. */
  get progressEventsPerSecond(): number {
    return this.config.progressEventsPerSecond;
  }

  /** The zip-bomb limits of CONTRACT §4 "Safety", for the upload check and the worker alike. */
  get limits(): ZipLimits {
    return {
      maxEntryBytes: this.config.zipMaxEntryBytes,
      maxTotalBytes: this.config.zipMaxTotalBytes,
      maxRatio: this.config.zipMaxRatio,
      ratioFloorBytes: this.config.zipRatioFloorBytes,
    };
  }

  /** The domain's stored multimedia files with these ids, in one query (GraphQL loaders). */
  async filesOf(domain: Pick<DomainRef, "id">, fileIds: readonly string[]): Promise<Map<string, MediaFile>> {
    const rows = await this.prisma.multimediaFile.findMany({ where: { id: { in: [...fileIds] }, domainId: domain.id } });
    return new Map(rows.map((r) => [r.id, mediaFileOf(r)]));
  }

  /** The oldest creation time the history keeps (MULTIMEDIA_JOB_HISTORY_DAYS). */
  private historySince(): Date {
    return new Date(Date.now() - this.config.multimediaJobHistoryDays * 24 * 3600 * 1000);
  }

  /** The domain's job with this id while the history keeps it, whatever the REST status's lifetime (404 otherwise). */
  private async historyJob(processingId: string, domainId: string) {
    const job = isStorableText(processingId)
      ? await this.prisma.multimediaJob.findFirst({ where: { id: processingId, domainId, createdAt: { gte: this.historySince() } } })
      : null;
    if (!job) throw notFound("Processing ID not found or expired");
    return job;
  }

  /** The job with this id within `scope`, unless it is unknown or past its lifetime (404). */
  private async liveJob(processingId: string, scope: { domainId: string; appId?: string }) {
    const job = isStorableText(processingId) ? await this.prisma.multimediaJob.findFirst({ where: { id: processingId, ...scope } }) : null;
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
      {
        id: string;
        domain_id: string;
        app_id: string;
        status: string;
        archive_key: string;
        current: number;
        total: number;
        result: unknown;
        errors: unknown;
        attempts: number;
        expires_at: Date | null;
      }[]
    >`
      UPDATE multimedia_jobs SET status = 'running', locked_by = ${key}, attempts = ${attempt.retryCount + 1},
             current = 0, started_at = COALESCE(started_at, now())
      WHERE id = ${attempt.data.processingId} AND status IN ('queued', 'running')
      RETURNING id, domain_id, app_id, status, archive_key, current, total, result, errors, attempts, expires_at`;
    const row = rows[0];
    if (!row) return null;
    const started = await this.prisma.multimediaJob.findUniqueOrThrow({ where: { id: row.id } });
    this.openOutlet(started.id).published = { current: started.current, total: started.total };
    this.publish(started);
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

  /**
   * Persists progress after every entry (the REST status reads it, CONTRACT §4) and publishes it
   * at most PROGRESS_EVENTS_PER_SECOND times a second: a 3,000-entry archive is not 3,000 events
   * on the bus. The latest progress held back goes out as soon as the window allows, unless the
   * job has settled meanwhile. Throws Superseded when another attempt owns the job now.
   */
  async progress(job: JobRow, current: number, total: number): Promise<void> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      UPDATE multimedia_jobs SET current = ${current}, total = ${total}
      WHERE id = ${job.id} AND locked_by = ${job.attempt} RETURNING id`;
    if (rows.length === 0) throw new Superseded();
    const outlet = this.outlets.get(job.id) ?? this.openOutlet(job.id);
    clearTimeout(outlet.held);
    outlet.held = undefined;
    const send = () =>
      void this.publishCurrent(job.id, outlet).catch((error: unknown) => log.error("multimedia progress publish failed", { job: job.id, error }));
    const wait = outlet.window.waitMs();
    if (wait === 0) {
      outlet.window.take();
      send();
    } else {
      outlet.held = setTimeout(() => {
        outlet.held = undefined;
        outlet.window.take();
        send();
      }, wait);
      outlet.held.unref();
    }
  }

  private openOutlet(processingId: string): ProgressOutlet {
    this.closeOutlet(processingId);
    const outlet: ProgressOutlet = { window: new RateWindow(this.config.progressEventsPerSecond) };
    this.outlets.set(processingId, outlet);
    return outlet;
  }

  /** The job left this process's hands (settled, superseded, given back): nothing held back may follow. */
  private closeOutlet(processingId: string): void {
    clearTimeout(this.outlets.get(processingId)?.held);
    this.outlets.delete(processingId);
  }

  /**
   * Publishes the job's row as it is now, if it is still running in this outlet's hands (a
   * held-back progress after the end would move it backwards) and its progress moved since the
   * last one published. The row is read after the send was decided, so it may already hold a later
   * progress than the one that triggered it: a held-back send that fires while the next entry's
   * write commits reads that next entry, whose own send then reads it again. Each progress goes
   * on the bus once, in order: every subscriber would otherwise get the same progress twice, or
   * an older one after a newer when two reads finish out of order.
   */
  private async publishCurrent(processingId: string, outlet: ProgressOutlet): Promise<void> {
    const row = await this.prisma.multimediaJob.findUnique({ where: { id: processingId } });
    if (row?.status !== "running" || this.outlets.get(processingId) !== outlet || !movedPast(row, outlet.published)) return;
    outlet.published = { current: row.current, total: row.total };
    this.publish(row);
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
      const raced = await this.prisma.multimediaFile.findUniqueOrThrow({
        where: { domainId_sha256: { domainId: job.domainId, sha256: file.sha256 } },
      });
      return raced.id;
    }
  }

  /** Maps the matched paths in the app and completes the job, in one transaction. */
  async complete(job: JobRow, result: ArchiveResult, stored: StoredMedia[]): Promise<void> {
    // the REST status's lifetime counts from the moment the job settles
    const completedAt = new Date();
    const expiresAt = new Date(completedAt.getTime() + this.config.multimediaJobTtlSeconds * 1000);
    const current = job.total;
    const mappings = stored.map((s) => ({ path: s.canonicalPath, fileId: s.fileId, mediaType: s.mediaType, sha256: s.sha256 }));
    this.closeOutlet(job.id);
    const done = await this.prisma.$transaction(async (tx) => {
      // the app's map is written by its owner (AppService), in this transaction: a superseded attempt rolls it back
      await this.apps.mapMedia(tx, { id: job.domainId }, job.appId, mappings);
      const settled = await tx.multimediaJob.updateMany({
        where: { id: job.id, lockedBy: job.attempt },
        data: { status: "complete", current, result: result as object, completedAt, expiresAt, lockedBy: null },
      });
      if (settled.count === 0) throw new Superseded();
      return tx.multimediaJob.findUniqueOrThrow({ where: { id: job.id } });
    });
    await this.blobs.delete(job.archiveKey);
    this.publish(done);
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
    // the REST status's lifetime counts from the moment the job settles
    const completedAt = new Date();
    const expiresAt = new Date(completedAt.getTime() + this.config.multimediaJobTtlSeconds * 1000);
    this.closeOutlet(where.id);
    const job = await this.prisma.$transaction(async (tx) => {
      const settled = await tx.multimediaJob.updateMany({
        where,
        data: { status: "failed", errors: [reason], completedAt, expiresAt, lockedBy: null },
      });
      return settled.count ? tx.multimediaJob.findUnique({ where: { id: where.id } }) : null;
    });
    if (!job) return;
    await this.blobs.delete(job.archiveKey);
    this.publish(job);
  }

  /**
   * Gives a job back to the queue (shutdown) as a fresh job, so that a restart does not count as a
   * failed attempt: another process, or this one restarted, resumes it.
   */
  async requeue(job: JobRow): Promise<void> {
    this.closeOutlet(job.id);
    const released = await this.prisma.$transaction(async (tx) => {
      const updated = await tx.multimediaJob.updateMany({
        where: { id: job.id, lockedBy: job.attempt },
        data: { status: "queued", lockedBy: null, current: 0 },
      });
      if (!updated.count) return null;
      await this.queue.enqueue(job.id, tx);
      return tx.multimediaJob.findUnique({ where: { id: job.id } });
    });
    if (released) this.publish(released);
  }

  /** Every change of a job goes to its domain's topic: the job's own feed and the domain's dashboards read it. */
  private publish(job: StatusRow): void {
    this.events.pubsub.publish(MULTIMEDIA_PROGRESS, job.domainId, statusOf(job));
  }

  /**
   * Forgets settled jobs older than the dashboards' history (MULTIMEDIA_JOB_HISTORY_DAYS); the REST
   * status stops answering for them an hour after they settle (their expires_at), the history keeps them.
   */
  async purgeExpired(): Promise<void> {
    await this.prisma.multimediaJob.deleteMany({
      where: { createdAt: { lt: this.historySince() }, status: { in: ["complete", "failed"] } },
    });
  }
}

/** Whether a running job's progress is news after `published`: further on, or the same count of another total. */
function movedPast(row: { current: number; total: number }, published: ProgressOutlet["published"]): boolean {
  if (!published) return true;
  return row.current > published.current || (row.current === published.current && row.total !== published.total);
}
