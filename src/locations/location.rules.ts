import { DomainError, badInput } from "../errors.ts";
import { parseDateValue, rangeBound, type RangeOp } from "../util/dates.ts";
import { pythonStr } from "../util/python.ts";
import { unstorableReason } from "../util/text.ts";
import type { LocationFields, LocationFilter, LocationOrder } from "./location.model.ts";

/**
 * The value rules of the Location API (CONTRACT §3) and their exact messages, one place for REST
 * and GraphQL: the same mistake gets the same message from either face. The rules that need the
 * database (types, parents, hierarchy, uniqueness) are applied by the service in its transaction.
 */

export const MAX_LOCATION_LIMIT = 5000;
export const MAX_BULK_LOCATIONS = 100;
/**
 * Longest name and site code, in characters (HQ's 255): both are index keys, and a btree entry over
 * ~2700 bytes fails in SQL (a 500).
 */
const MAX_TEXT_LENGTH = 255;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** `latitude`/`longitude` that is not a decimal number; `value` as it was sent. */
export const notDecimal = (key: string, value: unknown): DomainError => badInput(`'${key}' must be a decimal number, received '${pythonStr(value)}'`);

export const notStringDictionary = (): DomainError => badInput("'location_data' must be a dictionary of string values.");

/** `order_by`: absent is the default order (creation); another value than these two is refused. */
export function locationOrder(value: string | undefined): LocationOrder {
  const order = value ?? "default";
  if (order !== "default" && order !== "last_modified" && order !== "-last_modified") {
    throw badInput(`No matching '${order.replace(/^-/, "")}' field for ordering on.`);
  }
  return order;
}

/** The last_modified bounds of a filter, checked in the order gt, gte, lt, lte (`Cannot parse datetime '…'`). */
export function modifiedBounds(range: Partial<Record<RangeOp, string | null>>): LocationFilter["modified"] {
  const bounds: LocationFilter["modified"] = [];
  for (const op of ["gt", "gte", "lt", "lte"] as const) {
    const value = range[op];
    if (value !== undefined && value !== null) bounds.push(rangeBound(op, parseDateValue(value)));
  }
  return bounds;
}

/** A page beyond any table: PostgreSQL's OFFSET is a bigint, and a larger value would fail in SQL (a 500). */
export function checkPaging(limit: number, offset: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOCATION_LIMIT) {
    throw badInput(`Invalid limit '${limit}' provided. Please provide a positive integer.`);
  }
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw badInput(`Invalid offset '${offset}' provided. Please provide an integer up to ${Number.MAX_SAFE_INTEGER}.`);
  }
}

export function checkBulkSize(count: number): void {
  if (count > MAX_BULK_LOCATIONS) throw badInput(`You cannot submit more than ${MAX_BULK_LOCATIONS} locations in a single request.`);
}

/** The fields of a create or update once the rules hold: coordinates trimmed, location_data all strings. */
export interface CheckedFields extends Omit<LocationFields, "locationData"> {
  locationData?: Record<string, string>;
}

/** Text PostgreSQL can hold; name and site code no longer than the index allows. */
function text(key: string, value: string | null | undefined): void {
  if (value === undefined || value === null) return;
  const reason = unstorableReason(value);
  if (reason === "nul") throw badInput(`'${key}' cannot contain the NUL character.`);
  // not text at all; PGlite fails to encode two in a row (a 500 before)
  if (reason === "surrogate") throw badInput(`'${key}' cannot contain an unpaired surrogate.`);
  if ((key === "name" || key === "site_code") && [...value].length > MAX_TEXT_LENGTH) {
    throw badInput(`'${key}' cannot be longer than ${MAX_TEXT_LENGTH} characters.`);
  }
}

/** A decimal with at most 10 digits before and 10 after the point, trimmed. */
function coordinate(key: string, value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (!DECIMAL.test(value.trim())) throw notDecimal(key, value);
  const [whole, fraction = ""] = value.trim().replace(/^[+-]/, "").split(".");
  if (fraction.length > 10 || whole.replace(/^0+/, "").length > 10) {
    throw badInput(`'${key}' must have at most 10 digits before and 10 after the decimal point`);
  }
  return value.trim();
}

function locationData(data: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (data === undefined) return undefined;
  if (!Object.values(data).every((v) => typeof v === "string")) throw notStringDictionary();
  const entries = Object.entries(data as Record<string, string>);
  const reasons = new Set(entries.flatMap(([k, v]) => [unstorableReason(k), unstorableReason(v)]));
  // PostgreSQL's jsonb cannot hold \u0000 (it would fail in SQL: a 500).
  if (reasons.has("nul")) throw badInput("'location_data' cannot contain the NUL character.");
  // Nor an unpaired surrogate: JSON.stringify writes it as an escape jsonb refuses (a 500 before).
  if (reasons.has("surrogate")) throw badInput("'location_data' cannot contain an unpaired surrogate.");
  return data as Record<string, string>;
}

/**
 * Each field's value rule, for a face that reads a body field by field (REST, after each field's
 * JSON type): run as each field is read, in `checkFields`' order, the first mistake answered is the
 * one `checkFields` would answer, type and value alike.
 */
export { text as checkText, coordinate as checkCoordinate, locationData as checkLocationData };

/**
 * The value rules of one create (`creating`) or update, in the order they answer: the required
 * fields, then each field in turn, then a blank name.
 */
export function checkFields(fields: LocationFields, creating: boolean): CheckedFields {
  const missing = (value: string | undefined) => value === undefined || value === "";
  if (creating && (missing(fields.name) || missing(fields.typeCode))) {
    throw badInput("'name' and 'location_type_code' are required fields when creating a new location.");
  }
  text("name", fields.name);
  text("location_type_code", fields.typeCode);
  text("site_code", fields.siteCode);
  const latitude = coordinate("latitude", fields.latitude);
  const longitude = coordinate("longitude", fields.longitude);
  text("parent_location_id", fields.parentId);
  const data = locationData(fields.locationData);
  if (fields.name !== undefined && !fields.name.trim()) throw badInput("'name' cannot be blank.");
  return { ...fields, latitude, longitude, locationData: data };
}
