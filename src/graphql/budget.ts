import {
  GraphQLError,
  defaultFieldResolver,
  getNamedType,
  isObjectType,
  isAbstractType,
  type GraphQLField,
  type FormattedExecutionResult,
  type GraphQLFieldResolver,
  type GraphQLFormattedError,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationTypeNode,
} from "graphql";
import { carriesText, jsonBytes, resultBytes } from "./result-bytes.ts";

/**
 * A per-operation budget that aborts what the cost estimate let through: the objects an operation
 * produces (each object and each item of an object list, counted where a resolver returns them),
 * the bytes of text they carry (keys, strings and JSON values, counted as they resolve:
 * result-bytes.ts) and its running time. Once any is spent, every further object resolver throws,
 * so the rest of the operation finishes at once and memory stays bounded; the transport then
 * answers one error (RESULT_TOO_LARGE or QUERY_TIMEOUT) instead of the partial result.
 */

export interface BudgetLimits {
  /** most objects one operation (or one subscription event) may produce */
  maxObjects: number;
  /** longest one operation (or one subscription event) may run, in milliseconds */
  maxMs: number;
  /** most bytes of text one operation's result (or one subscription event's, per user) may carry */
  maxBytes: number;
}

/** Bytes counted together by several executions: the results one subscription event makes for one user. */
export interface ByteTally {
  bytes: number;
}

export class ExecutionBudget {
  private objects = 0;
  private bytes = 0;
  private tally: ByteTally | undefined;
  private deadline = 0;
  private spent: GraphQLError | undefined;

  constructor(private readonly limits: BudgetLimits) {
    this.restart();
  }

  /** A fresh budget, for the next event of a subscription. */
  restart(): void {
    this.objects = 0;
    this.bytes = 0;
    this.deadline = performance.now() + this.limits.maxMs;
    this.spent = undefined;
  }

  /**
   * Counts this execution's bytes in `tally` too, against the same limit: each subscription
   * of a user with its own selection executes an event apart, and a hundred of them are the
   * hundred aliases of one query.
   */
  share(tally: ByteTally): void {
    this.tally = tally;
  }

  /** A fresh clock, objects still counted: a mutation's write is not part of its reading's time. */
  restartClock(): void {
    this.deadline = performance.now() + this.limits.maxMs;
  }

  /** The error that aborted the operation, once the budget is spent. */
  get error(): GraphQLError | undefined {
    return this.spent;
  }

  /** Throws once the budget is spent or the time is up. */
  check(): void {
    if (this.spent) throw this.spent;
    if (performance.now() > this.deadline) throw this.spend(timeoutError(this.limits.maxMs));
  }

  /** Counts `count` more objects; throws when they exceed the budget (and drops them with the throw). */
  charge(count: number): void {
    this.check();
    this.objects += count;
    if (this.objects > this.limits.maxObjects) throw this.spend(tooLargeError(this.limits.maxObjects));
  }

  /** Counts `count` more bytes of text; throws when they exceed the budget. */
  chargeBytes(count: number): void {
    this.check();
    if (this.tally) this.tally.bytes += count;
    else this.bytes += count;
    if ((this.tally?.bytes ?? this.bytes) > this.limits.maxBytes) throw this.spend(tooManyBytesError(this.limits.maxBytes));
  }

  private spend(error: GraphQLError): GraphQLError {
    this.spent = error;
    return error;
  }
}

function tooLargeError(maxObjects: number): GraphQLError {
  return new GraphQLError(`Query result is too large: it exceeds the limit of ${maxObjects} objects. Ask for smaller pages or fewer relations.`, {
    extensions: { code: "RESULT_TOO_LARGE" },
  });
}

function tooManyBytesError(maxBytes: number): GraphQLError {
  return new GraphQLError(
    `Query result is too large: it exceeds the limit of ${maxBytes} bytes. Ask for smaller pages, fewer relations or fewer large fields.`,
    { extensions: { code: "RESULT_TOO_LARGE" } },
  );
}

function timeoutError(maxMs: number): GraphQLError {
  return new GraphQLError(`Query took too long: it exceeds the limit of ${maxMs} ms. Ask for smaller pages or fewer relations.`, {
    extensions: { code: "QUERY_TIMEOUT" },
  });
}

/**
 * The whole answer of a query or subscription event its budget aborted: that one error, no partial
 * data. A mutation keeps its answer (its writes happened; the error stands on each field it cut).
 */
