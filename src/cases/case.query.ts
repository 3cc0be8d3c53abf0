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

/**
 * The most values one filter ORs (`owner_id=a&owner_id=b…`, a property's or an index's values, a
 * date range's) and the most property and index filters one query ANDs. Each property value is a
 * condition of its own: 250 of them ran the embedded database out of memory, 20,000 held a
 * PostgreSQL connection for minutes (security review 2026-11-26, G4).
 */
export const MAX_FILTER_VALUES = 100;
export const MAX_NAMED_FILTERS = 20;

export const EXACT_FIELDS = ["external_id", "case_type", "owner_id", "case_name"] as const;
export type ExactField = (typeof EXACT_FIELDS)[number];

export const DATE_FIELDS = ["last_modified", "server_last_modified", "indexed_on", "date_opened", "date_closed"] as const;
export type DateField = (typeof DATE_FIELDS)[number];
export const RANGE_OPS: readonly RangeOp[] = ["gt", "gte", "lt", "lte"];

/** One date filter (`last_modified.gte=…`): its values, as given, are ORed. */
interface DateRange {
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

/** REST's list position after which a page starts (its signed cursor's): the last (indexed_on, case_id) seen, at full precision. */
export interface Keyset {
  indexedOn: string;
  caseId: string;
}

/** The columns a list can be ordered by (GraphQL's `orderBy`); REST lists by indexed_on only. */
export const ORDER_FIELDS = ["indexed_on", "last_modified", "server_last_modified", "date_opened", "date_closed", "case_name"] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];

/**
 * The list's order: by one column, ascending or descending, ties broken by case_id in the same
 * direction so that the order is total. Cases without a value (an open case's date_closed) come
 * last in either direction.
 */
export interface CaseOrder {
  field: OrderField;
  direction: "asc" | "desc";
}

/** REST's only order: indexed_on ascending, then case_id. */
export const REST_ORDER: CaseOrder = { field: "indexed_on", direction: "asc" };

/**
 * A case's place in an ordered list: its value of the order's column as text at the column's full
 * precision (a time to the microsecond; null when the case has none), and its id.
 */
export interface Position {
  value: string | null;
  caseId: string;
}

/**
 * A part of the list (a GraphQL connection page): up to `size` cases strictly between `after` and
 * `before` (either may be absent) in the list's `order`, from the start of that window, or from its
 * end when `backward`.
 */
export interface CaseSlice {
  order: CaseOrder;
  size: number;
  backward: boolean;
  after?: Position;
  before?: Position;
}

interface Bound {
  op: ">" | ">=" | "<" | "<=";
  at: string;
}

/** The filters of a list query, without its page size: what GraphQL's `cases(filter)` gives. */
export type CaseQueryFilter = Omit<CaseQuery, "limit">;

/** Checked filters, as the repository runs them: each date filter's values turned into bounds. */
export interface CaseFilter extends Omit<CaseQueryFilter, "ranges"> {
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

/** The query's rules in the order the contract reports them: filter names and sizes, then limit, then dates. */
export function checkQuery({ limit, ...filter }: CaseQuery): CaseFilter {
  checkFilterNames(filter);
  checkFilterSizes(filter);
  checkLimit(limit);
  return withDateBounds(filter);
}

/** The rules of the filters alone (GraphQL's page sizes are the connection's): names and sizes, then dates. */
export function checkFilter(filter: CaseQueryFilter): CaseFilter {
  checkFilterNames(filter);
  checkFilterSizes(filter);
  return withDateBounds(filter);
}

function checkFilterNames(filter: CaseQueryFilter): void {
  if (filter.properties.has("")) throw invalidParameter("properties.");
  if (filter.indices.has("")) throw invalidParameter("indices.");
}

/** At most MAX_FILTER_VALUES values in any one filter, and at most MAX_NAMED_FILTERS property and index filters. */
function checkFilterSizes(filter: CaseQueryFilter): void {
  if (filter.properties.size + filter.indices.size > MAX_NAMED_FILTERS) {
    throw badInput(`You cannot filter on more than ${MAX_NAMED_FILTERS} properties and indices per request.`);
  }
  const valueLists = [
    ...Object.values(filter.exact),
    filter.closed ?? [],
    ...filter.properties.values(),
    ...filter.indices.values(),
    ...filter.ranges.map((range) => range.values),
  ];
  if (valueLists.some((values) => (values?.length ?? 0) > MAX_FILTER_VALUES)) {
    throw badInput(`You cannot give more than ${MAX_FILTER_VALUES} values to one filter.`);
  }
}

function withDateBounds(filter: CaseQueryFilter): CaseFilter {
  const ranges = filter.ranges.map(({ field, op, values }) => ({ field, bounds: values.map((v) => rangeBound(op, parseDateValue(v))) }));
  return { ...filter, ranges };
}
