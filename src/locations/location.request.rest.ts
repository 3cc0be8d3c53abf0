import { badInput } from "../errors.ts";
import { string, stringMap, type QueryParameter, type Schema } from "../openapi/schema.ts";
import type { RangeOp } from "../util/dates.ts";
import { isObject } from "../util/json.ts";
import { pythonStr } from "../util/python.ts";
import type { LocationBulkReader, LocationFields, LocationFilter, LocationQuery } from "./location.model.ts";
import {
  checkCoordinate,
  checkLocationData,
  checkText,
  locationOrder,
  MAX_LOCATION_LIMIT,
  modifiedBounds,
  notDecimal,
  notStringDictionary,
} from "./location.rules.ts";

/**
 * The REST grammar of the Location API v2 (CONTRACT §3): query strings and JSON bodies (snake_case
 * keys, JSON types) into the service's typed commands. Mistakes of the grammar (unknown keys, a
 * number where a string belongs, Tastypie's paging parameters) are answered here; the value rules
 * behind them are the service's (`location.rules.ts`), shared with GraphQL. A body is read field by
 * field, each field's type and then its value rule, so that of two mistakes the first field's is
 * answered, as the API always has.
 */

/**
 * The keys of a location body with the JSON types of their values, which the OpenAPI document's
 * `LocationWrite` gives (location.openapi.ts); any other key is refused.
 */
export const WRITE_KEYS: Record<string, Schema> = {
  name: string("required on create"),
  location_type_code: string("required on create"),
  site_code: string("generated from the name when omitted on create"),
  latitude: { type: ["string", "number", "null"], description: "a decimal number" },
  longitude: { type: ["string", "number", "null"], description: "a decimal number" },
  location_data: stringMap("custom data (replaces the stored data)"),
  parent_location_id: { type: ["string", "null"], description: "the parent; null or '' for a root" },
};
const FIELDS = Object.keys(WRITE_KEYS);
const BULK_UPDATE_FIELDS = [...FIELDS, "location_id"];

/** `format`, which every Location API route reads (location.rest.ts), before Accept. */
export const FORMAT_PARAMETER: QueryParameter = {
  name: "format",
  description: "json or xml; wins over Accept",
  schema: { type: "string", enum: ["json", "xml"] },
};

type TextFilter = Exclude<keyof LocationFilter, "modified">;

/** The list's exact-match filters: the filter each parameter sets, and what it matches. */
const FILTERS: Record<TextFilter, { name: string; description: string }> = {
  siteCode: { name: "site_code", description: "exact site code" },
  name: { name: "name", description: "exact name, case-sensitive" },
  typeCode: { name: "location_type_code", description: "the type's code" },
  parentId: { name: "parent_location_id", description: "the direct parent" },
};

const RANGES: readonly RangeOp[] = ["gt", "gte", "lt", "lte"];
const modifiedName = (op: RangeOp) => `last_modified.${op}`;

/**
 * The list's query parameters (the last of a repeated one counts), as `parseLocationQuery` reads
 * them and the OpenAPI document lists them (location.openapi.ts), besides `format`. Tastypie
 * ignores any other.
 */
export const LIST_PARAMETERS: readonly QueryParameter[] = [
  ...Object.values(FILTERS).map(({ name, description }) => ({ name, description, schema: { type: "string" } })),
  ...RANGES.map((op) => ({ name: modifiedName(op), description: "a date or an ISO 8601 datetime", schema: { type: "string" } })),
  {
    name: "order_by",
    description: "by last_modified, oldest or newest first; `default` (as when absent) is the order of creation",
    schema: { type: "string", enum: ["default", "last_modified", "-last_modified"] satisfies LocationQuery["order"][] },
  },
  {
    name: "limit",
    description: `page size, default 20, at most ${MAX_LOCATION_LIMIT} (0 means ${MAX_LOCATION_LIMIT}; larger ones are capped)`,
    schema: { type: "integer", minimum: 0, default: 20 },
  },
  { name: "offset", description: "index of the first object", schema: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 } },
];

