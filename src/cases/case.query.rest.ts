import { badInput } from "../errors.ts";
import type { QueryParameter, QueryParameterFamily } from "../openapi/schema.ts";
import type { RangeOp } from "../util/dates.ts";
import { isSelectionParam, parseFieldSelection, type FieldSelection } from "./case.fields.ts";
import {
  checkLimit,
  DATE_FIELDS,
  DEFAULT_LIMIT,
  EXACT_FIELDS,
  invalidLimit,
  invalidParameter,
  MAX_FILTER_VALUES,
  MAX_LIMIT,
  MAX_NAMED_FILTERS,
  RANGE_OPS,
  type CaseQuery,
  type DateField,
  type ExactField,
} from "./case.query.ts";

/**
 * The query-string grammar of the Case API's reads (CONTRACT §2 "List", "Single and multi reads"):
 * parameter names as the seed lists them, `limit` and `closed` as text, field selection. It turns
 * the parameters into the typed `CaseQuery`, whose value rules the read service checks. Used by
 * case.rest.ts only.
 */

export type Params = [string, string][];

/**
 * The list's parameters by name, which `parseListParams` accepts and the OpenAPI document lists
 * (case.openapi.ts), besides field selection and the named filters below.
 */
export const LIST_PARAMETERS: readonly QueryParameter[] = [
  {
    name: "limit",
    description: `page size, default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}; the last one given counts`,
    schema: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
  },
  ...EXACT_FIELDS.map((name) => ({
    name,
    description: `exact match; repeat the parameter (at most ${MAX_FILTER_VALUES} times) to match any of several values`,
    schema: { type: "string" },
    repeatable: true,
  })),
  {
    name: "closed",
    description: "'', false, f, no, n, 0 (any case) mean false; anything else true; repeated, any of the values",
    schema: { type: "string" },
    repeatable: true,
  },
  ...DATE_FIELDS.flatMap((field) =>
    RANGE_OPS.map((op) => ({
      name: `${field}.${op}`,
      description: "a date YYYY-MM-DD (the whole day) or an ISO 8601 datetime (naive = UTC); repeated, any of the values",
      schema: { type: "string" },
      repeatable: true,
    })),
  ),
];

/** `properties.{name}` and `indices.{name}`: a filter per name. */
export const LIST_FILTERS: QueryParameterFamily = {
  name: "filters",
  description:
    "`properties.{name}=value`: exact, case-sensitive match on a property (empty matches unset or empty); " +
    "`indices.{name}={case_id}`: cases whose index {name} points at that case (e.g. `indices.parent`, `indices.host`). " +
    `Repeat a filter to match any of its values; any filter takes at most ${MAX_FILTER_VALUES} values; ` +
    `at most ${MAX_NAMED_FILTERS} property and index filters per request (400 beyond).`,
  pattern: "^(properties|indices)\\.(?!$)",
  schema: { type: "string" },
};

const LIST_NAMES = new Set(LIST_PARAMETERS.map((p) => p.name));
const FILTER_NAME = new RegExp(LIST_FILTERS.pattern);

const FALSE_WORDS = new Set(["", "false", "f", "no", "n", "0"]);

function parseClosed(value: string): boolean {
  return !FALSE_WORDS.has(value.toLowerCase());
}

/** The last `limit` given must be a whole number; its maximum is checked here too, before field selection. */
function parseLimit(values: string[] | undefined): number {
  if (!values?.length) return DEFAULT_LIMIT;
  const raw = values[values.length - 1];
  if (!/^\s*\+?\d+\s*$/.test(raw) || Number(raw) < 1) throw invalidLimit(raw);
  return checkLimit(Number(raw));
}

/** The values of each parameter name, names in the order first given. */
function group(params: Params): Map<string, string[]> {
  const grouped = Map.groupBy(params, ([key]) => key);
  return new Map([...grouped].map(([key, pairs]) => [key, pairs.map(([, value]) => value)]));
}

const isDateField = (name: string): name is DateField => (DATE_FIELDS as readonly string[]).includes(name);
/** A list's includes, not `key in object`, which would also accept `toString`, `constructor`, `__proto__`…. */
const isExactField = (name: string): name is ExactField => (EXACT_FIELDS as readonly string[]).includes(name);

/** Checks every parameter name, in the order given, before any value is interpreted. */
function checkNames(params: Params): void {
  for (const [key] of params) {
    if (LIST_NAMES.has(key) || isSelectionParam(key) || FILTER_NAME.test(key)) continue;
    // a date field with an unknown range: the contract names the range
    const dot = key.indexOf(".");
    if (dot >= 0 && isDateField(key.slice(0, dot))) throw badInput(`'${key.slice(dot + 1)}' is not a valid type of date range.`);
    throw invalidParameter(key);
  }
}

/** The parameters of a list request without `cursor`: the query, and the field selection of its cases. */
export function parseListParams(params: Params): { query: CaseQuery; selection: FieldSelection } {
  checkNames(params);
  const grouped = group(params);
  const limit = parseLimit(grouped.get("limit"));
  const selection = parseFieldSelection(params);
  const query: CaseQuery = { limit, exact: {}, properties: new Map(), indices: new Map(), ranges: [] };
  for (const [key, values] of grouped) {
    if (isExactField(key)) query.exact[key] = values;
    else if (key === "closed") query.closed = values.map(parseClosed);
    else if (key.startsWith("properties.")) query.properties.set(key.slice("properties.".length), values);
    else if (key.startsWith("indices.")) query.indices.set(key.slice("indices.".length), values);
    else {
      const [field, op] = key.split(".");
      if (op && isDateField(field)) query.ranges.push({ field, op: op as RangeOp, values });
    }
  }
  return { query, selection };
}

/** Single and multi reads and writes take only field selection (CONTRACT §2 "Single and multi reads"). */
export function parseSelection(params: Params): FieldSelection {
  for (const [key] of params) {
    if (!isSelectionParam(key)) throw invalidParameter(key);
  }
  return parseFieldSelection(params);
}
