import { log } from "../log.ts";
import type { AppService } from "../apps/app.service.ts";
import type { Config } from "../config.ts";
import type { BlobStore } from "./blob-store.ts";
import type { JobQueue, TaskAttempt } from "./job.queue.ts";
import { Superseded, type JobRow, type MultimediaJobService } from "./job.service.ts";
import { MEDIA_CLASS } from "./media-types.ts";
import { ArchiveError, processArchive, Stopped } from "./zip-processor.ts";

/**
 * Runs multimedia jobs off the request path, in every server process with WORKERS > 0: takes jobs
 * from the queue, runs them, and on shutdown gives an unfinished job back to the queue so that it
 * resumes elsewhere or after a restart. A crash is thrown back to pg-boss, which retries the job
 * and, once its attempts are used up, hands it to the dead-letter handler that marks it failed.
 */
export class MultimediaWorker {
  private stopping = false;
  private started = false;

  constructor(
    private readonly jobs: MultimediaJobService,
    private readonly apps: AppService,
    private readonly blobs: BlobStore,
    private readonly queue: JobQueue,
    private readonly config: Config,
  ) {}

  async start(count = this.config.workers): Promise<void> {
    if (count === 0) return;
    this.started = true;
    await this.queue.work(count, (attempt) => this.run(attempt));
    await this.queue.onGaveUp((processingId) => this.jobs.giveUp(processingId));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.started) await this.queue.stopWorking();
  }

  private async run(attempt: TaskAttempt): Promise<void> {
    const job = await this.jobs.begin(attempt);
    if (!job) return;
    const archive = await this.blobs.localFile(job.archiveKey);
    if (!archive) return this.jobs.fail(job, "The uploaded archive is missing.");
    try {
      await this.process(job, archive.path, attempt.signal);
    } catch (error) {
      if (error instanceof Superseded) return;
      if (error instanceof Stopped) return attempt.signal.aborted ? undefined : this.jobs.requeue(job);
      if (error instanceof ArchiveError) return this.jobs.fail(job, error.message);
      log.error("multimedia job crashed", { job: job.id, attempt: job.attempts, error });
      throw error;
    } finally {
      await archive.release();
    }
  }

  private async process(job: JobRow, archivePath: string, claim: AbortSignal): Promise<void> {
    const references = await this.apps.references(job.appId);
    const { result, stored } = await processArchive(archivePath, references, this.jobs.limits, await this.blobs.tempDir(), {
      progress: (current, total) => this.jobs.progress(job, current, total),
      store: (file) => this.jobs.storeMedia(job, { ...file, mediaClass: MEDIA_CLASS[file.mediaType] }),
      // a lost claim means pg-boss has already given the job to another attempt
      stopping: () => this.stopping || claim.aborted,
    });
    await this.jobs.complete(job, result, stored);
  }
}
