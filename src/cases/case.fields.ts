import { badInput } from "../errors.ts";
import type { QueryParameter, QueryParameterFamily } from "../openapi/schema.ts";
import { isObject } from "../util/json.ts";

/**
 * Field selection (`fields`, `exclude`, their dotted forms such as `fields.properties=a,b`),
 * applied to each case in every response that carries cases, never to envelopes.
 */
export type FieldSelection = { mode: "all" } | { mode: "fields"; paths: string[][] } | { mode: "exclude"; paths: string[][] };

export const ALL_FIELDS: FieldSelection = { mode: "all" };

/** The query parameters of field selection, which every Case API read and write takes. */
export const SELECTION_PARAMETERS: readonly QueryParameter[] = [
  {
    name: "fields",
    description: "comma-separated keys to keep (dotted for nested: properties.x, indices.parent.case_id)",
    schema: { type: "string" },
  },
  { name: "exclude", description: "comma-separated keys to remove; not with fields", schema: { type: "string" } },
];

/** The dotted forms: `fields.properties=a,b` is `fields=properties.a,properties.b`, the same for exclude. */
export const DOTTED_SELECTION: QueryParameterFamily = {
  name: "dotted selection",
  description:
    "`fields.{path}=a,b` = {path}.a,{path}.b in fields, e.g. `fields.properties=a,b` = properties.a,properties.b; " +
    "`exclude.{path}` likewise in exclude",
  pattern: "^(fields|exclude)\\.",
  schema: { type: "string" },
};

const SELECTION_NAMES = new Set(SELECTION_PARAMETERS.map((p) => p.name));
const DOTTED_SELECTION_NAME = new RegExp(DOTTED_SELECTION.pattern);

/** True for the parameter names that belong to field selection. */
export function isSelectionParam(key: string): boolean {
  return SELECTION_NAMES.has(key) || DOTTED_SELECTION_NAME.test(key);
}

export function parseFieldSelection(params: Iterable<[string, string]>): FieldSelection {
  const paths: Record<"fields" | "exclude", string[][]> = { fields: [], exclude: [] };
  const seen = new Set<"fields" | "exclude">();
  for (const [key, value] of params) {
    if (!isSelectionParam(key)) continue;
    const dot = key.indexOf(".");
    const mode = (dot < 0 ? key : key.slice(0, dot)) as "fields" | "exclude";
    const prefix = dot < 0 ? [] : key.slice(dot + 1).split(".");
    seen.add(mode);
    for (const name of value
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean)) {
      paths[mode].push([...prefix, ...name.split(".")]);
    }
  }
  if (seen.size === 2) throw badInput("You cannot specify both 'fields' and 'exclude'");
  if (seen.has("fields")) return { mode: "fields", paths: paths.fields };
  if (seen.has("exclude")) return { mode: "exclude", paths: paths.exclude };
  return ALL_FIELDS;
}

type Tree = Map<string, Tree | true>;

function tree(paths: string[][]): Tree {
  const root: Tree = new Map();
  for (const path of paths) {
    let node = root;
    for (const [i, part] of path.entries()) {
      const existing = node.get(part);
      if (existing === true) break; // a whole field already includes its parts
      if (i === path.length - 1) {
        node.set(part, true);
        break;
      }
      const next: Tree = existing ?? new Map();
      node.set(part, next);
      node = next;
    }
  }
  return root;
}

function pick(object: Record<string, unknown>, include: Tree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    const node = include.get(key);
    if (node === true) out[key] = value;
    else if (node && isObject(value)) out[key] = pick(value, node);
  }
  return out;
}

function omit(object: Record<string, unknown>, exclude: Tree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    const node = exclude.get(key);
    if (node === true) continue;
    out[key] = node && isObject(value) ? omit(value, node) : value;
  }
  return out;
}

export function selectFields(object: object, selection: FieldSelection): Record<string, unknown> {
  const record = object as Record<string, unknown>;
  if (selection.mode === "all") return record;
  return selection.mode === "fields" ? pick(record, tree(selection.paths)) : omit(record, tree(selection.paths));
}
