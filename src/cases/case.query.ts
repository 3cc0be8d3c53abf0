import { badInput } from "../errors.ts";
import { parseDateValue, rangeBound, type RangeOp } from "../util/dates.ts";

/**
 * The list query of CONTRACT §2 "List" as a typed command, and its value rules. REST builds it from
 * its query string (case.query.rest.ts), GraphQL from `CaseFilterInput` (case.resolver.ts); the
 * read service checks it here, so both faces give one message for one mistake. Repeated values of
 * one filter OR; different filters AND. Some messages name the REST parameters: the contract's words.
 */

export const MAX_LIMIT = 5000;
export const DEFAULT_LIMIT = 20;

export const EXACT_FIELDS = ["external_id", "case_type", "owner_id", "case_name"] as const;
export type ExactField = (typeof EXACT_FIELDS)[number];

export const DATE_FIELDS = ["last_modified", "server_last_modified", "indexed_on", "date_opened", "date_closed"] as const;
export type DateField = (typeof DATE_FIELDS)[number];
export const RANGE_OPS: readonly RangeOp[] = ["gt", "gte", "lt", "lte"];

/** One date filter (`last_modified.gte=…`): its values, as given, are ORed. */
export interface DateRange {
  field: DateField;
  op: RangeOp;
  values: string[];
}

export interface CaseQuery {
  limit: number;
  exact: Partial<Record<ExactField, string[]>>;
  closed?: boolean[];
  /** property name to the values it may have */
  properties: Map<string, string[]>;
  /** index name to the case ids it may point at */
  indices: Map<string, string[]>;
  ranges: DateRange[];
}

/** The list position after which a page starts: the last (indexed_on, case_id) seen, at full precision. */
export interface Keyset {
  indexedOn: string;
  caseId: string;
}

export interface Bound {
  op: ">" | ">=" | "<" | "<=";
  at: string;
}

/** A checked query, as the repository runs it: each date filter's values turned into bounds. */
export interface CaseFilter extends Omit<CaseQuery, "ranges"> {
  ranges: { field: DateField; bounds: Bound[] }[];
}

export const invalidParameter = (key: string) => badInput(`'${key}' is not a valid parameter.`);
export const invalidLimit = (shown: string) => badInput(`'${shown}' is not a valid value for 'limit'`);

/** A page size: a whole number from 1 to MAX_LIMIT. */
export function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) throw invalidLimit(String(limit));
  if (limit > MAX_LIMIT) throw badInput(`You cannot request more than ${MAX_LIMIT} cases per request.`);
  return limit;
}

/** The query's rules in the order the contract reports them: filter names, then limit, then dates. */
export function checkQuery(query: CaseQuery): CaseFilter {
  if (query.properties.has("")) throw invalidParameter("properties.");
  if (query.indices.has("")) throw invalidParameter("indices.");
  checkLimit(query.limit);
  const ranges = query.ranges.map(({ field, op, values }) => ({ field, bounds: values.map((v) => rangeBound(op, parseDateValue(v))) }));
  return { ...query, ranges };
}
