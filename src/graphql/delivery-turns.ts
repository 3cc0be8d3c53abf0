/**
 * Turns of the event loop for sending subscription events, a slice of deliveries at a time. An
 * event that thousands of subscriptions of the process receive is otherwise sent to all of them
 * in one unbroken run of promise callbacks (tens of microseconds each: a socket write, a
 * serialisation), during which nothing else of the process runs: a 5,000-subscriber process spent
 * a third of a second per progress event that way, so a running multimedia job, whose every step
 * waits on a database answer, got one step in per event and crawled (1,146 of 5,000 entries in ten
 * minutes). Between slices the loop serves its I/O: requests, database answers, the job.
 *
 * Turns are taken in order, so each subscription's events keep theirs (a subscription takes its
 * next event only once the last one is sent).
 */
/** A delivery waiting for its turn: an object, so that the deliveries that go by callback make no closure per event. */
export interface Turn {
  inTurn(): void;
}

export class DeliveryTurns {
  private readonly waiting: Turn[] = [];

  constructor(private readonly perTurn: number) {}

  /** Resolves when this delivery may go out: with the first slice that has room for it. */
  take(): Promise<void> {
    return new Promise((resolve) => this.enqueue({ inTurn: resolve }));
  }

  /**
   * Calls `turn.inTurn()` in the first slice that has room for it: take() without its promise, for
   * the deliveries that go by callback. It must not throw (the rest of its slice would be lost).
   */
  enqueue(turn: Turn): void {
    // a slice is set whenever deliveries wait: the first to wait sets it
    if (this.waiting.push(turn) === 1) setImmediate(this.release);
  }

  private readonly release = () => {
    const slice = this.waiting.splice(0, this.perTurn);
    // the next slice is set for the loop's next turn, after the I/O that came in meanwhile
    if (this.waiting.length > 0) setImmediate(this.release);
    for (const turn of slice) turn.inTurn();
  };
}
