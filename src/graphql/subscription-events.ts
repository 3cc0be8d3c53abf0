import { getOrCreate } from "../util/maps.ts";
import { createSourceEventStream, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult } from "graphql";
import { subscriptionEvents } from "../observability/metrics.ts";
import type { ByteTally } from "./budget.ts";
import type { GraphQLContext } from "./context.ts";
import { DeliveryTurns, type Turn } from "./delivery-turns.ts";

/**
 * Subscription events executed once per event and selection, not once per subscriber (CONTRACT
 * §7.4: thousands of dashboards follow one domain's uploads). The bus hands the same event object
 * to every subscription of the process, so subscriptions of one user with the same document and
 * variables share the execution of each event, and the result as it goes on the wire. A 5,000
 * subscriber process otherwise executed the dashboard's selection 5,000 times per event, 50,000
 * times a second at the default progress rate, and fell minutes behind.
 *
 * Each event's selection runs through the executor of every operation (compiled-execution.ts),
 * under a fresh context of the subscriber's principal: its own budget (as any
 * event) and its own loaders, so that nothing read for one event is served stale for a later one.
 * The bytes of text one event's executions make for one user are counted together, against the
 * one limit of a result (GRAPHQL_MAX_RESULT_BYTES): a user's hundred subscriptions with a hundred
 * selections of one large event are a query with a hundred aliases, and past the limit the rest
 * of them get RESULT_TOO_LARGE for that event. A shared execution counts once.
 * Results are kept only as long as the event object lives (a WeakMap), so memory is bounded by the
 * events in flight.
 *
 * A subscription given an outlet (`sendThrough`: every WebSocket subscription of ws.ts) sends its
 * events itself: the shared result is serialised once per event and selection, and each
 * subscriber's `next` frame is that text with its own id spliced in, the bytes graphql-ws would
 * have written. graphql-ws stays the protocol's handler (handshake, subscribe, complete, errors);
 * only the per-event path around it (its emit step, a message object and a whole JSON.stringify
 * per subscriber) is skipped, which was most of a delivery's cost beside the socket write. A source
 * that can hand its next event to a taker (a job feed's `pull`) is followed by callbacks all the
 * way to the socket, with no promise per event and subscriber: at 10,000 subscribers those promise
 * turns were most of what a delivery cost beyond the raw socket's. Each such subscription is one
 * object (OutletFeed), not a set of closures: what a subscriber holds is the heap's main cost of a
 * wall of dashboards.
 */

/** An event's result as it is sent: errors formatted, an aborted event as its one error. */
export type WireResult = FormattedExecutionResult;

/** Where a subscription's events go: its `next` frames, sent by the transport. */
export interface EventOutlet {
  /** Sends one event: its result and that result's JSON text; resolves when the next one may follow. */
  send(result: WireResult, json: string): Promise<void> | void;
}

/** One event's result for one selection, and its JSON text once a subscriber's frame needs it. */
class SharedResult {
  private text: string | undefined;

  constructor(readonly result: WireResult) {}

  get json(): string {
    this.text ??= JSON.stringify(this.result);
    return this.text;
  }
}

/** Each shared result once made, by its promise: the subscriptions after the first take it without a turn of promises. */
const made = new WeakMap<Promise<SharedResult>, SharedResult>();

export interface SubscriptionEventsOptions {
  /** a context for one event's execution */
  context: (principal: GraphQLContext["principal"]) => GraphQLContext;
  /** the executor of every operation (compiled-execution.ts): an event's selection runs on the event as root value */
  execute: (args: ExecutionArgs) => Promise<ExecutionResult>;
  /** the result of an execution (an event's or an operation's) as it is sent */
  wire: (args: ExecutionArgs, result: Pick<ExecutionResult, "errors">) => WireResult;
}

/**
 * Deliveries per turn of the event loop (delivery-turns.ts): at tens of µs each, a slice of a few
 * milliseconds, after which the process answers whatever I/O came in meanwhile.
 */
const DELIVERIES_PER_TURN = 64;

export class SubscriptionEvents {
  private readonly turns = new DeliveryTurns(DELIVERIES_PER_TURN);
  private readonly results = new WeakMap<object, Map<string, Promise<SharedResult>>>();
  /** the outlets of subscriptions that send their own events, by their execution's context */
  private readonly outlets = new WeakMap<object, EventOutlet>();
  private readonly executed = subscriptionEvents.labels({ execution: "executed" });
  private readonly shared = subscriptionEvents.labels({ execution: "shared" });
  /** the bytes each event's executions made, by user */
  private readonly tallies = new WeakMap<object, Map<string, ByteTally>>();
  private readonly documentIds = new WeakMap<object, number>();
  private readonly wired = new WeakSet<object>();
  private documents = 0;
  private uncountedShared = 0;

