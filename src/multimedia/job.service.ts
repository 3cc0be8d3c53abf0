/**
 * Multimedia jobs (CONTRACT §4), the faces' door: an upload becomes a stored archive, a job row and
 * a pg-boss job (committed together) before the request returns; the status, the stored files and
 * the history are read back through the same scope. The worker's side of a job (its fenced
 * attempt) is job.attempt.ts's, the events job.publisher.ts's, the statements job.repository.ts's.
 *
 * Scope first: `in(principal, domain)` answers 401/403/404, then `scope.app(appId)` the app's 404,
 * before the upload is read; upload, status and file are methods of that app scope. Statuses are
 * domain values (job.events.ts); the REST body is made by job.serializer.ts.
 */
import type { Readable } from "node:stream";
import type { Principal } from "../auth/principal.ts";
import type { DomainRef } from "../auth/permissions.ts";
import type { Config } from "../config.ts";
import { badInput, notFound, objectStoreUnavailable } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import { log } from "../log.ts";
import { getOrCreate } from "../util/maps.ts";
import { newHexId } from "../util/ids.ts";
import { isStorableText } from "../util/text.ts";
import { mappedFile, type AppRecord, type AppService } from "../apps/app.service.ts";
import type { BlobStore, ByteRange, StagedBlob } from "./blob-store.ts";
import { MULTIMEDIA_PROGRESS, type MultimediaStatus } from "./job.events.ts";
import { historySlice, type JobHistoryFilter, type JobHistoryRead, type JobSlice } from "./job.history.ts";
import type { JobPublisher } from "./job.publisher.ts";
import type { JobQueue } from "./job.queue.ts";
import type { FileRecord, JobRecord, JobRepository } from "./job.repository.ts";
import { statusOf } from "./job.status.ts";
import { checkFreeSpace, checkQueueRoom } from "./upload.rules.ts";
import { SourceReadError } from "./archive/byte-source.ts";
import type { ArchiveCheck } from "./archive/zip-check.ts";
import { zipLimitsOf, type ZipLimits } from "./archive/zip-limits.ts";

/** An archive as the upload received it, staged in the blob store (see ArchiveIntake). */
export interface UploadedArchive {
  staged: StagedBlob;
  /** the file name the client gave it */
  filename?: string;
}

/** Where an upload's archive goes as it arrives. */
export interface ArchiveIntake {
  /** a directory for the request's own temporary files */
  tempDir: string;
  /** takes the archive's bytes as they arrive, staged in the blob store under a new job's key */
  receive(stream: Readable): Promise<StagedBlob>;
}

const ARCHIVE_KEY_PREFIX = "archives/";

/** A stored multimedia file: its content, kept once per domain and content hash. */
export interface MediaFile {
  id: string;
  sha256: string;
  md5: string;
  size: number;
  contentType: string;
  /** AppImage | AppAudio | AppVideo */
  mediaClass: string;
  /** where the blob store keeps its bytes */
  blobKey: string;
}

function mediaFileOf(row: FileRecord): MediaFile {
  return {
    id: row.id,
    sha256: row.sha256,
    md5: row.md5,
    size: Number(row.size),
    contentType: row.contentType,
    mediaClass: row.mediaClass,
    blobKey: row.blobKey,
  };
}

/** A stored multimedia file and a stream of its bytes, or of the range asked for. */
export interface MediaFileContent {
  file: MediaFile;
  stream: Readable;
  range?: ByteRange;
}

/** A stored multimedia file, found, and how to read its bytes. */
interface FoundMediaFile {
  file: MediaFile;
  /** its bytes, or those of `range`; null when they are gone from the store */
  read(range?: ByteRange): Promise<MediaFileContent | null>;
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
  /** The domain's stored files with these ids, in one query (the GraphQL loaders). */
  files(fileIds: readonly string[]): Promise<Map<string, MediaFile>>;
  /** The domain's app, or null (a job event's app, which may be deleted since). */
  findApp(appId: string): Promise<AppRecord | null>;
  /** A pre-signed URL that fetches one of the domain's files from the object store for a while, or null with local storage. */
  downloadUrl(file: Pick<MediaFile, "blobKey" | "contentType">): Promise<string | null>;
}

