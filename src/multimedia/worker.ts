import { log } from "../log.ts";
import { multimediaJobDuration } from "../observability/metrics.ts";
import type { AppService } from "../apps/app.service.ts";
import type { Config } from "../config.ts";
import type { BlobStore } from "./blob-store.ts";
import type { JobQueue, TaskAttempt } from "./job.queue.ts";
import { Superseded, type JobRow, type MultimediaJobService } from "./job.service.ts";
import { MEDIA_CLASS } from "./archive/media-types.ts";
import { ArchiveError, processArchive, Stopped } from "./archive/zip-processor.ts";

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
    const started = process.hrtime.bigint();
    // one line per attempt as it starts and as it ends, with how it ended and how long it ran
    const ended = (outcome: "complete" | "failed" | "requeued" | "stopped" | "superseded" | "crashed", fields: Record<string, unknown> = {}) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      multimediaJobDuration.observe({ outcome }, seconds);
      const line = { processingId: job.id, attempt: job.attempts, outcome, durationMs: Math.round(seconds * 1000), ...fields };
      if (outcome === "crashed") log.error("multimedia job crashed", line);
      else
        log.info(
          outcome === "complete" ? "multimedia job finished" : outcome === "failed" ? "multimedia job failed" : "multimedia job stopped",
          line,
        );
    };
    log.info("multimedia job started", { processingId: job.id, attempt: job.attempts });
    const archive = await this.blobs.localFile(job.archiveKey);
    if (!archive) {
      ended("failed", { reason: "The uploaded archive is missing." });
      return this.jobs.fail(job, "The uploaded archive is missing.");
    }
    try {
      await this.process(job, archive.path, attempt.signal);
      ended("complete");
    } catch (error) {
      if (error instanceof Superseded) return ended("superseded");
      if (error instanceof Stopped) {
        ended(attempt.signal.aborted ? "stopped" : "requeued");
        return attempt.signal.aborted ? undefined : this.jobs.requeue(job);
      }
      if (error instanceof ArchiveError) {
        ended("failed", { reason: error.message });
        return this.jobs.fail(job, error.message);
      }
      ended("crashed", { error });
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
