import type { ComplexityEstimator } from "graphql-query-complexity";
import { badInput } from "../errors.ts";

/**
 * Relation lists (a case's children, a location's descendants, …) hold as many items as the data
 * has, so each takes a `first` argument with a default and a maximum. The cost estimate multiplies
 * what the field selects by that bound, so that nesting them prices the real worst case, and the
 * resolver returns no more than `first` items.
 */
export interface ListBound {
  /** items returned when `first` is omitted */
  defaultSize: number;
  /** the largest `first` accepted */
  maxSize: number;
}

/** The bound of relation lists: enough for ordinary reads, small enough that two levels stay cheap. */
export const RELATION_LIST: ListBound = { defaultSize: 100, maxSize: 1000 };

/** The `first` argument's description, which says what happens beyond the bound. */
export function firstDescription(bound: ListBound, beyond: string): string {
  return `at most this many (default ${bound.defaultSize}, at most ${bound.maxSize}); ${beyond}`;
}

/** The number of items to return, or the client's error for a `first` outside 1..maxSize. */
export function listSize(first: number | null | undefined, bound: ListBound): number {
  const size = first ?? bound.defaultSize;
  if (size < 1 || size > bound.maxSize) throw badInput(`'first' must be between 1 and ${bound.maxSize}.`);
  return size;
}

/** The cost of a bounded list: one for the field, plus `first` times what each item selects. */
export function boundedListCost(bound: ListBound): ComplexityEstimator {
  return ({ args, childComplexity }) => 1 + Math.max(0, Number(args.first ?? bound.defaultSize)) * childComplexity;
}

/** The cost of a field that returns one item per id it is given (each id in each list argument). */
export function perIdCost(...idArguments: string[]): ComplexityEstimator {
  return ({ args, childComplexity }) => {
    const ids = idArguments.reduce((sum, name) => sum + (Array.isArray(args[name]) ? args[name].length : 0), 0);
    return 1 + ids * childComplexity;
  };
}