  /** what each subscription sending through an outlet asks of this (one object for all of them) */
  private readonly deliveries: Deliveries = {
    turns: this.turns,
    resultOf: (event, selection, args) => this.resultOf(event, selection, args),
  };

  constructor(private readonly options: SubscriptionEventsOptions) {}

  /**
   * The subscription whose execution arguments carry `contextValue` (one per subscribe message)
   * sends its events through `outlet`: its iterator then yields none, and ends when its source does.
   */
  sendThrough(contextValue: object, outlet: EventOutlet): void {
    this.outlets.set(contextValue, outlet);
  }

  /** graphql-js's `subscribe`, with each event's execution shared by the subscriptions of one selection. */
  readonly subscribe = async (args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> => {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source;
    this.letGoOfLoaders(args.contextValue as GraphQLContext | undefined);
    const selection = this.selectionKey(args);
    const events = source[Symbol.asyncIterator]();
    const outlet = typeof args.contextValue === "object" && args.contextValue !== null ? this.outlets.get(args.contextValue) : undefined;
    // each event sent in its turn (DeliveryTurns), through the outlet, once the last one is: by
    // callbacks, from the source to the socket
    if (outlet) return new OutletFeed(this.deliveries, events, selection, args, outlet);
    // the events are results as they are sent (isWire), typed as graphql-ws expects them, each
    // sent in its turn (DeliveryTurns)
    return mapEvents(events, async (event) => {
      const { result } = await this.resultOf(event, selection, args);
      await this.turns.take();
      return result as ExecutionResult;
    });
  };

  /**
   * The subscription's own context served its subscribe resolver only (each event runs under a
   * fresh one, run()), but it lives as long as the subscription: what its loaders read and made at
   * subscribe (scopes, DataLoaders and their caches) is let go, a fresh set in their place.
   */
  private letGoOfLoaders(contextValue: GraphQLContext | undefined): void {
    if (contextValue?.loaders) contextValue.loaders = this.options.context(contextValue.principal).loaders;
  }

  /** Whether `result` is an event's result as it is sent already (not to be formatted again). */
  isWire(result: object): boolean {
    return this.wired.has(result);
  }

  /**
   * What makes two subscriptions' results for the same event the same: the document (one object
   * per text, ws.ts caches them), the operation, the variables and the user. Not the credential:
   * what a user may see is looked up by user, whichever credential admitted them.
   */
  private selectionKey(args: ExecutionArgs): string {
    const id = getOrCreate(this.documentIds, args.document, () => ++this.documents);
    const { principal } = args.contextValue as GraphQLContext;
    return JSON.stringify([id, args.operationName ?? null, args.variableValues ?? null, principal.userId]);
  }

  private resultOf(event: unknown, selection: string, args: ExecutionArgs): Promise<SharedResult> {
    if (typeof event !== "object" || event === null) return this.run(event, args);
    const ofEvent = getOrCreate(this.results, event, () => new Map<string, Promise<SharedResult>>());
    const shared = ofEvent.get(selection);
    if (shared) {
      this.countShared();
      return shared;
    }
    const result = this.run(event, args);
    ofEvent.set(selection, result);
    void result.then(
      (shared) => made.set(result, shared),
      () => {},
    );
    return result;
  }

  private async run(event: unknown, args: ExecutionArgs): Promise<SharedResult> {
    this.executed.inc();
    const contextValue = this.options.context((args.contextValue as GraphQLContext).principal);
    // a context without a budget (budget.ts runs one unbudgeted) has nothing to count
    if (typeof event === "object" && event !== null) contextValue.budget?.share(this.tallyOf(event, contextValue.principal.userId));
    const eventArgs = { ...args, rootValue: event, contextValue };
    const result = this.options.wire(eventArgs, await this.options.execute(eventArgs));
    this.wired.add(result);
    return new SharedResult(result);
  }

  /** Counted a turn of the loop at a time: a counter's labelled inc() per subscriber and event cost more than the rest of its bookkeeping. */
  private countShared(): void {
    if (this.uncountedShared++ === 0) setImmediate(this.flushShared);
  }

  private readonly flushShared = () => {
    this.shared.inc(this.uncountedShared);
    this.uncountedShared = 0;
  };

  private tallyOf(event: object, userId: string): ByteTally {
    const byUser = getOrCreate(this.tallies, event, () => new Map<string, ByteTally>());
    return getOrCreate(byUser, userId, () => ({ bytes: 0 }));
  }
}

/** Takes a source's next event (or its end) when it comes: a subscription sending through an outlet. */
interface EventTaker<T> {
  take(result: IteratorResult<T>): void;
}

/** A source that also hands its next event to a taker, without a promise (job.coalescing.ts's JobFeed). */
interface PullSource<T> extends AsyncIterator<T> {
  pull(taker: EventTaker<T>): void;
}

/** What an OutletFeed needs of its SubscriptionEvents. */
interface Deliveries {
  readonly turns: DeliveryTurns;
  resultOf(event: unknown, selection: string, args: ExecutionArgs): Promise<SharedResult>;
}

const DONE: IteratorResult<never> = { value: undefined, done: true };

/**
 * One subscription's events, each sent through its outlet once its shared result is made and its
 * turn comes, the next one taken from the source once the last one is sent. One object per
 * subscription, its own taker and turn: at 10,000 subscribers a dozen closures each (and their
 * contexts) were a good part of what a subscriber held in the heap.
 *
 * As an iterator it yields none: its next() settles when the source ends (or fails when the
 * source or a delivery fails, ending the source), and its return() ends the source at once, as
 * mapEvents' does; an event still waiting for its turn when it ends is not sent (its id may
 * already be a new subscription's).
 */
class OutletFeed implements AsyncIterableIterator<never>, EventTaker<unknown>, Turn {
  private ended = false;
  private started = false;
  private settle: { resolve: (result: IteratorResult<never>) => void; reject: (error: unknown) => void } | undefined;
  /** the result waiting for its turn */
  private due: SharedResult | undefined;
  /** whether the source hands its events to a taker (a job feed), else it is pulled by next() (a case feed) */
  private readonly pulls: boolean;

