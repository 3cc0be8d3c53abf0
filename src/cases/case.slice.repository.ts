import { Prisma } from "../generated/prisma/client.ts";
import type { Prisma as PrismaClient } from "../db/client.ts";
import { OUT_OF_DATE_RANGE } from "./case.json.repository.ts";
import type { ListOrder, Segment } from "./case.order.repository.ts";
import type { CaseIndexRecord, CaseRecord } from "./case.record.ts";
import type { Position } from "./case.query.ts";
import { getOrCreate } from "../util/maps.ts";

/**
 * The cases of a GraphQL connection page (case.repository.ts `slice`), each read as one JSON array
 * that PostgreSQL writes and parsed with one JSON.parse, and the page's indices as one JSON text:
 * Prisma's raw-query mapping types every value of a row apart (a page of 5,000 cases is 70,000
 * values, each date a regular expression and a parse), which was a fifth of the server's work on a
 * page. The records are the ones the column read makes, value for value:
 * dates as the milliseconds a JS Date holds (PostgreSQL's microseconds truncated, as a Date parsed
 * from its text is), the properties as the jsonb's text parses (its key order), the indices in name
 * order ("C" collation, the primary key's order).
 *
 * Where the column read could give something else, the caller reads the page that way instead
 * (undefined here): a date outside the years 0001–9999, which JavaScript's date parsing of
 * PostgreSQL's text does not read as this does; a window of two ranges (a nullable column's
 * cases with and without a value), which the column read merges.
 */

const { sql, raw } = Prisma;

type Db = Pick<PrismaClient, "$queryRaw">;

/**
 * A timestamptz as the milliseconds since the epoch of the JS Date its text parses to: floored, as
 * that parse truncates the microseconds (exact: `extract` is numeric from PostgreSQL 14 on).
 */
const millis = (column: string) => `floor(extract(epoch FROM c.${column}) * 1000)`;

/**
 * One case as a JSON array, in the order `CaseArray` names, then its position's value in the
 * list's order (`key`), whether it is odd (see above) and the domain's write version: one value
 * per row, as Prisma maps each value of a row apart.
 */
const caseArray = (key: Prisma.Sql, writeVersion: Prisma.Sql) => sql`json_build_array(c.id, c.case_type, c.case_name, c.external_id, c.owner_id,
  ${raw(`${millis("date_opened")}, ${millis("last_modified")}, ${millis("server_last_modified")}, ${millis("indexed_on")}`)},
  c.closed, ${raw(millis("date_closed"))}, c.properties, ${key}, ${raw(`COALESCE(${OUT_OF_DATE_RANGE}, false)`)}, ${writeVersion})::text`;

type CaseArray = [
  id: string,
  caseType: string,
  caseName: string,
  externalId: string | null,
  ownerId: string,
  dateOpened: number,
  lastModified: number,
  serverLastModified: number,
  indexedOn: number,
  closed: boolean,
  dateClosed: number | null,
  properties: Record<string, string> | null,
  key: string | null,
  odd: boolean,
  writeVersion: string,
];

type IndexArray = [caseId: string, name: string, referencedId: string, referencedType: string, relationship: string];

function caseOf(domainName: string, values: CaseArray, indices: CaseIndexRecord[]): CaseRecord {
  const [id, caseType, caseName, externalId, ownerId, opened, modified, serverModified, indexed, closed, dateClosed, properties] = values;
  return {
    id,
    domainName,
    caseType,
    caseName,
    externalId,
    ownerId,
    dateOpened: new Date(opened),
    lastModified: new Date(modified),
    serverLastModified: new Date(serverModified),
    indexedOn: new Date(indexed),
    closed,
    dateClosed: dateClosed === null ? null : new Date(dateClosed),
    properties: properties ?? {},
    indices,
  };
}

/**
 * The indices of these cases by the indexing case's id, each case's in name order: one statement,
 * one JSON text (a lateral read per case cost PostgreSQL ten times this batched one).
 */
async function indicesOf(db: Db, domainId: string, ids: string[]): Promise<Map<string, CaseIndexRecord[]>> {
  const byCase = new Map<string, CaseIndexRecord[]>();
  if (!ids.length) return byCase;
  const [row] = await db.$queryRaw<{ indices: string | null }[]>`SELECT json_agg(json_build_array(i.case_id, i.name, i.referenced_id,
      i.referenced_type, i.relationship) ORDER BY i.case_id, i.name COLLATE "C")::text AS indices
    FROM case_indices i WHERE i.domain_id = ${domainId}::uuid AND i.case_id = ANY(${ids}::uuid[])`;
  for (const [caseId, name, referencedId, referencedType, relationship] of JSON.parse(row?.indices ?? "[]") as IndexArray[]) {
    getOrCreate(byCase, caseId, () => []).push({ name, referencedId, referencedType, relationship });
  }
  return byCase;
}

/**
 * Up to `limit` cases of `filter` within the window, in the order's reading direction, with their
 * positions, and the domain's write version they were read at (`writeVersion`, none when nothing
 * matched); undefined when the caller must read them as columns (see above).
 */
export async function readSliceAsJson(
  db: Db,
  domain: { id: string; name: string },
  filter: Prisma.Sql,
  order: ListOrder,
  window: Segment[],
  reversed: boolean,
  limit: number,
  writeVersion: Prisma.Sql,
): Promise<{ cases: { record: CaseRecord; key: Position }[]; version: string | undefined } | undefined> {
  const ranges = order.ranges(window);
  if (ranges.length !== 1) return ranges.length ? undefined : { cases: [], version: undefined };
  const rows = await db.$queryRaw<{ case: string }[]>`SELECT ${caseArray(order.key, writeVersion)} AS case
    FROM cases c WHERE ${filter} AND ${ranges[0]} ORDER BY ${order.orderBy(reversed)} LIMIT ${limit}`;
  const read = rows.map((r) => JSON.parse(r.case) as CaseArray);
  if (read.some((values) => values[13])) return undefined;
  const indices = await indicesOf(
    db,
    domain.id,
    read.map((values) => values[0]),
  );
  return {
    cases: read.map((values) => ({
      record: caseOf(domain.name, values, indices.get(values[0]) ?? []),
      key: { value: values[12], caseId: values[0] },
    })),
    version: read[0]?.[14],
  };
}
