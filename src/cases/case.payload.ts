import { badInput, DomainError } from "../errors.ts";
import { pythonStr } from "../util/python.ts";

/**
 * Validation of case write payloads (CONTRACT §2 "Writes"): pure, before any database work, so a
 * refused request changes nothing. Each rule gives the contract's exact message.
 */

export const MAX_BULK = 100;
const MAX_LENGTH = 255;
const LENGTH_LIMITED = ["case_type", "case_name", "owner_id", "external_id"] as const;
const REQUIRED_ON_CREATE = ["case_type", "case_name", "owner_id"] as const;
const STRING_FIELDS = ["case_id", "case_type", "case_name", "owner_id", "external_id", "temporary_id"] as const;
/** Names a property may not take, because they are fields of the case itself. */
const TOP_LEVEL = new Set([
  "domain", "case_id", "case_type", "case_name", "external_id", "owner_id", "date_opened", "last_modified",
  "server_last_modified", "indexed_on", "closed", "date_closed", "properties", "indices", "close", "create",
  "temporary_id", "user_id", "date_modified",
]);
const INDEX_KEYS = new Set(["case_id", "external_id", "temporary_id", "case_type", "relationship"]);
export const RELATIONSHIPS = ["child", "extension"] as const;

/** Where an item came from decides which keys it may carry and what it means. */
export type WriteContext =
  | { kind: "create" }                         // POST with an object
  | { kind: "update"; caseId: string }         // PUT {case_id}
  | { kind: "upsertExternal"; externalId: string } // PUT ext/{ext_id}/
  | { kind: "put" }                            // PUT '' with an object
  | { kind: "bulk" };                          // an item of a POST/PUT list

export type IndexRef =
  | { by: "case_id"; value: string }
  | { by: "external_id"; value: string }
  | { by: "temporary_id"; value: string };

