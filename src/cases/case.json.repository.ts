import { Prisma } from "../generated/prisma/client.ts";
import { CASE_INDEX_KEYS, CASE_KEYS } from "./case.serializer.ts";

/**
 * The REST form of a case (case.serializer.ts, CONTRACT §2 "Case serialization") written by
 * PostgreSQL as JSON text around its properties, so that a list page of 5,000 cases is not read
 * into records and serialised into objects and stringified: PostgreSQL writes every key but
 * `properties` as JSON.stringify writes it (no spaces, strings escaped by `to_json`, which escapes
 * as JSON.stringify does: `\"`, `\\`, `\b \f \n \r \t`, other controls as lowercase `\u00xx`;
 * dates truncated to the millisecond as a JS Date holds them; indices sorted by name), and the
 * properties are left to the serializer in JavaScript: sorting them in PostgreSQL (jsonb_each,
 * an ordered string_agg per case) cost more of its time than the whole page costs in JavaScript.
 *
 * Where the two could still differ, a row is marked `odd` and the caller serialises the page from
 * records: an index name with a character at or above U+E000 (JavaScript sorts by UTF-16 code
 * unit, PostgreSQL's "C" collation by code point: they disagree only there) and a date outside the
 * years 0001–9999 (where toISOString writes six-digit years).
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

/** Names JavaScript and the "C" collation could sort apart: a character at or above U+E000. */
const UNSORTABLE = "'[\\uE000-\\U0010FFFF]'";

const DATE_COLUMNS = ["date_opened", "last_modified", "server_last_modified", "indexed_on", "date_closed"];

/** Whether a date of the case (alias `c`) lies outside the years 0001–9999, where JavaScript reads PostgreSQL's text otherwise; NULL when none is and one is NULL. */
export const OUT_OF_DATE_RANGE = DATE_COLUMNS.map((column) => `c.${column} < '0001-01-01T00:00:00Z' OR c.${column} >= '10000-01-01T00:00:00Z'`).join(
  " OR ",
);

/** The lateral read a case's JSON needs, beside `cases c`: `idx`, its indices by name as JSON text, and whether that is odd. */
export const CASE_JSON_JOINS = raw(`
  CROSS JOIN LATERAL (
    SELECT COALESCE('{' || string_agg(to_json(i.name)::text || ':' || ${INDEX_OBJECT}, ',' ORDER BY i.name COLLATE "C") || '}', '{}') AS json,
           COALESCE(bool_or(i.name ~ ${UNSORTABLE}), false) AS odd
    FROM case_indices i WHERE i.domain_id = c.domain_id AND i.case_id = c.id) idx`);

/** The values of the case's keys (CASE_KEYS), alias `c` on cases, with CASE_JSON_JOINS beside it. */
function caseValues(domainName: string): Record<Exclude<keyof typeof CASE_KEYS, "properties">, Prisma.Sql> {
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
    indices: text("idx.json"),
  };
}

/** The JSON text of a case: `before` + the serialized properties + `after`. */
export interface CaseJsonParts {
  before: string;
  properties: Record<string, string>;
  after: string;
  odd: boolean;
}

/**
 * The columns of a case's JSON (CaseJsonParts): `before` (its keys before `properties`, and that
 * key), `properties` (the column, as the records' read has it), `after` (the keys after it, to the
 * closing brace) and `odd` (JavaScript must serialise the page from records).
 */
export function caseJsonColumns(domainName: string): Prisma.Sql {
  const values = caseValues(domainName);
  const keys = Object.keys(CASE_KEYS) as (keyof typeof CASE_KEYS)[];
  const at = keys.indexOf("properties");
  const pair = (key: Exclude<keyof typeof CASE_KEYS, "properties">, i: number) =>
    sql`${raw(`'${i ? "," : "{"}${JSON.stringify(key)}:' || `)}${values[key]}`;
  const before = sql`${join((keys.slice(0, at) as Exclude<keyof typeof CASE_KEYS, "properties">[]).map(pair), " || ")} || '${raw(`,${JSON.stringify("properties")}:`)}'`;
  const after = sql`${join(
    (keys.slice(at + 1) as Exclude<keyof typeof CASE_KEYS, "properties">[]).map((key) => pair(key, 1)),
    " || ",
  )} || '}'`;
  return sql`${before} AS before, c.properties, ${after} AS after, (idx.odd OR ${raw(`COALESCE(${OUT_OF_DATE_RANGE}, false)`)}) AS odd`;
}
