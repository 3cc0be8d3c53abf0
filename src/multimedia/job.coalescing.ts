import { isSettled, type JobState, type MultimediaStatus } from "./job.events.ts";
import { RateWindow } from "./rate-window.ts";

/**
 * The feed of job events one subscription delivers (CONTRACT §5, §7.4), with progress coalescing:
 * of each job's progress events at most `perSecond` in any one-second window reach the subscriber;
 * one over the bound is held, replaced by any later one, and the latest held goes out as soon as
 * the window allows. A job's first event in the feed, every state change and the final event
 * always pass at once (a state change drops the progress it supersedes), and progress never moves
 * backwards within a state and attempt (a retried job's new attempt counts as a change), nor
 * repeats: the job's state read at start and the same event heard just before that read (it comes
 * back through LISTEN a moment later on PostgreSQL) reach the subscriber once.
 *
 * Progress not yet taken by the subscriber is replaced by a newer one of the same job, state and
 * attempt (latest wins): the transport takes the next event once the last one is sent, so a
 * process with more subscribers than it can send to at the full rate delivers each the latest
 * progress a little less often, instead of a backlog that grows behind it (5,000 subscribers on a
 * process fell 6 s behind).
 *
 * It listens from the moment it is made, with a handler the bus calls as each event arrives (no
 * iterator per subscription in between); `start(now)` opens delivery with the job's state read
 * after that (events heard before it are then replayed behind it, the older ones dropped), so no
 * change in between is lost. `return()` ends it at once, even while a read is pending.
 */

/** Starts calling `hear` with each event of the feed's domain; returns what stops it. */
export type FeedSource = (hear: (status: MultimediaStatus) => void) => () => void;

export interface FeedOptions {
  perSecond: number;
  /** the events of this feed (its job, its app) */
  accept: (status: MultimediaStatus) => boolean;
  /** end the feed after the first settled event (a job's own feed) */
  endWhenSettled?: boolean;
}

/** Takes the feed's next event (or its end) when it comes (subscription-events.ts's deliveries). */
interface FeedTaker {
  take(result: IteratorResult<MultimediaStatus>): void;
}

interface JobOutlet {
  window: RateWindow;
  state: JobState;
  /** a new attempt starts its progress again from 0: a change like a state change */
  attempts: number;
  current: number;
  total: number;
  held?: MultimediaStatus;
  timer?: NodeJS.Timeout;
}

export class JobFeed implements AsyncIterableIterator<MultimediaStatus> {
  private readonly jobs = new Map<string, JobOutlet>();
  /** events emitted and not yet taken; `progress`: a newer progress of its job may replace it */
  private readonly ready: { status: MultimediaStatus; progress: boolean }[] = [];
  /** events heard before start() */
  private early: MultimediaStatus[] | undefined = [];
  private waiting: FeedTaker | undefined;
  private ended = false;
  private readonly stopListening: () => void;

  constructor(
    source: FeedSource,
    private readonly options: FeedOptions,
  ) {
    this.stopListening = source((status) => this.hear(status));
  }

  /** Opens delivery: `now` first (when given), then what was heard meanwhile. */
  start(now?: MultimediaStatus): this {
    const heard = this.early ?? [];
    this.early = undefined;
    if (now) this.offer(now);
    for (const status of heard) this.offer(status);
    return this;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<MultimediaStatus>> {
    return new Promise((resolve) => this.pull({ take: resolve }));
  }

  /**
   * next() without its promise: `taker` gets the next event (or the end) at once when there is
   * one, else as it comes. A WebSocket subscription's events go so (subscription-events.ts): at
   * thousands of subscribers, a promise per event and subscriber was a good part of a delivery.
   */
  pull(taker: FeedTaker): void {
    const first = this.ready.shift();
    if (first) taker.take({ value: first.status, done: false });
    else if (this.ended) taker.take({ value: undefined, done: true });
    else this.waiting = taker;
  }

  async return(): Promise<IteratorResult<MultimediaStatus>> {
    this.end();
    this.ready.length = 0;
    return { value: undefined, done: true };
  }

  private hear(status: MultimediaStatus): void {
    if (this.ended || !this.options.accept(status)) return;
    if (this.early) this.early.push(status);
    else this.offer(status);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const job of this.jobs.values()) clearTimeout(job.timer);
    this.stopListening();
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting && !this.ready.length) waiting.take({ value: undefined, done: true });
  }

  private emit(status: MultimediaStatus, progress = false): void {
    if (this.ended) return;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting.take({ value: status, done: false });
    else if (!(progress && this.replaceProgress(status))) this.ready.push({ status, progress });
    if (this.options.endWhenSettled && isSettled(status.state)) this.end();
  }

  /** Puts `status` in the place of its job's progress still waiting, if the job's last waiting event is one. */
  private replaceProgress(status: MultimediaStatus): boolean {
    const last = this.ready.findLastIndex((waiting) => waiting.status.id === status.id);
    if (last < 0 || !this.ready[last]!.progress) return false;
    this.ready[last] = { status, progress: true };
    return true;
  }

  private offer(status: MultimediaStatus): void {
    const job = this.jobs.get(status.id);
    if (!job || job.state !== status.state || job.attempts !== status.attempts || isSettled(status.state)) {
      const now = { state: status.state, attempts: status.attempts, current: status.current, total: status.total };
      if (job) {
        clearTimeout(job.timer);
        Object.assign(job, { timer: undefined, held: undefined, ...now });
      } else {
        this.jobs.set(status.id, { window: new RateWindow(this.options.perSecond), ...now });
      }
      this.emit(status);
      return;
    }
    // an event older than the one already sent (or held) would move the progress backwards, the same one repeat it
    if (status.current < job.current || (status.current === job.current && status.total === job.total)) return;
    job.current = status.current;
    job.total = status.total;
    if (!job.held && job.window.take()) {
      this.emit(status, true);
      return;
    }
    job.held = status;
    job.timer ??= setTimeout(() => this.release(job), job.window.waitMs()).unref();
  }

  private release(job: JobOutlet): void {
    job.timer = undefined;
    if (!job.held) return;
    if (!job.window.take()) {
      job.timer = setTimeout(() => this.release(job), Math.max(1, job.window.waitMs())).unref();
      return;
    }
    const held = job.held;
    job.held = undefined;
    this.emit(held, true);
  }
}
