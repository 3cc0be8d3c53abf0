import { badInput } from "../errors.ts";
import { isObject } from "../util/json.ts";
import { pythonStr } from "../util/python.ts";
import type { LocationBulkReader, LocationFields, LocationQuery } from "./location.model.ts";
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

const FIELDS = ["name", "location_type_code", "site_code", "latitude", "longitude", "location_data", "parent_location_id"];
const BULK_UPDATE_FIELDS = [...FIELDS, "location_id"];

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
  const modified = modifiedBounds({
    gt: params.get("last_modified.gt"),
    gte: params.get("last_modified.gte"),
    lt: params.get("last_modified.lt"),
    lte: params.get("last_modified.lte"),
  });
  const filter = {
    siteCode: params.get("site_code"),
    name: params.get("name"),
    typeCode: params.get("location_type_code"),
    parentId: params.get("parent_location_id"),
    modified,
  };
  return { filter, order, ...paging(params) };
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
