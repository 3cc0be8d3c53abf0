import { boolean, nullable, ref, serialize, string, stringMap, type KeyTable, type Schema, type Serialized } from "../openapi/schema.ts";
import { caseDate } from "../util/dates.ts";
import type { CaseRecord } from "./case.record.ts";

/**
 * The REST form of a case (CONTRACT §2 "Case serialization"), built by the REST adapter from one
 * key table: the keys in wire order, each with its schema, which the OpenAPI document's `Case`
 * is built from (case.openapi.ts). A key added here is documented with no second edit.
 */

const CASE_DATE = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z$";
const dateSchema = (description: string) => string(`${description} (UTC, six-digit microseconds, literal Z)`, { pattern: CASE_DATE });

type Index = CaseRecord["indices"][number];

/** An index of a case: the case it points at. */
export const CASE_INDEX_KEYS = {
  case_id: { schema: string("the referenced case"), of: (i: Index) => i.referencedId },
  case_type: { schema: string("the referenced case's type"), of: (i: Index) => i.referencedType },
  relationship: {
    schema: { type: "string", enum: ["child", "extension"], description: "the kind of index" } as Schema,
    of: (i: Index) => i.relationship,
  },
} satisfies KeyTable<Index>;

/** A case's properties as the contract serializes them: by name (UTF-16 code units). */
export function serializeProperties<T>(object: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(object).sort()) out[key] = object[key];
  return out;
}

function indicesOf(c: CaseRecord): Record<string, Serialized<typeof CASE_INDEX_KEYS>> {
  const indices: Record<string, Serialized<typeof CASE_INDEX_KEYS>> = {};
  for (const index of [...c.indices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    indices[index.name] = serialize(CASE_INDEX_KEYS, index);
  }
  return indices;
}

/** CONTRACT §2 "Case serialization": exactly these keys in exactly this order. */
export const CASE_KEYS = {
  domain: { schema: string("the project space"), of: (c: CaseRecord) => c.domainName },
  case_id: { schema: string("server-generated UUID (lowercase, hyphenated)"), of: (c: CaseRecord) => c.id },
  case_type: { schema: string("the case type"), of: (c: CaseRecord) => c.caseType },
  case_name: { schema: string("the case name"), of: (c: CaseRecord) => c.caseName },
  external_id: { schema: nullable(string("the external id; null when never set")), of: (c: CaseRecord) => c.externalId },
  owner_id: { schema: string("the owner's id"), of: (c: CaseRecord) => c.ownerId },
  date_opened: { schema: dateSchema("set at creation, never changed"), of: (c: CaseRecord) => caseDate(c.dateOpened) },
  last_modified: { schema: dateSchema("time of the last write"), of: (c: CaseRecord) => caseDate(c.lastModified) },
  server_last_modified: { schema: dateSchema("time of the last write on the server"), of: (c: CaseRecord) => caseDate(c.serverLastModified) },
  indexed_on: { schema: dateSchema("time of the last write; the paging key"), of: (c: CaseRecord) => caseDate(c.indexedOn) },
  closed: { schema: boolean("whether the case is closed"), of: (c: CaseRecord) => c.closed },
  date_closed: {
    schema: nullable(dateSchema("when the case was closed; null while open")),
    of: (c: CaseRecord) => (c.dateClosed ? caseDate(c.dateClosed) : null),
  },
  properties: { schema: stringMap("the case's user properties, each a string"), of: (c: CaseRecord) => serializeProperties(c.properties) },
  indices: {
    schema: { type: "object", description: "index name to index ({} when none)", additionalProperties: ref("CaseIndex") } as Schema,
    of: indicesOf,
  },
} satisfies KeyTable<CaseRecord>;

export type SerializedCase = Serialized<typeof CASE_KEYS>;

export const serializeCase = (c: CaseRecord): SerializedCase => serialize(CASE_KEYS, c);
