import { getOrCreate } from "../util/maps.ts";
import {
  getNamedType,
  isAbstractType,
  isLeafType,
  isObjectType,
  type FieldNode,
  type GraphQLAbstractType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
} from "graphql";
import { collectSubfields } from "graphql/execution/collectFields.js";

/**
 * How many bytes of response text a resolved value will become, counted as it resolves and
 * without serialising it (security review G2): a JSON scalar or a string repeated under aliases or
 * ids is otherwise one object of the budget, and a response of hundreds of MB.
 *
 * Counted: every key, every string and JSON value at its length, the plain leaves read off an
 * object (numbers, dates and booleans included). Not counted: escapes (a control character, 1
 * counted, is 6 written) and the value of a number, date or enum a resolver computes (its key is).
 * So the text stays within a small multiple of the count, and under GRAPHQL_MAX_RESULT_BYTES'
 * ceiling (64 MiB) within what one JavaScript string holds. A walk reads each key and value once
 * and copies no characters: on a page it costs a fraction of the serialisation the response pays.
 */

/** Named types whose values are text of unbounded length: counted value by value. */
const TEXT_TYPES = new Set(["String", "ID", "JSON", "JSONObject"]);

/** Whether a leaf field's values are text (strings, JSON) worth counting. */
export function carriesText(field: GraphQLField<unknown, unknown>): boolean {
  return TEXT_TYPES.has(getNamedType(field.type).name);
}

/** The JSON text length of `value`, strings counted at their length; nothing for a function or undefined (JSON omits them). */
export function jsonBytes(value: unknown): number {
  const leaf = leafBytes(value);
  if (leaf >= 0) return leaf;
  // an explicit stack (a JSON value may nest deeper than the call stack allows), reused: the walk never re-enters
  const pending = walkStack;
  pending.push(value as object);
  let total = 0;
  while (pending.length) {
    const next = pending.pop()!;
    if (Array.isArray(next)) {
      total += 1 + Math.max(next.length, 1); // brackets and commas
      for (const item of next) total += childBytes(item, pending);
    } else {
      const keys = Object.keys(next);
      total += 1 + Math.max(keys.length, 1); // braces and commas
      for (const key of keys) total += key.length + 3 + childBytes((next as Record<string, unknown>)[key], pending); // quotes and colon
    }
  }
  return total;
}

const walkStack: object[] = [];

/** A child's bytes, or 0 with the child left on `pending` when it is an object or a list. */
function childBytes(value: unknown, pending: object[]): number {
  const leaf = leafBytes(value);
  if (leaf >= 0) return leaf;
  pending.push(value as object);
  return 0;
}

/** The bytes of a value that is not an object or a list (a Date is its ISO string); -1 for one that is. */
function leafBytes(value: unknown): number {
  if (typeof value === "string") return value.length + 2;
  if (typeof value !== "object" || value === null) return scalarBytes(value);
  return value instanceof Date ? 26 : -1;
}

function scalarBytes(value: unknown): number {
  if (value === null) return 4;
  if (typeof value === "number") return Number.isFinite(value) ? String(value).length : 4;
  if (typeof value === "boolean") return value ? 4 : 5;
  if (typeof value === "bigint") return String(value).length;
  return 0;
}

/**
 * What one object of a selection costs besides its counted fields: braces, and each field's key
 * (aliases included: a long alias repeated on every item is text too); and the fields read
 * straight off the object (no resolver of their own), whose values only this count sees. Fields
 * with a resolver count their own values (budget.ts).
 */
interface Selection {
  fixed: number;
  /** property names of the plain leaf fields */
  plain: string[];
}

/**
 * Selections by execution (its variables object: @skip/@include read them), field nodes and
 * object type: made once per list and execution, then read for every item.
 */
const selections = new WeakMap<object, WeakMap<readonly FieldNode[], Map<string, Selection>>>();

/** The last selection looked up: a list's items, and a field's calls on each item of a page, ask for the same one. */
let last: { variables: object; nodes: readonly FieldNode[]; type: GraphQLObjectType; selection: Selection } | undefined;

function selectionOf(info: GraphQLResolveInfo, type: GraphQLObjectType): Selection {
  const variables = info.variableValues as object;
  if (last && last.nodes === info.fieldNodes && last.type === type && last.variables === variables) return last.selection;
  const selection = lookUpSelection(variables, info, type);
  last = { variables, nodes: info.fieldNodes, type, selection };
  return selection;
}

function lookUpSelection(variables: object, info: GraphQLResolveInfo, type: GraphQLObjectType): Selection {
  const byNodes = getOrCreate(selections, variables, () => new WeakMap<readonly FieldNode[], Map<string, Selection>>());
  const byType = getOrCreate(byNodes, info.fieldNodes, () => new Map<string, Selection>());
  return getOrCreate(byType, type.name, () => collectSelection(info, type));
}

function collectSelection(info: GraphQLResolveInfo, type: GraphQLObjectType): Selection {
  const fields = collectSubfields(info.schema, info.fragments, info.variableValues, type, info.fieldNodes);
  const selection: Selection = { fixed: 2, plain: [] };
  for (const [key, nodes] of fields) {
    selection.fixed += key.length + 4;
    const name = nodes[0]!.name.value;
    if (name === "__typename") {
      selection.fixed += type.name.length + 2;
      continue;
    }
    const field = type.getFields()[name];
    if (field && !field.resolve && isLeafType(getNamedType(field.type))) selection.plain.push(name);
  }
  return selection;
}

/**
 * The text an object field's value (one object, a list of them, null) adds to the response: each
 * object's keys and its plain leaf values. Nested objects are counted by their own fields.
 */
export function resultBytes(value: unknown, context: unknown, info: GraphQLResolveInfo): number {
  const type = getNamedType(info.returnType);
  // an object type's selection is the same for every item; an interface's depends on each item's type
  if (isObjectType(type)) return bytesOf(value, selectionOf(info, type), undefined, context, info);
  return bytesOf(value, undefined, isAbstractType(type) ? type : undefined, context, info);
}

function bytesOf(
  value: unknown,
  selection: Selection | undefined,
  abstract: GraphQLAbstractType | undefined,
  context: unknown,
  info: GraphQLResolveInfo,
): number {
  if (value === null || value === undefined) return 4;
  if (Array.isArray(value)) {
    let total = 1 + Math.max(value.length, 1);
    for (const item of value) total += bytesOf(item, selection, abstract, context, info);
    return total;
  }
  if (typeof value !== "object") return 0;
  const itemSelection = selection ?? (abstract ? selectionOfItem(value, abstract, context, info) : undefined);
  if (!itemSelection) return 2;
  let total = itemSelection.fixed;
  for (const name of itemSelection.plain) total += jsonBytes((value as Record<string, unknown>)[name]);
  return total;
}

/** The selection of an interface's item: of the type its resolveType names at once (the schema's are synchronous). */
function selectionOfItem(value: object, abstract: GraphQLAbstractType, context: unknown, info: GraphQLResolveInfo): Selection | undefined {
  const name = abstract.resolveType?.(value, context, info, abstract);
  const type = typeof name === "string" ? info.schema.getType(name) : undefined;
  return isObjectType(type) ? selectionOf(info, type) : undefined;
}
