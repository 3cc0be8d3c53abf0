/**
 * The worker's side of a multimedia job (CONTRACT §4): a trusted module, which no face may import
 * (.dependency-cruiser.cjs, "faces-not-to-trusted"). pg-boss hands each job to one attempt at a
 * time and retries it when its worker dies; the job row's locked_by names the attempt allowed to
 * write it. `begin` takes the row for an attempt and returns an `Attempt` that holds that fence:
 * every write it offers (progress, store, complete, fail, requeue) matches it, so a stale attempt
 * can never overwrite a newer one's work.
 */
import type { AppSystem } from "../apps/app.system.ts";
import type { Config } from "../config.ts";
import type { ArchiveResult, StoredMedia } from "./archive/archive-result.ts";
import type { BlobStore } from "./blob-store.ts";
import type { JobPublisher } from "./job.publisher.ts";
import { attemptKey, type JobQueue, type MultimediaTask, type TaskAttempt } from "./job.queue.ts";
import type { JobKey, JobRecord, JobRepository, SettleWhere } from "./job.repository.ts";

/** The job row as an attempt started it. */
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

/** A matched file of the archive, to be stored once per domain and content hash. */
export interface MediaToStore {
  content: { buffer: Buffer } | { file: string };
  sha256: string;
  md5: string;
  size: number;
  contentType: string;
  /** AppImage | AppAudio | AppVideo */
  mediaClass: string;
}

/** What an attempt needs besides its row: the process's roads to the tables, blobs, bus, queue and apps. */
interface AttemptDeps {
  repository: JobRepository;
  blobs: BlobStore;
  publisher: JobPublisher;
  apps: Pick<AppSystem, "mapMedia">;
  queue: Pick<JobQueue, "enqueue">;
  config: Pick<Config, "multimediaJobTtlSeconds">;
}

/** The moment a job settles, and the end of its REST status's lifetime, which counts from then. */
function settledNow(config: Pick<Config, "multimediaJobTtlSeconds">): { completedAt: Date; expiresAt: Date } {
  const completedAt = new Date();
  return { completedAt, expiresAt: new Date(completedAt.getTime() + config.multimediaJobTtlSeconds * 1000) };
}

/**
 * Fails the job matched by `where` (the attempt's own, or any not yet settled), deletes its archive
 * and publishes it; nothing when it matched no row.
 */
async function settleFailed(deps: AttemptDeps, where: SettleWhere, reason: string): Promise<void> {
  deps.publisher.close(where.id);
  const job = await deps.repository.fail(where, { errors: [reason], ...settledNow(deps.config) });
  if (!job) return;
  await deps.blobs.delete(job.archiveKey);
  deps.publisher.publish(job);
}

/** One attempt at a job, holding its fence: every write matches the row's locked_by to `job.attempt`. */
export class Attempt {
  /** the job row's key, which every write names */
  private readonly key: JobKey;

  constructor(
    readonly job: JobRow,
    private readonly deps: AttemptDeps,
  ) {
    this.key = { id: job.id, domainId: job.domainId };
  }

  /**
   * Persists progress after every entry (the REST status reads it, CONTRACT §4) and hands the row
   * to the publisher, which bounds the events. Throws Superseded when another attempt owns the job.
   */
  async progress(current: number, total: number): Promise<void> {
    const row = await this.deps.repository.progress(this.key, this.job.attempt, current, total);
    if (!row) throw new Superseded();
    this.deps.publisher.progressed(row);
  }

  /** Stores a matched file once per domain and content hash; returns its id. */
  async store(file: MediaToStore): Promise<string> {
    const { repository, blobs } = this.deps;
    const existing = await repository.fileIdBySha(this.job.domainId, file.sha256);
    if (existing) return existing;
    const blobKey = `media/${file.sha256}`;
    if (!(await blobs.has(blobKey))) {
      if ("buffer" in file.content) await blobs.putBuffer(blobKey, file.content.buffer);
      else await blobs.putFile(blobKey, file.content.file);
    }
    const { sha256, md5, size, contentType, mediaClass } = file;
    return repository.createFile({ domainId: this.job.domainId, sha256, md5, size, contentType, mediaClass, blobKey });
  }

