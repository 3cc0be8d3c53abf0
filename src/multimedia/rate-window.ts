/**
 * A sliding one-window rate bound: at most `limit` takes in any `windowMs`. Progress events are
 * bounded with it where a job publishes them and again in each subscription (CONTRACT §7.4).
 */
export class RateWindow {
  private readonly taken: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs = 1000,
  ) {}

  /** Takes a slot at `now` if the window has one free. */
  take(now = Date.now()): boolean {
    this.forget(now);
    if (this.taken.length >= this.limit) return false;
    this.taken.push(now);
    return true;
  }

  /** Marks `now` as taken whatever the window holds (an event that is never dropped). */
  force(now = Date.now()): void {
    this.forget(now);
    this.taken.push(now);
  }

  /** How long from `now` until a slot is free (0: one is free now). */
  waitMs(now = Date.now()): number {
    this.forget(now);
    if (this.taken.length < this.limit) return 0;
    return this.taken[this.taken.length - this.limit]! + this.windowMs - now;
  }

  private forget(now: number): void {
    while (this.taken.length && this.taken[0]! <= now - this.windowMs) this.taken.shift();
  }
}
