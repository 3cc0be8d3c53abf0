import { Prisma } from "../generated/prisma/client.ts";
import { CASE_INDEX_KEYS, CASE_KEYS } from "./case.serializer.ts";

/**
 * The REST form of a case (case.serializer.ts, CONTRACT §2 "Case serialization") written by
 * PostgreSQL as JSON text, byte for byte what `JSON.stringify(serializeCase(record))` writes, so
 * that a list page of 5,000 cases is passed through as text instead of being read into records,
 * serialised into objects and stringified. The keys come from the serializer's tables, in their
 * order; each value is written as JSON.stringify writes it: no spaces, strings escaped by
 * PostgreSQL's `to_json` (the same escapes: `\"`, `\\`, `\b \f \n \r \t`, other controls as
 * lowercase `\u00xx`), dates truncated to the millisecond as a JS Date holds them.
 *
 * Where the two could differ, a row is marked `odd` and the caller serialises the page in JS:
 * a name of a property or index with a character at or above U+E000 (JavaScript sorts keys by
 * UTF-16 code unit, PostgreSQL's "C" collation by code point: they disagree only there), a property
 * value that is not a string (the contract stores strings only), properties that are not an object,
 * and a date outside the years 0001–9999 (where toISOString writes six-digit years).
 */

const { sql, raw, join } = Prisma;

/** A text as a JSON string; NULL as `null`. */
const jsonString = (expression: string) => `COALESCE(to_json(${expression})::text, 'null')`;

/** A case date (`YYYY-MM-DDTHH:MM:SS.ffffffZ`, caseDate in util/dates.ts) from a timestamptz; NULL as `null`. */
const jsonDate = (column: string) => `COALESCE('"' || to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"000Z"') || '"', 'null')`;

/** The object of one index of the case (CASE_INDEX_KEYS), alias `i` on case_indices. */
const INDEX_VALUES: Record<keyof typeof CASE_INDEX_KEYS, string> = {
  case_id: `'"' || i.referenced_id || '"'`,
  case_type: jsonString("i.referenced_type"),
  relationship: jsonString("i.relationship"),
};

/** `{"k1":` || v1 || `,"k2":` || v2 … || `}` over a key table's keys, in its order. */
function jsonObject(keys: string[], value: (key: string) => string): string {
  return `${keys.map((key, i) => `'${i ? "," : "{"}${JSON.stringify(key)}:' || ${value(key)}`).join(" || ")} || '}'`;
}

const INDEX_OBJECT = jsonObject(Object.keys(CASE_INDEX_KEYS), (key) => INDEX_VALUES[key as keyof typeof CASE_INDEX_KEYS]);

/** The case's properties, an object of strings only (anything else is `odd`). */
const PROPERTIES = "CASE WHEN jsonb_typeof(c.properties) = 'object' THEN c.properties ELSE '{}'::jsonb END";

/** Names JavaScript and the "C" collation could sort apart: a character at or above U+E000. */
const UNSORTABLE = "'[\\uE000-\\U0010FFFF]'";

const DATE_COLUMNS = ["date_opened", "last_modified", "server_last_modified", "indexed_on", "date_closed"];

/**
 * The lateral reads a case's JSON needs, beside `cases c`: `props` (its properties as JSON text,
 * names sorted) and `idx` (its indices by name), each with whether it is odd.
 */
export const CASE_JSON_JOINS = raw(`
  CROSS JOIN LATERAL (
    SELECT COALESCE('{' || string_agg(to_json(p.key)::text || ':' || p.value::text, ',' ORDER BY p.key COLLATE "C") || '}', '{}') AS json,
           COALESCE(bool_or(jsonb_typeof(p.value) <> 'string' OR p.key ~ ${UNSORTABLE}), false)
             OR jsonb_typeof(c.properties) <> 'object' AS odd
    FROM jsonb_each(${PROPERTIES}) p) props
  CROSS JOIN LATERAL (
    SELECT COALESCE('{' || string_agg(to_json(i.name)::text || ':' || ${INDEX_OBJECT}, ',' ORDER BY i.name COLLATE "C") || '}', '{}') AS json,
           COALESCE(bool_or(i.name ~ ${UNSORTABLE}), false) AS odd
    FROM case_indices i WHERE i.domain_id = c.domain_id AND i.case_id = c.id) idx`);

/** The values of the case's keys (CASE_KEYS), alias `c` on cases, with CASE_JSON_JOINS beside it. */
function caseValues(domainName: string): Record<keyof typeof CASE_KEYS, Prisma.Sql> {
  const text = (expression: string) => raw(expression);
  return {
    // JSON.stringify's own text of the name, as a parameter
    domain: sql`${JSON.stringify(domainName)}::text`,
    case_id: text(`'"' || c.id || '"'`),
    case_type: text(jsonString("c.case_type")),
    case_name: text(jsonString("c.case_name")),
    external_id: text(jsonString("c.external_id")),
    owner_id: text(jsonString("c.owner_id")),
    date_opened: text(jsonDate("c.date_opened")),
    last_modified: text(jsonDate("c.last_modified")),
    server_last_modified: text(jsonDate("c.server_last_modified")),
    indexed_on: text(jsonDate("c.indexed_on")),
    closed: text("CASE WHEN c.closed THEN 'true' ELSE 'false' END"),
    date_closed: text(jsonDate("c.date_closed")),
    properties: text("props.json"),
    indices: text("idx.json"),
  };
}

/** The columns of a case's JSON: `json` (its text) and `odd` (JavaScript must serialise its page). */
export function caseJsonColumns(domainName: string): Prisma.Sql {
  const values = caseValues(domainName);
  const parts = Object.keys(CASE_KEYS).map(
    (key, i) => sql`${raw(`'${i ? "," : "{"}${JSON.stringify(key)}:' || `)}${values[key as keyof typeof CASE_KEYS]}`,
  );
  const outOfRange = DATE_COLUMNS.map((column) => `c.${column} < '0001-01-01T00:00:00Z' OR c.${column} >= '10000-01-01T00:00:00Z'`).join(" OR ");
  return sql`(${join(parts, " || ")} || '}') AS json, (props.odd OR idx.odd OR ${raw(`COALESCE(${outOfRange}, false)`)}) AS odd`;
}
