import { badInput } from "../errors.ts";
import { parseDateValue, rangeBound, type RangeOp } from "../util/dates.ts";
import { isSelectionParam, parseFieldSelection, type FieldSelection } from "./case.fields.ts";

/**
 * The list query of CONTRACT §2 "List": parameters as the seed lists them. Repeating a parameter
 * ORs its values; different parameters AND. GraphQL filters are turned into the same parameters,
 * so both faces share every rule and message.
 */

export const MAX_LIMIT = 5000;
export const DEFAULT_LIMIT = 20;

export const EXACT_FIELDS = { external_id: "external_id", case_type: "case_type", owner_id: "owner_id", case_name: "case_name" } as const;
export type ExactField = keyof typeof EXACT_FIELDS;

export const DATE_FIELDS = ["last_modified", "server_last_modified", "indexed_on", "date_opened", "date_closed"] as const;
export type DateField = (typeof DATE_FIELDS)[number];
const RANGE_OPS: readonly RangeOp[] = ["gt", "gte", "lt", "lte"];

export interface Bound {
  op: ">" | ">=" | "<" | "<=";
  at: string;
}

export interface CaseQuery {
  limit: number;
  exact: Partial<Record<ExactField, string[]>>;
  closed?: boolean[];
  properties: Map<string, string[]>;
  indices: Map<string, string[]>;
  /** each entry is one parameter: its bounds are ORed */
  ranges: { field: DateField; bounds: Bound[] }[];
  selection: FieldSelection;
}

export type Params = [string, string][];

const FALSE_WORDS = new Set(["", "false", "f", "no", "n", "0"]);

export function parseClosed(value: string): boolean {
  return !FALSE_WORDS.has(value.toLowerCase());
}

export function parseLimit(values: string[] | undefined): number {
  if (!values?.length) return DEFAULT_LIMIT;
  const raw = values[values.length - 1];
  if (!/^\s*\+?\d+\s*$/.test(raw) || Number(raw) < 1) throw badInput(`'${raw}' is not a valid value for 'limit'`);
  const limit = Number(raw);
  if (limit > MAX_LIMIT) throw badInput(`You cannot request more than ${MAX_LIMIT} cases per request.`);
  return limit;
}

function group(params: Params): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const [key, value] of params) {
    const values = grouped.get(key);
    if (values) values.push(value);
    else grouped.set(key, [value]);
  }
  return grouped;
}

const isDateField = (name: string): name is DateField => (DATE_FIELDS as readonly string[]).includes(name);
/** Own keys only: `key in EXACT_FIELDS` would also accept `toString`, `constructor`, `__proto__`…. */
const isExactField = (name: string): name is ExactField => Object.hasOwn(EXACT_FIELDS, name);

/** Checks every parameter name, in the order given, before any value is interpreted. */
function checkNames(params: Params, extra: readonly string[]): void {
  for (const [key] of params) {
    if (isExactField(key) || key === "limit" || key === "closed" || extra.includes(key) || isSelectionParam(key)) continue;
    const dot = key.indexOf(".");
    const head = dot < 0 ? key : key.slice(0, dot);
    const tail = dot < 0 ? "" : key.slice(dot + 1);
    if ((head === "properties" || head === "indices") && tail) continue;
    if (isDateField(head) && dot >= 0) {
      if (!(RANGE_OPS as readonly string[]).includes(tail)) throw badInput(`'${tail}' is not a valid type of date range.`);
      continue;
    }
    throw badInput(`'${key}' is not a valid parameter.`);
  }
}

export function parseCaseQuery(params: Params, extraAllowed: readonly string[] = ["cursor"]): CaseQuery {
  checkNames(params, extraAllowed);
  const grouped = group(params);
  const query: CaseQuery = {
    limit: parseLimit(grouped.get("limit")),
    exact: {},
    properties: new Map(),
    indices: new Map(),
    ranges: [],
    selection: parseFieldSelection(params),
  };
  for (const [key, values] of grouped) {
    if (isExactField(key)) query.exact[key] = values;
    else if (key === "closed") query.closed = values.map(parseClosed);
    else if (key.startsWith("properties.")) query.properties.set(key.slice("properties.".length), values);
    else if (key.startsWith("indices.")) query.indices.set(key.slice("indices.".length), values);
    else {
      const [field, op] = key.split(".") as [string, RangeOp | undefined];
      if (op && isDateField(field)) {
        query.ranges.push({ field, bounds: values.map((v) => rangeBound(op, parseDateValue(v))) });
      }
    }
  }
  return query;
}

/** Single and multi reads take only field selection (CONTRACT §2 "Single and multi reads"). */
export function parseSelectionOnly(params: Params): FieldSelection {
  for (const [key] of params) {
    if (!isSelectionParam(key)) throw badInput(`'${key}' is not a valid parameter.`);
  }
  return parseFieldSelection(params);
}
