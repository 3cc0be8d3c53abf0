import { getOrCreate } from "../util/maps.ts";
import { createSourceEventStream, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult } from "graphql";
import { subscriptionEvents } from "../observability/metrics.ts";
import type { ByteTally } from "./budget.ts";
import type { GraphQLContext } from "./context.ts";
import { DeliveryTurns } from "./delivery-turns.ts";

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
 */

/** An event's result as it is sent: errors formatted, an aborted event as its one error. */
export type WireResult = FormattedExecutionResult;

export interface SubscriptionEventsOptions {
  /** a context for one event's execution */
  context: (principal: GraphQLContext["principal"]) => GraphQLContext;
  /** the executor of every operation (compiled-execution.ts): an event's selection runs on the event as root value */
  execute: (args: ExecutionArgs) => Promise<ExecutionResult>;
  /** the result of an execution (an event's or an operation's) as it is sent */
  wire: (args: ExecutionArgs, result: Pick<ExecutionResult, "errors">) => WireResult;
}

/**
 * Deliveries per turn of the event loop (delivery-turns.ts): at about 70 µs each, a slice of a few
 * milliseconds, after which the process answers whatever I/O came in meanwhile.
 */
const DELIVERIES_PER_TURN = 64;

export class SubscriptionEvents {
  private readonly turns = new DeliveryTurns(DELIVERIES_PER_TURN);
  private readonly results = new WeakMap<object, Map<string, Promise<WireResult>>>();
  /** the bytes each event's executions made, by user */
  private readonly tallies = new WeakMap<object, Map<string, ByteTally>>();
  private readonly documentIds = new WeakMap<object, number>();
  private readonly wired = new WeakSet<object>();
  private documents = 0;

  constructor(private readonly options: SubscriptionEventsOptions) {}

  /** graphql-js's `subscribe`, with each event's execution shared by the subscriptions of one selection. */
  readonly subscribe = async (args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> => {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source;
    const selection = this.selectionKey(args);
    // the events are results as they are sent (isWire), typed as graphql-ws expects them, each
    // sent in its turn (DeliveryTurns)
    return mapEvents(source[Symbol.asyncIterator](), async (event) => {
      const result = await this.resultOf(event, selection, args);
      await this.turns.take();
      return result as ExecutionResult;
    });
  };

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

  private resultOf(event: unknown, selection: string, args: ExecutionArgs): Promise<WireResult> {
    if (typeof event !== "object" || event === null) return this.run(event, args);
    const ofEvent = getOrCreate(this.results, event, () => new Map<string, Promise<WireResult>>());
    const shared = ofEvent.get(selection);
    if (shared) {
      subscriptionEvents.inc({ execution: "shared" });
      return shared;
    }
    const result = this.run(event, args);
    ofEvent.set(selection, result);
    return result;
  }

  private async run(event: unknown, args: ExecutionArgs): Promise<WireResult> {
    subscriptionEvents.inc({ execution: "executed" });
    const contextValue = this.options.context((args.contextValue as GraphQLContext).principal);
    // a context without a budget (budget.ts runs one unbudgeted) has nothing to count
    if (typeof event === "object" && event !== null) contextValue.budget?.share(this.tallyOf(event, contextValue.principal.userId));
    const eventArgs = { ...args, rootValue: event, contextValue };
    const result = this.options.wire(eventArgs, await this.options.execute(eventArgs));
    this.wired.add(result);
    return result;
  }

  private tallyOf(event: object, userId: string): ByteTally {
    const byUser = getOrCreate(this.tallies, event, () => new Map<string, ByteTally>());
    return getOrCreate(byUser, userId, () => ({ bytes: 0 }));
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