/** The multimedia of one app the caller may edit. */
export interface AppMultimedia {
  readonly app: AppRecord;
  /**
   * Where an upload that declares `declaredBytes` (undefined: not declared) goes, once the domain's
   * queue has room and, when it is spooled on local disk, the disk the space (upload.rules.ts:
   * 429, 507), before it is read.
   */
  intake(declaredBytes?: number): Promise<ArchiveIntake>;
  /** Validates and stores an uploaded archive and queues its job (within the domain's queue bound): the processing id. */
  upload(file: UploadedArchive | undefined): Promise<string>;
  /** The app's job by its processing id (404 when unknown, of another app, or expired). */
  status(processingId: string): Promise<MultimediaStatus>;
  /** The stored file the app maps a path to (`jr://file/` optional, any case), or null. */
  file(path: string): Promise<FoundMediaFile | null>;
}

export class MultimediaJobService {
  /**
   * The feeds of each domain this process follows, behind one bus listener per domain: an event
   * reaches thousands of dashboards of a domain through one loop instead of one EventTarget
   * listener each (whose dispatch cost about as much as the feed's own handling).
   */
  private readonly listeners = new Map<string, { feeds: Set<(status: MultimediaStatus) => void>; stop: () => void }>();

  constructor(
    private readonly repository: JobRepository,
    private readonly blobs: BlobStore,
    private readonly events: EventBus,
    private readonly publisher: Pick<JobPublisher, "publish">,
    private readonly apps: AppService,
    private readonly config: Config,
    private readonly queue: Pick<JobQueue, "enqueue">,
  ) {}

  /** The caller's multimedia in the domain: 401/403/404 (edit_apps) before anything else. */
  async in(principal: Principal, domainName: string): Promise<MultimediaScope> {
    const apps = await this.apps.in(principal, domainName);
    const domain = apps.domain;
    return {
      domain,
      app: async (appId) => this.appMultimedia(domain, await apps.app(appId), principal),
      job: async (processingId) => statusOf(await this.historyJob(processingId, domain.id)),
      jobs: (filter, slice) => historySlice(this.repository, { ...filter, domainId: domain.id, since: this.historySince() }, slice),
      files: async (fileIds) => new Map((await this.repository.files(domain.id, fileIds)).map((r) => [r.id, mediaFileOf(r)])),
      findApp: (appId) => apps.find(appId),
      downloadUrl: (file) => this.blobs.downloadUrl(file.blobKey, file.contentType),
    };
  }

  private appMultimedia(domain: DomainRef, app: AppRecord, principal: Principal): AppMultimedia {
    return {
      app,
      intake: (declaredBytes) => this.intake(domain, declaredBytes),
      upload: (file) => this.upload(domain, app, file, principal.username),
      status: async (processingId) => statusOf(await this.liveJob(processingId, { appId: app.id, domainId: domain.id })),
      file: async (path) => {
        const entry = mappedFile(app, path);
        const row = entry ? await this.repository.file(domain.id, entry.fileId) : null;
        if (!row) return null;
        const file = mediaFileOf(row);
        const read = async (range?: ByteRange) => {
          const stream = await this.blobs.stream(file.blobKey, range);
          return stream && { file, stream, range };
        };
        return { file, read };
      },
    };
  }

  /** A domain already at its queue bound is refused before anything is read; then the disk. */
  private async intake(domain: DomainRef, declaredBytes: number | undefined): Promise<ArchiveIntake> {
    checkQueueRoom(await this.repository.queuedBytes(domain.id), 1, this.config.multimediaQueueLimitBytes);
    const tempDir = await this.blobs.tempDir();
    // an upload streamed to an object store takes no room here
    if (this.blobs.spoolsLocally) await checkFreeSpace(tempDir, declaredBytes ?? 0, this.config.uploadMinFreeBytes);
    return { tempDir, receive: (stream) => this.blobs.stage(`${ARCHIVE_KEY_PREFIX}dl-${newHexId()}`, stream) };
  }

  /** The upload check, reading the staged archive where it is; the store failing is a 503, not "corrupt". */
  private async check(staged: StagedBlob): Promise<ArchiveCheck> {
    // the archive readers load with the first upload: a process that never receives one never holds them
    const { checkArchive } = await import("./archive/zip-check.ts");
    const source = await staged.open();
    try {
      return await checkArchive(source, this.limits);
    } catch (error) {
      if (error instanceof SourceReadError) throw objectStoreUnavailable();
      throw error;
    } finally {
      await source.close();
    }
  }