export function abortedResult(
  budget: ExecutionBudget | undefined,
  operation: OperationTypeNode | undefined,
): { data: null; errors: GraphQLFormattedError[] } | undefined {
  if (operation === "mutation") return undefined;
  const error = budget?.error;
  return error ? { data: null, errors: [{ message: error.message, extensions: error.extensions }] } : undefined;
}

/**
 * Apollo's serialisation of an HTTP answer (JSON and a newline), never a 500: an answer longer
 * than one JavaScript string can hold (RangeError: Invalid string length) answers RESULT_TOO_LARGE
 * instead. The byte budget keeps answers far below that; this is the last guard, at no cost.
 */
export function stringifyResult(maxBytes: number): (result: FormattedExecutionResult) => string {
  return (result) => {
    try {
      return `${JSON.stringify(result)}\n`;
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      const tooLarge = tooManyBytesError(maxBytes);
      return `${JSON.stringify({ errors: [{ message: tooLarge.message, extensions: tooLarge.extensions }], data: null })}\n`;
    }
  };
}

/** How many objects a resolver's value is: each item of a list, one object, none for null. */
function objectCount(value: unknown): number {
  if (value === null || value === undefined) return 0;
  return Array.isArray(value) ? value.length : 1;
}

type BudgetContext = { budget?: ExecutionBudget };

/** A resolver that checks the budget before it runs and charges what it returns. */
function budgeted(resolve: GraphQLFieldResolver<unknown, BudgetContext>, restart: boolean): GraphQLFieldResolver<unknown, BudgetContext> {
  return (source, args, context, info) => {
    const budget = context?.budget;
    if (!budget) return resolve(source, args, context, info);
    if (restart) budget.restart();
    budget.check();
    const value = resolve(source, args, context, info);
    if (!(value instanceof Promise)) return charged(budget, value, context, info);
    return value.then((resolved) => charged(budget, resolved, context, info));
  };
}

/** An object field's value, once the objects it returns and their text are counted. */
function charged<T>(budget: ExecutionBudget, value: T, context: unknown, info: GraphQLResolveInfo): T {
  budget.charge(objectCount(value));
  budget.chargeBytes(resultBytes(value, context, info));
  return value;
}

/**
 * A text field with a resolver of its own (a form's XML, a job's REST status, a file path): it
 * does not start once the budget is spent, and what it returns is counted.
 */
function budgetedText(resolve: GraphQLFieldResolver<unknown, BudgetContext>): GraphQLFieldResolver<unknown, BudgetContext> {
  return (source, args, context, info) => {
    const budget = context?.budget;
    if (!budget) return resolve(source, args, context, info);
    budget.check();
    const value = resolve(source, args, context, info);
    if (!(value instanceof Promise)) {
      budget.chargeBytes(jsonBytes(value));
      return value;
    }
    return value.then((resolved) => {
      budget.chargeBytes(jsonBytes(resolved));
      return resolved;
    });
  };
}

/** Whether a field returns objects (one or a list), which is what the budget counts. */
function returnsObjects(field: GraphQLField<unknown, unknown>): boolean {
  const type = getNamedType(field.type);
  return isObjectType(type) || isAbstractType(type);
}

/**
 * A mutation's root field: it does not start once the budget is spent (a later mutation of the
 * document is not run), it is not cut halfway (its write commits whole), and its time does not
 * count against the reading of what it selects.
 */
function budgetedWrite(resolve: GraphQLFieldResolver<unknown, BudgetContext>): GraphQLFieldResolver<unknown, BudgetContext> {
  return async (source, args, context, info) => {
    context?.budget?.check();
    const value = await resolve(source, args, context, info);
    context?.budget?.restartClock();
    return value;
  };
}

/**
 * Puts every object-returning field of `schema` under the operation's budget (the context's
 * `budget`), and every text field that has a resolver; a mutation's root fields as
 * `budgetedWrite` says. A subscription's root field resolves once per event, so it starts each
 * event's budget. Text fields without a resolver (a case's columns, its properties) are read
 * straight off their object, and counted with it: graphql-jit inlines such reads, which a
 * resolver of their own would undo.
 */
export function enforceBudget(schema: GraphQLSchema): void {
  const mutation = schema.getMutationType();
  const subscription = schema.getSubscriptionType();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve = field.resolve ?? defaultFieldResolver;
      if (type === mutation) field.resolve = budgetedWrite(resolve);
      else if (returnsObjects(field)) field.resolve = budgeted(resolve, type === subscription);
      else if (field.resolve && carriesText(field)) field.resolve = budgetedText(field.resolve);
    }
  }
}
