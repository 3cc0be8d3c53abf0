/**
 * Runs multimedia jobs off the request path, in every server process with WORKERS > 0: takes jobs
 * from the queue, runs them, and on shutdown gives an unfinished job back to the queue so that it
 * resumes elsewhere or after a restart. A crash is thrown back to pg-boss, which retries the job
 * and, once its attempts are used up, hands it to the dead-letter handler that marks it failed.
 * It writes a job only through its fenced Attempt (job.attempt.ts), and reads the app through the
 * trusted apps calls (apps/app.system.ts), never through a face's scoped service.
 */
import { log } from "../log.ts";
import { multimediaJobDuration } from "../observability/metrics.ts";
import type { AppSystem } from "../apps/app.system.ts";
import type { Config } from "../config.ts";
import type { BlobStore } from "./blob-store.ts";
import type { ByteSource } from "./archive/byte-source.ts";
import { Superseded, type Attempt, type JobAttempts } from "./job.attempt.ts";
import type { JobQueue, TaskAttempt } from "./job.queue.ts";
import { MEDIA_CLASS } from "./archive/media-types.ts";
import { zipLimitsOf } from "./archive/zip-limits.ts";
/** The archive readers (yauzl, file-type) load with the first job: an idle process never holds them. */
const archiveProcessor = () => import("./archive/zip-processor.ts");

export class MultimediaWorker {
  private stopping = false;
  private started = false;

  constructor(
    private readonly attempts: JobAttempts,
    private readonly apps: Pick<AppSystem, "references">,
    private readonly blobs: BlobStore,
    private readonly queue: JobQueue,
    private readonly config: Config,
  ) {}

  async start(count = this.config.workers): Promise<void> {
    if (count === 0) return;
    this.started = true;
    await this.queue.work(count, (attempt) => this.run(attempt));
    await this.queue.onGaveUp((task) => this.attempts.giveUp(task));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.started) await this.queue.stopWorking();
  }

  private async run(task: TaskAttempt): Promise<void> {
    const attempt = await this.attempts.begin(task);
    if (!attempt) return;
    const { ArchiveError, Stopped } = await archiveProcessor();
    const job = attempt.job;
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
    // read by range where it is stored (an object store), or a local copy (the database store)
    const archive = await this.blobs.open(job.archiveKey);
    if (!archive) {
      ended("failed", { reason: "The uploaded archive is missing." });
      return attempt.fail("The uploaded archive is missing.");
    }
    try {
      await this.process(attempt, archive, task.signal);
      ended("complete");
    } catch (error) {
      if (error instanceof Superseded) return ended("superseded");
      if (error instanceof Stopped) {
        ended(task.signal.aborted ? "stopped" : "requeued");
        return task.signal.aborted ? undefined : attempt.requeue();
      }
      if (error instanceof ArchiveError) {
        ended("failed", { reason: error.message });
        return attempt.fail(error.message);
      }
      ended("crashed", { error });
      throw error;
    } finally {
      await archive.close();
    }
  }

  private async process(attempt: Attempt, archive: ByteSource, claim: AbortSignal): Promise<void> {
    const references = await this.apps.references({ id: attempt.job.domainId }, attempt.job.appId);
    const { processArchive } = await archiveProcessor();
    const { result, stored } = await processArchive(archive, references, zipLimitsOf(this.config), await this.blobs.tempDir(), {
      progress: (current, total) => attempt.progress(current, total),
      store: (file) => attempt.store({ ...file, mediaClass: MEDIA_CLASS[file.mediaType] }),
      // a lost claim means pg-boss has already given the job to another attempt
      stopping: () => this.stopping || claim.aborted,
      storesAtOnce: this.blobs.storesAtOnce,
    });
    await attempt.complete(result, stored);
  }
}
