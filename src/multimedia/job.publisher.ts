/**
 * Where job events are made (CONTRACT §7.4): every change of a job goes to its domain's topic on
 * the bus, which the job's own feed and the domain's dashboards read, from any process.
 *
 * Progress is bounded twice, for two different costs. Here, per job, at PROGRESS_EVENTS_PER_SECOND:
 * the volume on the bus, which every process hears (a 3,000-entry archive is not 3,000 events).
 * Again in each subscription (job.coalescing.ts), for one slow socket. Both use RateWindow.
 */
import type { EventBus } from "../events/bus.ts";
import { log } from "../log.ts";
import { MULTIMEDIA_PROGRESS } from "./job.events.ts";
import type { JobKey, JobRecord, JobRepository } from "./job.repository.ts";
import { statusOf, type StatusRow } from "./job.status.ts";
import { RateWindow } from "./rate-window.ts";

/** How a running job publishes its progress: within its rate, the latest one held back to be sent when the window frees. */
interface ProgressOutlet {
  window: RateWindow;
  held?: NodeJS.Timeout;
  /** the progress this attempt published last: a row read later that has not moved past it is not news */
  published?: { current: number; total: number };
}

export class JobPublisher {
  /** the progress outlets of the jobs this process runs, by processing id */
  private readonly outlets = new Map<string, ProgressOutlet>();

  constructor(
    private readonly events: EventBus,
    private readonly repository: Pick<JobRepository, "current">,
    private readonly progressEventsPerSecond: number,
  ) {}

  /** Every change of a job goes to its domain's topic: the job's own feed and the domain's dashboards read it. */
  publish(job: StatusRow): void {
    this.events.pubsub.publish(MULTIMEDIA_PROGRESS, job.domainId, statusOf(job));
  }

  /** An attempt has started the job (`row` as its start left it): published, and its progress outlet opened. */
  started(row: JobRecord): void {
    this.open(row.id).published = { current: row.current, total: row.total };
    this.publish(row);
  }

  /**
   * An attempt wrote its progress (`row` as the write left it): published at once within the
   * job's rate, else held back until the window frees, a later progress replacing it. A held
   * progress goes out unless the job has settled meanwhile.
   */
  progressed(row: JobRecord): void {
    const outlet = this.outlets.get(row.id) ?? this.open(row.id);
    clearTimeout(outlet.held);
    outlet.held = undefined;
    const wait = outlet.window.waitMs();
    if (wait === 0) {
      outlet.window.take();
      // the row of a fenced write is running in this attempt's hands: no need to read it again
      this.publishNews(row, outlet);
      return;
    }
    outlet.held = setTimeout(() => {
      outlet.held = undefined;
      outlet.window.take();
      void this.publishCurrent({ id: row.id, domainId: row.domainId }, outlet).catch((error: unknown) =>
        log.error("multimedia progress publish failed", { job: row.id, error }),
      );
    }, wait);
    outlet.held.unref();
  }

  /** The job left this process's hands (settled, superseded, given back): nothing held back may follow. */
  close(processingId: string): void {
    clearTimeout(this.outlets.get(processingId)?.held);
    this.outlets.delete(processingId);
  }

  private open(processingId: string): ProgressOutlet {
    this.close(processingId);
    const outlet: ProgressOutlet = { window: new RateWindow(this.progressEventsPerSecond) };
    this.outlets.set(processingId, outlet);
    return outlet;
  }

  /**
   * A held-back send publishes the job's row as it is when the send fires, if it is still running
   * in this outlet's hands (a held-back progress after the end would move it backwards). That row
   * may already hold a later progress than the one held: a send that fires while the next entry's
   * write commits reads that next entry, whose own send then finds it published already.
   */
  private async publishCurrent(job: JobKey, outlet: ProgressOutlet): Promise<void> {
    const row = await this.repository.current(job);
    if (row?.status !== "running") return;
    this.publishNews(row, outlet);
  }

  /**
   * Publishes `row` if this outlet still holds its job and its progress moved since the last one
   * published. Each progress goes on the bus once, in order: every subscriber would otherwise get
   * the same progress twice, or an older one after a newer.
   */
  private publishNews(row: JobRecord, outlet: ProgressOutlet): void {
    if (this.outlets.get(row.id) !== outlet || !movedPast(row, outlet.published)) return;
    outlet.published = { current: row.current, total: row.total };
    this.publish(row);
  }
}

/** Whether a running job's progress is news after `published`: further on, or the same count of another total. */
function movedPast(row: { current: number; total: number }, published: ProgressOutlet["published"]): boolean {
  if (!published) return true;
  return row.current > published.current || (row.current === published.current && row.total !== published.total);
}
