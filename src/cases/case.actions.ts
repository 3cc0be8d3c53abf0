import { badInput, DomainError } from "../errors.ts";
import { isObject } from "../util/json.ts";
import { pythonStr } from "../util/python.ts";
import { unstorableReason } from "../util/text.ts";
import { isXmlElementName } from "../util/xml.ts";

/**
 * The typed write commands of CONTRACT §2 "Writes" and their value rules: pure, before any database
 * work, so a refused request changes nothing. Each face reads its own input into `CaseItem`s (REST
 * from JSON bodies in case.payload.rest.ts, GraphQL from its inputs in case.resolver.ts); the rules
 * here turn them into `CaseAction`s, with the contract's exact messages for both faces. The messages
 * name the contract's (snake_case) fields.
 */

export const MAX_BULK = 100;
export const MAX_LENGTH = 255;
/** Names a property may not take, because they are fields of the case itself. */
const TOP_LEVEL = new Set([
  "domain",
  "case_id",
  "case_type",
  "case_name",
  "external_id",
  "owner_id",
  "date_opened",
  "last_modified",
  "server_last_modified",
  "indexed_on",
  "closed",
  "date_closed",
  "properties",
  "indices",
  "close",
  "create",
  "temporary_id",
  "user_id",
  "date_modified",
]);
/**
 * The one XML name that properties and indices may not take: JSON objects cannot keep it safely
 * (assigning it sets the prototype of a plain object instead of adding a key).
 */
const RESERVED_NAME = "__proto__";
const INDEX_KEYS = new Set(["case_id", "external_id", "temporary_id", "case_type", "relationship"]);
const RELATIONSHIPS = ["child", "extension"] as const;

/** What a write request names besides its items: it decides which fields an item may carry and what it means. */
export type WriteTarget =
  | { kind: "create" } // REST POST with an object; GraphQL createCase
  | { kind: "update"; caseId: string } // REST PUT {case_id}; GraphQL updateCase
  | { kind: "upsert"; externalId: string } // REST PUT ext/{ext_id}/; GraphQL upsertCase
  | { kind: "put" } // REST PUT '' with an object: by its case_id or external_id
  | { kind: "bulk" }; // an item of a list (REST POST/PUT list; GraphQL bulkWriteCases)

/**
 * One write item as a face gives it: typed fields, not yet checked. Properties and indices are
 * JSON objects in both faces (GraphQL takes them as JSONObject, in the contract's shape), so the
 * rules below check their shape too.
 */
export interface CaseItem {
  /** bulk items only: true creates, false updates, null or absent upserts by external_id */
  create?: boolean | null;
  caseId?: string;
  temporaryId?: string;
  caseType?: string;
  caseName?: string;
  ownerId?: string;
  externalId?: string;
  /** property name to string value */
  properties?: unknown;
  /** index name to {case_id | external_id | temporary_id, case_type, relationship} */
  indices?: unknown;
  close?: boolean;
}

export type IndexRef = { by: "case_id"; value: string } | { by: "external_id"; value: string } | { by: "temporary_id"; value: string };

interface IndexChange {
  name: string;
  /** null removes the index */
  target: { ref: IndexRef; caseType: string; relationship: string } | null;
}

export interface CaseFields {
  caseType?: string;
  caseName?: string;
  ownerId?: string;
  /** "" clears the external id */
  externalId?: string;
  properties: Record<string, string>;
  indices: IndexChange[];
  close: boolean;
}

/** A checked write of one case: what the write service applies. */
export type CaseAction =
  | { action: "create"; temporaryId?: string; fields: CaseFields }
  | { action: "update"; by: "case_id"; caseId: string; fields: CaseFields }
  | { action: "update"; by: "external_id"; externalId: string; fields: CaseFields }
  | { action: "upsert"; externalId: string; fields: CaseFields };

/** The text fields of an item, in the order their values are checked, with their contract names. */
export const TEXT_FIELDS = [
  ["caseId", "case_id"],
  ["caseType", "case_type"],
  ["caseName", "case_name"],
  ["ownerId", "owner_id"],
  ["externalId", "external_id"],
  ["temporaryId", "temporary_id"],
] as const satisfies readonly (readonly [keyof CaseItem, string])[];
const LENGTH_LIMITED = TEXT_FIELDS.filter(([, name]) => ["case_type", "case_name", "owner_id", "external_id"].includes(name));
const REQUIRED_ON_CREATE = TEXT_FIELDS.filter(([, name]) => ["case_type", "case_name", "owner_id"].includes(name));

/**
 * Valid XML element name: a letter or _, then letters, digits, _ - .; no colon; not xml…; and an
 * XML 1.0 name (some letters and digits, such as `µ` or `²`, are not), as the form uses it as one.
 */