  /** Maps the matched paths in the app and completes the job, in one transaction. Throws Superseded when another attempt owns it. */
  async complete(result: ArchiveResult, stored: StoredMedia[]): Promise<void> {
    const { repository, publisher, apps, blobs, config } = this.deps;
    const job = this.job;
    const settled = settledNow(config);
    const mappings = stored.map((s) => ({ path: s.canonicalPath, fileId: s.fileId, mediaType: s.mediaType, sha256: s.sha256 }));
    publisher.close(job.id);
    const done = await repository.transaction(async (tx) => {
      // the app's map is written by its owner (apps), in this transaction: a superseded attempt rolls it back
      await apps.mapMedia(tx, { id: job.domainId }, job.appId, mappings);
      const row = await repository.complete(tx, this.key, job.attempt, { current: job.total, result: result as object, ...settled });
      if (!row) throw new Superseded();
      return row;
    });
    await blobs.delete(job.archiveKey);
    publisher.publish(done);
  }

  /** Fails the job for good (its archive cannot be processed); a no-op once another attempt owns it. */
  fail(reason: string): Promise<void> {
    return settleFailed(this.deps, { ...this.key, lockedBy: this.job.attempt }, reason);
  }

  /**
   * Gives the job back to the queue (shutdown) as a fresh job, so that a restart does not count as
   * a failed attempt: another process, or this one restarted, resumes it. A no-op once another
   * attempt owns it.
   */
  async requeue(): Promise<void> {
    const { repository, publisher, queue } = this.deps;
    publisher.close(this.job.id);
    const released = await repository.transaction(async (tx) => {
      const row = await repository.release(tx, this.key, this.job.attempt);
      if (row) await queue.enqueue(this.key, tx);
      return row;
    });
    if (released) publisher.publish(released);
  }
}

/** The worker's door to the jobs: starting attempts, and settling jobs no attempt will finish. */
export class JobAttempts {
  private readonly deps: AttemptDeps;

  constructor(
    repository: JobRepository,
    blobs: BlobStore,
    publisher: JobPublisher,
    apps: Pick<AppSystem, "mapMedia">,
    private readonly queue: JobQueue,
    config: Pick<Config, "multimediaJobTtlSeconds">,
  ) {
    this.deps = { repository, blobs, publisher, apps, queue, config };
  }

  /**
   * Starts `task` on its job row: null when the job is already settled (a duplicate delivery). A
   * later attempt takes the row over from an earlier one, whose writes are refused from then on.
   */
  async begin(task: TaskAttempt): Promise<Attempt | null> {
    const key = attemptKey(task);
    const { processingId: id, domainId } = task.data;
    const row = await this.deps.repository.begin({ id, ...(domainId === undefined ? {} : { domainId }) }, key, task.retryCount + 1);
    if (!row) return null;
    this.deps.publisher.started(row);
    return new Attempt(jobRowOf(row, key), this.deps);
  }

  /**
   * The embedded database has one process: at start, whatever was running belongs to no one, so
   * its attempts are failed now (pg-boss retries them or gives them up) rather than when their
   * heartbeat goes stale.
   */
  async failOrphans(): Promise<void> {
    await this.queue.failAttempts(await this.deps.repository.runningLocks());
  }

  /** The job's attempts are used up (pg-boss's dead letter): it is failed unless already settled. */
  giveUp(task: MultimediaTask): Promise<void> {
    const { processingId: id, domainId } = task;
    return settleFailed(this.deps, { id, ...(domainId === undefined ? {} : { domainId }), unsettled: true }, "The processing task crashed.");
  }
}

function jobRowOf(row: JobRecord, attempt: string): JobRow {
  return {
    id: row.id,
    attempt,
    domainId: row.domainId,
    appId: row.appId,
    status: row.status,
    archiveKey: row.archiveKey,
    current: row.current,
    total: row.total,
    result: row.result,
    errors: row.errors,
    attempts: row.attempts,
    expiresAt: row.expiresAt,
  };
}