/** Tastypie's paging parameters: limit 0 means the maximum; larger limits are capped. */
function paging(params: Map<string, string>): { limit: number; offset: number } {
  const rawLimit = params.get("limit");
  let limit = 20;
  if (rawLimit !== undefined) {
    if (!/^\d+$/.test(rawLimit)) throw badInput(`Invalid limit '${rawLimit}' provided. Please provide a positive integer.`);
    limit = Number(rawLimit) === 0 ? MAX_LOCATION_LIMIT : Math.min(Number(rawLimit), MAX_LOCATION_LIMIT);
  }
  const rawOffset = params.get("offset");
  let offset = 0;
  if (rawOffset !== undefined) {
    if (!/^-?\d+$/.test(rawOffset)) throw badInput(`Invalid offset '${rawOffset}' provided. Please provide an integer.`);
    if (Number(rawOffset) < 0) throw badInput(`Invalid offset '${rawOffset}' provided. Please provide a positive integer >= 0.`);
    // PostgreSQL's OFFSET is a bigint: a larger value would fail in SQL (a 500), and no table is that long.
    if (!Number.isSafeInteger(Number(rawOffset))) {
      throw badInput(`Invalid offset '${rawOffset}' provided. Please provide an integer up to ${Number.MAX_SAFE_INTEGER}.`);
    }
    offset = Number(rawOffset);
  }
  return { limit, offset };
}

/** The list's query string (the last of a repeated key counts): order, filters, then paging, each refused in that order. */
export function parseLocationQuery(pairs: [string, string][]): LocationQuery {
  const params = new Map(pairs);
  const order = locationOrder(params.get("order_by"));
  const modified = modifiedBounds(Object.fromEntries(RANGES.map((op) => [op, params.get(modifiedName(op))])));
  const texts = Object.fromEntries(Object.entries(FILTERS).map(([key, { name }]) => [key, params.get(name)]));
  return { filter: { ...texts, modified }, order, ...paging(params) };
}

function stringField(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw badInput(`'${key}' must be a string, received '${pythonStr(value)}'`);
  checkText(key, value);
  return value;
}

/** A coordinate as a JSON string or number; null clears it. */
function coordinateField(body: Record<string, unknown>, key: string): string | null | undefined {
  const value = body[key];
  if (value === undefined || value === null) return value as null | undefined;
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== "string") throw notDecimal(key, value);
  checkCoordinate(key, text);
  return text;
}

/**
 * A location body of a create (`creating`) or update: a JSON object of the known keys, each of its
 * JSON type. `parent_location_id` null or "" makes a root.
 */
export function parseLocationFields(raw: unknown, creating: boolean, allowed: string[] = FIELDS): LocationFields {
  if (!isObject(raw)) throw badInput("Payload must be a JSON object");
  const invalid = Object.keys(raw).filter((k) => !allowed.includes(k));
  if (invalid.length) throw badInput(`Invalid fields were included in request: ${pythonStr(invalid)}.`);
  const given = (k: string) => raw[k] !== undefined && raw[k] !== null && raw[k] !== "";
  // A create without its required fields is answered as such before any other mistake: the rules
  // say so when they get neither.
  if (creating && !(given("name") && given("location_type_code"))) return {};
  const fields: LocationFields = {
    name: stringField(raw, "name"),
    typeCode: stringField(raw, "location_type_code"),
    siteCode: stringField(raw, "site_code"),
    latitude: coordinateField(raw, "latitude"),
    longitude: coordinateField(raw, "longitude"),
  };
  if (raw.parent_location_id !== undefined) {
    fields.parentId = raw.parent_location_id === null || raw.parent_location_id === "" ? null : stringField(raw, "parent_location_id");
  }
  if (raw.location_data !== undefined) {
    if (!isObject(raw.location_data)) throw notStringDictionary();
    checkLocationData(raw.location_data);
    fields.locationData = raw.location_data;
  }
  return fields;
}

/** The list of a bulk `PATCH {"objects": […]}`. */
export function bulkObjects(json: unknown): unknown[] {
  if (!isObject(json) || !Array.isArray(json.objects)) throw badInput("The request must be an object with an 'objects' list.");
  return json.objects;
}

/** Bulk items: with a `location_id` an update (which may name it), else a create. */
export const restBulkReader: LocationBulkReader<unknown> = {
  locationId(item) {
    const id = isObject(item) ? item.location_id : undefined;
    if (id !== undefined && typeof id !== "string") throw badInput(`'location_id' must be a string, received '${pythonStr(id)}'`);
    return id;
  },
  fields: (item, creating) => parseLocationFields(item, creating, creating ? FIELDS : BULK_UPDATE_FIELDS),
};