export function isXmlName(name: string): boolean {
  return /^[\p{L}_][\p{L}\p{N}_.-]*$/u.test(name) && !/^xml/i.test(name) && isXmlElementName(name);
}

export const unknownField = (key: string) => badInput(`'${key}' is not a valid field.`);

/**
 * The fields (contract names) an item may carry for its target: `create` only in a bulk, and no
 * temporary_id on an update (PUT '' with a case_id is an update too). A case_id on a create is
 * allowed here and refused by `caseAction` with its own message.
 */
export function allowedFields(target: WriteTarget, create: unknown, caseId: unknown): Set<string> {
  const keys = new Set(["case_type", "case_name", "owner_id", "external_id", "properties", "indices", "close"]);
  const creating = target.kind === "create" || (target.kind === "bulk" && create === true);
  const updating = target.kind === "update" || (target.kind === "bulk" && create === false) || (target.kind === "put" && caseId !== undefined);
  if (target.kind !== "create") keys.add("case_id");
  if (target.kind === "bulk") keys.add("create");
  if (!updating) keys.add("temporary_id");
  if (creating) keys.add("case_id");
  return keys;
}

function valueError(key: string, value: unknown) {
  return badInput(`Error with case property '${key}'. Values must be strings, received '${pythonStr(value)}'`);
}

/**
 * A text value, checked: a string that PostgreSQL text can hold (no NUL, which no form value may
 * carry either; no unpaired surrogate, which is not text at all: PGlite failed to encode two in a row).
 */
export function checkText(key: string, value: unknown): asserts value is string {
  if (typeof value !== "string") throw valueError(key, value);
  const reason = unstorableReason(value);
  if (reason === "nul") throw badInput(`Error with case property '${key}'. Values cannot contain the NUL character.`);
  if (reason === "surrogate") throw badInput(`Error with case property '${key}'. Values cannot contain an unpaired surrogate.`);
}

function parseIndices(raw: unknown): IndexChange[] {
  if (raw === undefined) return [];
  if (!isObject(raw)) throw badInput("'indices' must be an object of index name to index");
  const changes: IndexChange[] = [];
  for (const [name, spec] of Object.entries(raw)) {
    if (!isXmlName(name)) throw badInput(`Error with index '${name}'. Index names must be valid XML identifiers.`);
    // the same reserved name as for properties: a JSON object cannot keep it safely
    if (name === RESERVED_NAME) throw badInput(`Error with index '${name}'. This name is reserved.`);
    if (!isObject(spec)) throw badInput(`Error with index '${name}'. An index must be an object.`);
    for (const key of Object.keys(spec)) {
      if (!INDEX_KEYS.has(key)) throw unknownField(key);
    }
    for (const key of INDEX_KEYS) {
      if (spec[key] !== undefined) checkText(key, spec[key]);
    }
    const refs = (["case_id", "external_id", "temporary_id"] as const).filter((k) => spec[k] !== undefined);
    if (refs.length !== 1) throw badInput("Indices must specify case_id, external_id, or temporary ID, and only one");
    const by = refs[0];
    const value = spec[by] as string;
    if (value === "") {
      changes.push({ name, target: null });
      continue;
    }
    for (const required of ["case_type", "relationship"] as const) {
      if (spec[required] === undefined) {
        throw badInput(`Property ${required} is required when creating or updating case indices`);
      }
    }
    const relationship = spec.relationship as string;
    if (!(RELATIONSHIPS as readonly string[]).includes(relationship)) {
      throw badInput(`Error with index '${name}'. Relationship must be 'child' or 'extension', received '${relationship}'`);
    }
    changes.push({ name, target: { ref: { by, value }, caseType: spec.case_type as string, relationship } });
  }
  return changes;
}

function parseProperties(raw: unknown): Record<string, string> {
  if (raw === undefined) return {};
  if (!isObject(raw)) throw badInput("'properties' must be an object of property name to string value");
  for (const [key, value] of Object.entries(raw)) {
    if (!isXmlName(key)) throw badInput(`Error with case property '${key}'. Case property names must be valid XML identifiers.`);
    if (TOP_LEVEL.has(key)) throw badInput(`Error with case property '${key}'. This must be specified at the top level.`);
    if (key === RESERVED_NAME) throw badInput(`Error with case property '${key}'. This name is reserved.`);
    checkText(key, value);
  }
  return raw as Record<string, string>;
}

/** One item to an action, or the first rule it breaks. */
export function caseAction(item: CaseItem, target: WriteTarget): CaseAction {
  return toAction(item, target, true);
}

/**
 * `caseAction` for an item whose reader has already run `checkText` on each of its TEXT_FIELDS, in
 * that order, after the field names (REST's body reader, which must report a field's type and text
 * mistakes in field order): the same rules, each text field checked once.
 */