export interface IndexChange {
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

export type CaseAction =
  | { action: "create"; temporaryId?: string; fields: CaseFields }
  | { action: "update"; by: "case_id"; caseId: string; fields: CaseFields }
  | { action: "update"; by: "external_id"; externalId: string; fields: CaseFields }
  | { action: "upsert"; externalId: string; fields: CaseFields };

/** Valid XML element name: a letter or _, then letters, digits, _ - .; no colon; not xml…. */
export function isXmlName(name: string): boolean {
  return /^[\p{L}_][\p{L}\p{N}_.-]*$/u.test(name) && !/^xml/i.test(name);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function allowedKeys(context: WriteContext, create: unknown, caseId: unknown): Set<string> {
  const keys = new Set(["case_type", "case_name", "owner_id", "external_id", "properties", "indices", "close"]);
  const creating = context.kind === "create" || (context.kind === "bulk" && create === true);
  // PUT '' with a case_id is an update too: temporary_id is not a valid field there.
  const updating =
    context.kind === "update" || (context.kind === "bulk" && create === false) || (context.kind === "put" && caseId !== undefined);
  if (context.kind !== "create") keys.add("case_id");
  if (context.kind === "bulk") keys.add("create");
  if (!updating) keys.add("temporary_id");
  if (creating) keys.add("case_id"); // refused below with its own message
  return keys;
}

function valueError(key: string, value: unknown) {
  return badInput(`Error with case property '${key}'. Values must be strings, received '${pythonStr(value)}'`);
}

/**
 * A string value, checked: PostgreSQL text cannot hold NUL, and no form value may carry one; nor
 * an unpaired surrogate (not text at all; PGlite fails to encode two in a row: a 500 before).
 */
function checkString(key: string, value: unknown): void {
  if (typeof value !== "string") throw valueError(key, value);
  if (value.includes("\u0000")) throw badInput(`Error with case property '${key}'. Values cannot contain the NUL character.`);
  if (/\p{Cs}/u.test(value)) throw badInput(`Error with case property '${key}'. Values cannot contain an unpaired surrogate.`);
}

function parseIndices(raw: unknown): IndexChange[] {
  if (raw === undefined) return [];
  if (!isObject(raw)) throw badInput("'indices' must be an object of index name to index");
  const changes: IndexChange[] = [];
  for (const [name, spec] of Object.entries(raw)) {
    if (!isXmlName(name)) throw badInput(`Error with index '${name}'. Index names must be valid XML identifiers.`);
    if (!isObject(spec)) throw badInput(`Error with index '${name}'. An index must be an object.`);
    for (const key of Object.keys(spec)) {
      if (!INDEX_KEYS.has(key)) throw badInput(`'${key}' is not a valid field.`);
    }
    for (const key of INDEX_KEYS) {
      if (spec[key] !== undefined) checkString(key, spec[key]);
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
    // JSON objects cannot keep this name safely (it is the prototype accessor of every object).
    if (key === "__proto__") throw badInput(`Error with case property '${key}'. This name is reserved.`);
    checkString(key, value);
  }
  return raw as Record<string, string>;
}

/** One payload object to an action, or the first rule it breaks. */
export function parseCaseAction(raw: unknown, context: WriteContext): CaseAction {
  if (!isObject(raw)) throw badInput("Payload must be a JSON object");
  const create = raw.create;
  const allowed = allowedKeys(context, create, raw.case_id);
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) throw badInput(`'${key}' is not a valid field.`);
  }
  if (context.kind === "bulk" && create !== undefined && create !== null && typeof create !== "boolean") {
    throw badInput(`'create' must be true, false or null, received '${pythonStr(create)}'`);
  }
  if (raw.close !== undefined && typeof raw.close !== "boolean") {
    throw badInput(`'close' must be true or false, received '${pythonStr(raw.close)}'`);
  }
  for (const key of STRING_FIELDS) {
    if (raw[key] !== undefined) checkString(key, raw[key]);
  }
  if (context.kind === "upsertExternal") checkString("external_id", context.externalId);
  const caseId = raw.case_id as string | undefined;
  const externalId = raw.external_id as string | undefined;
  const action = classify(context, create, caseId, externalId);
  if (action === "create") {
    for (const field of REQUIRED_ON_CREATE) {
      if (raw[field] === undefined) throw badInput(`Property ${field} is required.`);
    }
    if (caseId !== undefined) throw badInput("You cannot specify case_id when creating a new case");
  }
  const fields: CaseFields = {
    caseType: raw.case_type as string | undefined,
    caseName: raw.case_name as string | undefined,
    ownerId: raw.owner_id as string | undefined,
    externalId,
    properties: parseProperties(raw.properties),
    indices: parseIndices(raw.indices),
    close: raw.close === true,
  };
  for (const field of LENGTH_LIMITED) {
    const value = raw[field];
    if (typeof value === "string" && [...value].length > MAX_LENGTH) {
      throw badInput(`'${field}' cannot be longer than ${MAX_LENGTH} characters.`);
    }
  }
  // PUT ext/{ext_id}/ stores the path's id as the case's external_id: the same limit applies.
  if (context.kind === "upsertExternal" && [...context.externalId].length > MAX_LENGTH) {
    throw badInput(`'external_id' cannot be longer than ${MAX_LENGTH} characters.`);
  }
  switch (action) {
    case "create":
      return { action, temporaryId: raw.temporary_id as string | undefined, fields };
    case "upsert":
      return { action, externalId: context.kind === "upsertExternal" ? context.externalId : externalId!, fields };
    case "update-by-id":
      return { action: "update", by: "case_id", caseId: context.kind === "update" ? context.caseId : caseId!, fields };
    case "update-by-external":
      return { action: "update", by: "external_id", externalId: externalId!, fields };
  }
}

function classify(
  context: WriteContext,
  create: unknown,
  caseId: string | undefined,
  externalId: string | undefined,
): "create" | "upsert" | "update-by-id" | "update-by-external" {
  switch (context.kind) {
    case "create":
      return "create";
    case "update":
      if (caseId !== undefined && caseId !== context.caseId) {
        throw badInput("The case_id in the body does not match the case_id in the URL");
      }
      return "update-by-id";
    case "upsertExternal":
      // The case is found and created under the path's id: another id in the body would make the
      // PUT create a new case on every repetition, which the contract forbids (idempotent).
      if (externalId !== undefined && externalId !== context.externalId) {
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

/** The rows of a bulk body, or every row's first error joined as the contract says. */
export function parseBulk(items: unknown[]): CaseAction[] {
  if (items.length > MAX_BULK) {
    throw badInput(`Payload too large: you cannot submit more than ${MAX_BULK} updates in a single request`);
  }
  if (items.length === 0) throw badInput("Payload must include at least one case");
  const actions: CaseAction[] = [];
  const errors: string[] = [];
  items.forEach((item, i) => {
    try {
      actions.push(parseCaseAction(item, { kind: "bulk" }));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      errors.push(`Error in row ${i + 1}: ${error.message}`);
    }
  });
  if (errors.length) throw badInput(errors.join("; "));
  return actions;
}