  /** The upload's checks in the contract's order (after the app's 404): file missing, not a ZIP, corrupt; then the queue's room. */
  private async upload(domain: DomainRef, app: AppRecord, file: UploadedArchive | undefined, uploadedBy: string): Promise<string> {
    if (!file) throw badInput("bulk_upload_file is required");
    const check = await this.check(file.staged);
    if (check.state === "not-zip") throw badInput("Uploaded file is not a valid ZIP file");
    if (check.state === "corrupt") throw badInput("ZIP file is corrupt");
    const size = file.staged.size;
    const limit = this.config.multimediaQueueLimitBytes;
    checkQueueRoom(await this.repository.queuedBytes(domain.id), size, limit); // before the archive is stored
    const archiveKey = file.staged.key;
    const id = archiveKey.slice(ARCHIVE_KEY_PREFIX.length);
    await file.staged.keep();
    const fileName = file.filename && isStorableText(file.filename) ? file.filename : null;
    let job: JobRecord;
    try {
      job = await this.repository.transaction(async (tx) => {
        // again under the domain's lock: concurrent uploads are counted one after another
        await this.repository.lockQueue(tx, domain.id);
        checkQueueRoom(await this.repository.queuedBytes(domain.id, tx), size, limit);
        const created = await this.repository.create(tx, {
          id,
          domainId: domain.id,
          appId: app.id,
          archiveKey,
          total: check.entries,
          uploadedBy,
          fileName,
          sizeBytes: size,
        });
        await this.queue.enqueue(created, tx);
        return created;
      });
    } catch (error) {
      await this.blobs.delete(archiveKey).catch(() => {}); // no job will ever read it
      throw error;
    }
    // the dashboards' first event of a job: queued
    this.publisher.publish(job);
    return id;
  }

  /** Calls `hear` with each job event of the domain as this process receives it (a feed's source); returns what stops it. */
  listen(domainId: string, hear: (status: MultimediaStatus) => void): () => void {
    const domain = getOrCreate(this.listeners, domainId, () => {
      const feeds = new Set<(status: MultimediaStatus) => void>();
      // the feeds as the event arrives: one that starts meanwhile hears from the next event on
      const stop = this.events.listen(MULTIMEDIA_PROGRESS, domainId, (status) => {
        for (const feed of [...feeds]) {
          try {
            feed(status);
          } catch (error) {
            // one feed's failure is not the others': an EventTarget listener's would not be either
            log.error("multimedia job feed failed", { error });
          }
        }
      });
      return { feeds, stop };
    });
    // each call its own entry, even for the same function
    const entry = (status: MultimediaStatus) => hear(status);
    domain.feeds.add(entry);
    return () => {
      domain.feeds.delete(entry);
      if (domain.feeds.size === 0 && this.listeners.get(domainId) === domain) {
        this.listeners.delete(domainId);
        domain.stop();
      }
    };
  }

  /** Progress events of one job, at most, per second (PROGRESS_EVENTS_PER_SECOND): each subscription's bound too. */
  get progressEventsPerSecond(): number {
    return this.config.progressEventsPerSecond;
  }

  /** The zip-bomb limits of CONTRACT §4 "Safety", for the upload check and the worker alike. */
  get limits(): ZipLimits {
    return zipLimitsOf(this.config);
  }

  /** The oldest creation time the history keeps (MULTIMEDIA_JOB_HISTORY_DAYS). */
  private historySince(): Date {
    return new Date(Date.now() - this.config.multimediaJobHistoryDays * 24 * 3600 * 1000);
  }

  /** The domain's job with this id while the history keeps it, whatever the REST status's lifetime (404 otherwise). */
  private async historyJob(processingId: string, domainId: string): Promise<JobRecord> {
    const job = isStorableText(processingId) ? await this.repository.find({ id: processingId, domainId, since: this.historySince() }) : null;
    if (!job) throw notFound("Processing ID not found or expired");
    return job;
  }

  /** The job with this id within `scope`, unless it is unknown or past its lifetime (404). */
  private async liveJob(processingId: string, scope: { domainId: string; appId?: string }): Promise<JobRecord> {
    const job = isStorableText(processingId) ? await this.repository.find({ id: processingId, ...scope }) : null;
    if (!job || (job.expiresAt && job.expiresAt.getTime() < Date.now())) throw notFound("Processing ID not found or expired");
    return job;
  }

  /**
   * Forgets settled jobs older than the dashboards' history (MULTIMEDIA_JOB_HISTORY_DAYS); the REST
   * status stops answering for them an hour after they settle (their expires_at), the history keeps them.
   */
  async purgeExpired(): Promise<void> {
    await this.repository.purgeSettled(this.historySince());
  }
}