  constructor(
    private readonly deliveries: Deliveries,
    private readonly source: AsyncIterator<unknown>,
    private readonly selection: string,
    private readonly args: ExecutionArgs,
    private readonly outlet: EventOutlet,
  ) {
    this.pulls = typeof (source as Partial<PullSource<unknown>>).pull === "function";
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<never>> {
    if (this.started || this.ended) return Promise.resolve(DONE);
    this.started = true;
    return new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
      this.pullNext();
    });
  }

  async return(): Promise<IteratorResult<never>> {
    this.ended = true;
    await this.source.return?.();
    this.finish();
    return DONE;
  }

  async throw(error: unknown): Promise<IteratorResult<never>> {
    await this.return();
    throw error;
  }

  /** The source's next event, or its end. */
  take(next: IteratorResult<unknown>): void {
    if (next.done || this.ended) this.finish();
    else this.deliver(next.value);
  }

  /** Its turn (DeliveryTurns): sends the due result, unless it ended while it waited. */
  inTurn(): void {
    const shared = this.due;
    this.due = undefined;
    if (this.ended || !shared) {
      this.pullNext();
      return;
    }
    try {
      const sending = this.outlet.send(shared.result, shared.json);
      if (sending) sending.then(this.pullNext.bind(this), this.fail.bind(this));
      else this.pullNext();
    } catch (error) {
      this.fail(error);
    }
  }

  private deliver(event: unknown): void {
    const pending = this.deliveries.resultOf(event, this.selection, this.args);
    const shared = made.get(pending);
    if (shared) this.waitForTurn(shared);
    else pending.then(this.waitForTurn.bind(this), this.fail.bind(this));
  }

  private waitForTurn(shared: SharedResult): void {
    this.due = shared;
    this.deliveries.turns.enqueue(this);
  }

  private pullNext(): void {
    if (this.pulls) (this.source as PullSource<unknown>).pull(this);
    else this.source.next().then(this.take.bind(this), this.fail.bind(this));
  }

  private finish(): void {
    this.settle?.resolve(DONE);
  }

  private fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    void this.source.return?.();
    this.settle?.reject(error);
  }
}

/**
 * The source's events through `map`. Not an async generator: graphql-ws ends a subscription with
 * return(), which must end the source at once even while a next() waits for an event (a
 * generator's return waits for that next() to settle, so a quiet feed would never end).
 */
function mapEvents<T, R>(source: AsyncIterator<T>, map: (event: T) => Promise<R>): AsyncIterableIterator<R> {
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      const next = await source.next();
      if (next.done) return { value: undefined, done: true };
      try {
        return { value: await map(next.value), done: false };
      } catch (error) {
        // the consumer's for-await does not call return() after a failed next(): end the source here
        await source.return?.();
        throw error;
      }
    },
    async return() {
      await source.return?.();
      return { value: undefined, done: true };
    },
    async throw(error: unknown) {
      await source.return?.();
      throw error;
    },
  };
}