export function textCheckedCaseAction(item: CaseItem, target: WriteTarget): CaseAction {
  return toAction(item, target, false);
}

function toAction(item: CaseItem, target: WriteTarget, checkTexts: boolean): CaseAction {
  const allowed = allowedFields(target, item.create, item.caseId);
  if (item.create !== undefined && !allowed.has("create")) throw unknownField("create");
  if (item.caseId !== undefined && !allowed.has("case_id")) throw unknownField("case_id");
  if (item.temporaryId !== undefined && !allowed.has("temporary_id")) throw unknownField("temporary_id");
  if (checkTexts) {
    for (const [field, name] of TEXT_FIELDS) {
      if (item[field] !== undefined) checkText(name, item[field]);
    }
  }
  if (target.kind === "upsert") checkText("external_id", target.externalId);
  const { caseId, externalId } = item;
  const action = classify(target, item.create, caseId, externalId);
  if (action === "create") {
    for (const [field, name] of REQUIRED_ON_CREATE) {
      if (item[field] === undefined) throw badInput(`Property ${name} is required.`);
    }
    if (caseId !== undefined) throw badInput("You cannot specify case_id when creating a new case");
  }
  const fields: CaseFields = {
    caseType: item.caseType,
    caseName: item.caseName,
    ownerId: item.ownerId,
    externalId,
    properties: parseProperties(item.properties),
    indices: parseIndices(item.indices),
    close: item.close === true,
  };
  for (const [field, name] of LENGTH_LIMITED) {
    const value = item[field];
    if (value !== undefined && [...value].length > MAX_LENGTH) throw badInput(`'${name}' cannot be longer than ${MAX_LENGTH} characters.`);
  }
  // PUT ext/{ext_id}/ stores the path's id as the case's external_id: the same limit applies.
  if (target.kind === "upsert" && [...target.externalId].length > MAX_LENGTH) {
    throw badInput(`'external_id' cannot be longer than ${MAX_LENGTH} characters.`);
  }
  switch (action) {
    case "create":
      return { action, temporaryId: item.temporaryId, fields };
    case "upsert":
      return { action, externalId: target.kind === "upsert" ? target.externalId : externalId!, fields };
    case "update-by-id":
      return { action: "update", by: "case_id", caseId: target.kind === "update" ? target.caseId : caseId!, fields };
    case "update-by-external":
      return { action: "update", by: "external_id", externalId: externalId!, fields };
  }
}

function classify(
  target: WriteTarget,
  create: boolean | null | undefined,
  caseId: string | undefined,
  externalId: string | undefined,
): "create" | "upsert" | "update-by-id" | "update-by-external" {
  switch (target.kind) {
    case "create":
      return "create";
    case "update":
      if (caseId !== undefined && caseId !== target.caseId) {
        throw badInput("The case_id in the body does not match the case_id in the URL");
      }
      return "update-by-id";
    case "upsert":
      // The case is found and created under the path's id: another id in the body would make the
      // PUT create a new case on every repetition, which the contract forbids (idempotent).
      if (externalId !== undefined && externalId !== target.externalId) {
        throw badInput("The external_id in the body does not match the external_id in the URL");
      }
      return "upsert";
    case "put":
      if (caseId !== undefined) return "update-by-id";
      if (externalId) return "upsert";
      throw badInput("Case updates must provide either a case_id or external_id");
    case "bulk":
      if (create === true) return "create";
      if (create === false) {
        if (caseId !== undefined) return "update-by-id";
        if (externalId) return "update-by-external";
        throw badInput("Case updates must provide either a case_id or external_id");
      }
      if (externalId && caseId === undefined) return "upsert";
      throw badInput("A 'create' flag is required for each update.");
  }
}

/**
 * The rows of a list request: each read by the face (`read` may refuse a row for its own grammar)
 * and checked by the rules (`toAction`: `caseAction`, or `textCheckedCaseAction` when `read` has
 * checked the texts); every row's first error, joined as the contract says.
 */
export function bulkActions<T>(
  rows: readonly T[],
  read: (row: T) => CaseItem,
  toAction: (item: CaseItem, target: WriteTarget) => CaseAction = caseAction,
): CaseAction[] {
  if (rows.length > MAX_BULK) {
    throw badInput(`Payload too large: you cannot submit more than ${MAX_BULK} updates in a single request`);
  }
  if (rows.length === 0) throw badInput("Payload must include at least one case");
  const target: WriteTarget = { kind: "bulk" };
  const actions: CaseAction[] = [];
  const errors: string[] = [];
  rows.forEach((row, i) => {
    try {
      actions.push(toAction(read(row), target));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      errors.push(`Error in row ${i + 1}: ${error.message}`);
    }
  });
  if (errors.length) throw badInput(errors.join("; "));
  return actions;
}
