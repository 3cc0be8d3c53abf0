import { badInput } from "../errors.ts";
import { boolean, nullable, string, stringMap, type Schema } from "../openapi/schema.ts";
import { isObject, requireJson } from "../util/json.ts";
import { pythonStr } from "../util/python.ts";
import {
  allowedFields,
  bulkActions,
  checkText,
  MAX_LENGTH,
  TEXT_FIELDS,
  textCheckedCaseAction,
  unknownField,
  type CaseAction,
  type CaseItem,
  type WriteTarget,
} from "./case.actions.ts";
import { noIdsRequested, type BulkRequest } from "./case.read.service.ts";

/**
 * The JSON bodies of the Case API (CONTRACT §2 "Writes", "Bulk fetch"): valid JSON, an object or a
 * list, the contract's keys, and the JSON types of their values. Write items become `CaseItem`s
 * checked by the rules of case.actions.ts, a bulk-fetch body a `BulkRequest`. Used by case.rest.ts
 * only, after the permission check (so a 401 or 403 comes before any word on the body).
 */

const BULK: WriteTarget = { kind: "bulk" };

/**
 * Every key a write item may carry (`allowedFields` says which for which target) and the JSON type
 * of its value, as the OpenAPI document's `CaseWrite` gives them (case.openapi.ts).
 */
export const WRITE_KEYS: Record<string, Schema> = {
  case_id: string("bulk updates and PUT '' only: the case to update"),
  case_type: string("required on create", { maxLength: MAX_LENGTH }),
  case_name: string("required on create", { maxLength: MAX_LENGTH }),
  owner_id: string("required on create", { maxLength: MAX_LENGTH }),
  external_id: string("'' clears it", { maxLength: MAX_LENGTH }),
  temporary_id: string("bulk creations only: a name other items' indices may reference; not stored"),
  properties: stringMap("properties to merge; names are XML element names"),
  indices: {
    type: "object",
    description: "index name to index; an empty id removes the index",
    additionalProperties: {
      type: "object",
      description: "exactly one of case_id, external_id, temporary_id",
      properties: {
        case_id: { type: "string" },
        external_id: { type: "string" },
        temporary_id: { type: "string" },
        case_type: { type: "string" },
        relationship: { type: "string", enum: ["child", "extension"] },
      },
    },
  },
  close: boolean("true closes the case; false never reopens it"),
  create: nullable(boolean("bulk only: true creates, false updates, null or omitted upserts by external_id")),
};

/** The keys of a bulk-fetch body, each a list of ids. */
export const BULK_FETCH_KEYS = ["case_ids", "external_ids"] as const;

/** One object of a write body: its keys for the target, then the types of its values. */
function readItem(raw: unknown, target: WriteTarget): CaseItem {
  if (!isObject(raw)) throw badInput("Payload must be a JSON object");
  const allowed = allowedFields(target, raw.create, raw.case_id);
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) throw unknownField(key);
  }
  const { create, close } = raw;
  if (target.kind === "bulk" && create !== undefined && create !== null && typeof create !== "boolean") {
    throw badInput(`'create' must be true, false or null, received '${pythonStr(create)}'`);
  }
  if (close !== undefined && typeof close !== "boolean") {
    throw badInput(`'close' must be true or false, received '${pythonStr(close)}'`);
  }
  const item: CaseItem = { create: create as boolean | null | undefined, close, properties: raw.properties, indices: raw.indices };
  for (const [field, name] of TEXT_FIELDS) {
    const value = raw[name];
    if (value === undefined) continue;
    // the whole text rule, not only the type: each field's mistake is reported in field order (the
    // rules then skip these fields: textCheckedCaseAction)
    checkText(name, value);
    item[field] = value;
  }
  return item;
}

/** A write body to its actions: a list is a bulk where the target takes one (POST, PUT ''), else one object. */
export function parseWriteBody(body: unknown, target: WriteTarget): { actions: CaseAction[]; bulk: boolean } {
  const json = requireJson(body);
  if (Array.isArray(json) && (target.kind === "create" || target.kind === "put")) {
    return { actions: bulkActions(json, (row) => readItem(row, BULK), textCheckedCaseAction), bulk: true };
  }
  return { actions: [textCheckedCaseAction(readItem(json, target), target)], bulk: false };
}

function stringList(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw badInput(`'${key}' must be a list of strings`);
  }
  return value;
}

/** `POST bulk-fetch/`: `{"case_ids": […], "external_ids": […]}`. */
export function parseBulkFetch(body: unknown): BulkRequest {
  const json = requireJson(body);
  if (!isObject(json)) throw noIdsRequested();
  const [caseIds, externalIds] = BULK_FETCH_KEYS.map((key) => stringList(json, key));
  return { caseIds, externalIds };
}
