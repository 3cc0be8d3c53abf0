import { randomUUID } from "node:crypto";
import { log } from "../log.ts";
import type { AppService } from "../apps/app.service.ts";
import type { Config } from "../config.ts";
import type { BlobStore } from "./blob-store.ts";
import type { JobRow, MultimediaJobService } from "./job.service.ts";
import { MEDIA_CLASS } from "./media-types.ts";
import { ArchiveError, processArchive, Stopped } from "./zip-processor.ts";

/**
 * Runs multimedia jobs off the request path, in every server process: polls for a job (and wakes
 * at once when this process queued one), runs it, and on shutdown gives an unfinished job back to
 * the queue so that it resumes elsewhere or after a restart.
 */
export class MultimediaWorker {
  private readonly id = `worker-${randomUUID()}`;
  private stopping = false;
  private wake: (() => void) | undefined;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly jobs: MultimediaJobService,
    private readonly apps: AppService,
    private readonly blobs: BlobStore,
    private readonly config: Config,
    private readonly pollMs = 1000,
  ) {}

  start(count = this.config.workers): void {
    for (let i = 0; i < count; i++) this.loops.push(this.loop());
  }

  /** A job was queued here: look now rather than at the next poll. */
  nudge(): void {
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let job: JobRow | null = null;
      try {
        job = await this.jobs.claim(this.id);
      } catch (error) {
        log.error("claiming a multimedia job failed", { error });
      }
      if (job) await this.run(job);
      else await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private async run(job: JobRow): Promise<void> {
    const archive = await this.blobs.localFile(job.archiveKey).catch(() => null);
    if (!archive) return this.jobs.fail(job, "The uploaded archive is missing.");
    try {
      const references = await this.apps.references(job.appId);
      const { result, stored } = await processArchive(
        archive.path,
        references,
        { maxEntryBytes: this.config.zipMaxEntryBytes, maxTotalBytes: this.config.zipMaxTotalBytes, maxRatio: this.config.zipMaxRatio },
        await this.blobs.tempDir(),
        {
          progress: (current, total) => this.jobs.progress(job, this.id, current, total),
          store: (file) => this.jobs.storeMedia(job, { ...file, mediaClass: MEDIA_CLASS[file.mediaType] }),
          stopping: () => this.stopping,
        },
      );
      await this.jobs.complete(job, result, stored);
    } catch (error) {
      if (error instanceof Stopped) return this.jobs.release(job, this.id);
      if (error instanceof ArchiveError) return this.jobs.fail(job, error.message);
      log.error("multimedia job crashed", { job: job.id, error });
      await this.jobs.fail(job, "The processing task crashed.").catch((e: unknown) => log.error("could not mark job failed", { error: e }));
    } finally {
      await archive.release();
    }
  }
}
