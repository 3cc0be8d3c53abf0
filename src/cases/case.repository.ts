import { Prisma } from "../generated/prisma/client.ts";
import type { Prisma as PrismaClient } from "../db/client.ts";
import { isUuid } from "../util/ids.ts";
import { isStorableText } from "../util/text.ts";
import { CountCache, statementKey } from "./case.counts.ts";
import { CASE_JSON_JOINS, caseJsonColumns, type CaseJsonParts } from "./case.json.repository.ts";
import { ListOrder, type Relation, type Segment } from "./case.order.repository.ts";
import { REST_ORDER, type CaseFilter, type CaseSlice, type Keyset, type Position } from "./case.query.ts";
import type { CaseIndexRecord, CaseRecord } from "./case.record.ts";
import { serializeProperties } from "./case.serializer.ts";
import { readSliceAsJson } from "./case.slice.repository.ts";

/**
 * Case reads in SQL: the list filters of CONTRACT §2 and the keyset of the list's order (REST's
 * (indexed_on, case_id), or GraphQL's `orderBy`: case.order.repository.ts), always scoped to one domain.
 * Indices come in one batched query per page.
 */

const { sql, join, raw, empty } = Prisma;

type Db = Pick<PrismaClient, "$queryRaw">;

interface CaseRow {
  id: string;
  case_type: string;
  case_name: string;
  external_id: string | null;
  owner_id: string;
  date_opened: Date;
  last_modified: Date;
  server_last_modified: Date;
  indexed_on: Date;
  closed: boolean;
  date_closed: Date | null;
  properties: Record<string, string>;
}

const COLUMNS = sql`c.id, c.case_type, c.case_name, c.external_id, c.owner_id, c.date_opened, c.last_modified,
  c.server_last_modified, c.indexed_on, c.closed, c.date_closed, c.properties`;

const COLUMN_OF = {
  external_id: "external_id",
  case_type: "case_type",
  owner_id: "owner_id",
  case_name: "case_name",
  last_modified: "last_modified",
  server_last_modified: "server_last_modified",
  indexed_on: "indexed_on",
  date_opened: "date_opened",
  date_closed: "date_closed",
} as const;

const anyOf = (conditions: Prisma.Sql[]) =>
  conditions.length === 0 ? sql`FALSE` : conditions.length === 1 ? conditions[0] : sql`(${join(conditions, " OR ")})`;

// A value PostgreSQL cannot hold (not isStorableText) names nothing stored: NUL would fail the
// query; so would an unpaired surrogate in a jsonb literal (JSON.stringify escapes it, and jsonb
// refuses the escape).

/**
 * A case whose property `name` has one of `values` (values OR). One containment per value, ORed,
 * would read a row's whole properties once per value (a 9 MB case × 100 values held the embedded
 * database, and with it the event loop, for 1.4 s): several values are matched by reading the
 * property once against the set, the containment beside it only for the GIN index.
 */
function propertyCondition(name: string, values: string[]): Prisma.Sql {
  // A property whose name cannot be stored does not exist (unset); nor can such a value.
  if (!isStorableText(name)) return values.includes("") ? sql`TRUE` : sql`FALSE`;
  const wanted = [...new Set(values.filter((value) => value !== "" && isStorableText(value)))];
  const conditions: Prisma.Sql[] = [];
  // An empty value matches an unset property as well as an empty one.
  if (values.includes("")) conditions.push(sql`(NOT jsonb_exists(c.properties, ${name}) OR c.properties ->> ${name} = '')`);
  if (wanted.length === 1) conditions.push(sql`c.properties @> ${JSON.stringify({ [name]: wanted[0] })}::jsonb`);
  if (wanted.length > 1) {
    const documents = wanted.map((value) => JSON.stringify({ [name]: value }));
    conditions.push(sql`(c.properties ->> ${name} = ANY(${wanted}::text[]) AND c.properties @> ANY(${documents}::jsonb[]))`);
  }
  return anyOf(conditions);
}

function filterClause(domainId: string, query: CaseFilter): Prisma.Sql {
  const parts: Prisma.Sql[] = [sql`c.domain_id = ${domainId}::uuid`];
  for (const [field, values] of Object.entries(query.exact)) {
    const wanted = values.filter(isStorableText);
    parts.push(wanted.length ? sql`c.${raw(COLUMN_OF[field as keyof typeof COLUMN_OF])} = ANY(${wanted}::text[])` : sql`FALSE`);
  }
  if (query.closed) parts.push(sql`c.closed = ANY(${query.closed}::boolean[])`);
  for (const [name, values] of query.properties) parts.push(propertyCondition(name, values));
  for (const [name, values] of query.indices) {
    const ids = values.filter(isUuid);
    parts.push(
      ids.length && isStorableText(name)
        ? sql`c.id IN (SELECT ci.case_id FROM case_indices ci
                WHERE ci.domain_id = ${domainId}::uuid AND ci.name = ${name} AND ci.referenced_id = ANY(${ids}::uuid[]))`
        : sql`FALSE`,
    );
  }
  for (const { field, bounds } of query.ranges) {
    parts.push(anyOf(bounds.map((b) => sql`c.${raw(COLUMN_OF[field])} ${raw(b.op)} ${b.at}::timestamptz`)));
  }
  return join(parts, " AND ");
}

// ---- the list's order: REST's (indexed_on, case_id), or the order of GraphQL's slice

const REST_LIST = new ListOrder(REST_ORDER);

/** The cases of the filter that stand in `relation` to `at` in the list's order. */
const standing = (order: ListOrder, relation: Relation, at: Position) => order.predicate(order.standing(relation, at));

/** REST's position after a page: the keyset of its cursor as a position in indexed_on order. */
const positionOf = (keyset: Keyset | undefined): Position | undefined => keyset && { value: keyset.indexedOn, caseId: keyset.caseId };

/** REST's count: what the filter matches from a page's position on (CONTRACT §2 `matching_records`). */
const remainingCount = (filter: Prisma.Sql, after?: Keyset) => {
  const from = positionOf(after);
  return sql`SELECT count(*) AS count FROM cases c WHERE ${filter}${from ? sql` AND ${standing(REST_LIST, ">", from)}` : empty}`;
};

/** GraphQL's counts for a slice: everything the filter matches, and whether cases lie outside the window. */
const sliceCounts = (filter: Prisma.Sql, slice: CaseSlice) => {
  const order = new ListOrder(slice.order);
  return sql`SELECT count(*) AS total,
    ${slice.after ? sql`count(*) FILTER (WHERE ${standing(order, "<=", slice.after)})` : sql`0`} AS before_after,
    ${slice.before ? sql`count(*) FILTER (WHERE ${standing(order, ">=", slice.before)})` : sql`0`} AS after_before
  FROM cases c WHERE ${filter}`;
};

type SliceCounts = { total: bigint | number; before_after: bigint | number; after_before: bigint | number };

/** The domain's case write version (src/cases/case.counts.ts), read inside the statement that needs it: one snapshot. */
const writeVersion = (domainId: string) =>
  sql`COALESCE((SELECT w.version::text FROM case_write_versions w WHERE w.domain_id = ${domainId}::uuid), '0')`;

/** A case of a page and its position in the list, at the column's full (microsecond) precision. */
export interface KeyedCase {
  record: CaseRecord;
  key: Position;
}

export class CaseRepository {
  private readonly counts = new CountCache<object>();

  constructor(private readonly db: Db) {}

  /**
   * REST's page (CONTRACT §2): `limit` cases after `after` in keyset order, whether more follow,
   * and how many match from this page on. `lastKey` is the keyset of the page's last case at full
   * precision: a JS Date keeps only milliseconds, and a cursor built from it would repeat that case forever.
   */
  async page(domain: { id: string; name: string }, query: CaseFilter, limit: number, after?: Keyset) {
    const filter = filterClause(domain.id, query);
    const window = REST_LIST.window({ after: positionOf(after) });
    const { cases: read, version } = await this.read(domain, filter, REST_LIST, window, false, limit + 1);
    return this.restPage(domain.id, filter, limit, after, read, version, (c) => c.record);
  }

  /**
   * REST's page as `page` reads it, each case as its REST JSON text written by PostgreSQL
   * (case.json.repository.ts); undefined when a case of the page is one whose text PostgreSQL
   * could write otherwise than the serializer, or the page's window is not one range of the index.
   */
  async pageJson(domain: { id: string; name: string }, query: CaseFilter, limit: number, after?: Keyset) {
    const filter = filterClause(domain.id, query);
    const ranges = REST_LIST.ranges(REST_LIST.window({ after: positionOf(after) }));
    if (ranges.length !== 1) return undefined;
    type Row = CaseJsonParts & { id: string; order_key: string | null; write_version: string };
    const rows = await this.db.$queryRaw<Row[]>`SELECT ${caseJsonColumns(domain.name)}, c.id, ${REST_LIST.key} AS order_key,
        ${writeVersion(domain.id)} AS write_version
      FROM cases c ${CASE_JSON_JOINS} WHERE ${filter} AND ${ranges[0]} ORDER BY ${REST_LIST.orderBy(false)} LIMIT ${limit + 1}`;
    if (rows.some((r) => r.odd)) return undefined;
    // the properties as the records' path serializes them (toRecord's `?? {}`, then the serializer)
    const json = (r: Row) => `${r.before}${JSON.stringify(serializeProperties(r.properties ?? {}))}${r.after}`;
    const read = rows.map((r) => ({ json: json(r), key: { value: r.order_key, caseId: r.id } }));
    return this.restPage(domain.id, filter, limit, after, read, rows[0]?.write_version, (c) => c.json);
  }

  /**
   * REST's page from what was read (up to `limit + 1` cases): the page, whether more follow, its
   * last keyset and how many match from this page on.
   */
  private async restPage<C extends { key: Position }, T>(
    domainId: string,
    filter: Prisma.Sql,
    limit: number,
    after: Keyset | undefined,
    read: C[],
    version: string | undefined,
    content: (c: C) => T,
  ) {
    const hasMore = read.length > limit;
    const page = hasMore ? read.slice(0, limit) : read;
    const records = page.map(content);
    const last = page[page.length - 1]?.key;
    const lastKey: Keyset | undefined = last && { indexedOn: last.value!, caseId: last.caseId };
    // a last page holds everything that remains: the count would visit every match again
    if (!hasMore) return { records, total: page.length, hasMore, lastKey };
    const counted = await this.counted<{ count: bigint | number }>(domainId, remainingCount(filter, after), version);
    const total = Number(counted.value.count);
    // What remains after this page is this count less the page, at the same write version: the
    // `next` page finds it remembered, so a pull that nothing writes to counts once, not per page.
    if (counted.version === version) this.counts.set(statementKey(remainingCount(filter, lastKey)), version, { count: total - limit });
    return { records, total, hasMore, lastKey };
  }

  /**
   * GraphQL's slice: up to `size + 1` cases of the window in reading order (the slice's order, or
   * its reverse for a backward slice), and in one count query everything the filter matches and
   * whether cases lie at or before `after` and at or after `before`.
   */
  async slice(domain: { id: string; name: string }, query: CaseFilter, slice: CaseSlice) {
    const filter = filterClause(domain.id, query);
    const order = new ListOrder(slice.order);
    // a backward slice reads its window from the end: the list's order reversed
    const window = order.window(slice);
    const { cases: read, version } =
      (await readSliceAsJson(this.db, domain, filter, order, window, slice.backward, slice.size + 1, writeVersion(domain.id))) ??
      (await this.read(domain, filter, order, window, slice.backward, slice.size + 1));
    // an unbounded window read whole is everything the filter matches, with nothing outside it
    if (!slice.after && !slice.before && read.length <= slice.size) {
      return { read, total: read.length, outside: { beforeAfter: false, afterBefore: false } };
    }
    const counted = await this.counted<SliceCounts>(domain.id, sliceCounts(filter, slice), version);
    const counts = counted.value;
    // a page of `first: 0` has no edge to continue from
    const edge = read.length > slice.size ? read[slice.size - 1] : undefined;
    if (counted.version === version && edge) this.rememberNextSlice(filter, slice, edge.key, counts, version);
    return {
      read,
      total: Number(counts.total),
      outside: { beforeAfter: Number(counts.before_after) > 0, afterBefore: Number(counts.after_before) > 0 },
    };
  }

  /**
   * The counts of the slice that continues this one in its reading direction (after its last edge
   * forward, before its first edge backward): the same total, and `size` more cases on the side it
   * leaves behind. The client's next page finds them remembered at this write version.
   */
  private rememberNextSlice(filter: Prisma.Sql, slice: CaseSlice, edge: Position, counts: SliceCounts, version: string): void {
    const size = slice.size;
    const next = slice.backward
      ? { slice: { ...slice, before: edge }, counts: { ...counts, after_before: Number(counts.after_before) + size } }
      : { slice: { ...slice, after: edge }, counts: { ...counts, before_after: Number(counts.before_after) + size } };
    this.counts.set(statementKey(sliceCounts(filter, next.slice)), version, next.counts);
  }

  /**
   * The one row of a count statement, and the write version it is exact at: remembered when the
   * domain's version is still `seen` (the version the page was read at), else read together with
   * the version it counts.
   */
  private async counted<R extends object>(domainId: string, counts: Prisma.Sql, seen: string | undefined): Promise<{ value: R; version: string }> {
    const key = statementKey(counts);
    const remembered = this.counts.get(key, seen);
    if (remembered) return { value: remembered as R, version: seen! };
    const [row] = await this.db.$queryRaw<(R & { write_version: string })[]>`SELECT counted.*, ${writeVersion(domainId)} AS write_version
      FROM (${counts}) AS counted`;
    const { write_version: version, ...value } = row!;
    this.counts.set(key, version, value);
    return { value: value as R, version };
  }

  /**
   * The cases of the filter within the window's segments, in list order or its reverse, with their
   * positions and indices, and the domain's write version they were read at (none when nothing
   * matched). A window of two segments (cases with a value of a nullable column and without) reads
   * each from its own range of the index, at most `limit` from each, and keeps the first `limit`.
   */
  private async read(
    domain: { id: string; name: string },
    filter: Prisma.Sql,
    order: ListOrder,
    window: Segment[],
    reversed: boolean,
    limit: number,
  ): Promise<{ cases: KeyedCase[]; version: string | undefined }> {
    const ranges = order.ranges(window);
    if (!ranges.length) return { cases: [], version: undefined };
    type Row = CaseRow & { order_key: string | null; write_version: string };
    const orderBy = order.orderBy(reversed);
    const rows =
      ranges.length === 1
        ? await this.db.$queryRaw<Row[]>`SELECT ${COLUMNS}, ${order.key} AS order_key, ${writeVersion(domain.id)} AS write_version
            FROM cases c WHERE ${filter} AND ${ranges[0]} ORDER BY ${orderBy} LIMIT ${limit}`
        : await this.db.$queryRaw<Row[]>`SELECT c.*, ${writeVersion(domain.id)} AS write_version FROM (${join(
            ranges.map(
              (range) => sql`(SELECT ${COLUMNS}, ${order.key} AS order_key FROM cases c
                WHERE ${filter} AND ${range} ORDER BY ${orderBy} LIMIT ${limit})`,
            ),
            " UNION ALL ",
          )}) AS c ORDER BY ${orderBy} LIMIT ${limit}`;
    const records = await this.withIndices(domain, rows);
    return {
      cases: records.map((record, i) => ({ record, key: { value: rows[i]!.order_key, caseId: rows[i]!.id } })),
      version: rows[0]?.write_version,
    };
  }

  async byIds(domain: { id: string; name: string }, ids: string[]): Promise<Map<string, CaseRecord>> {
    const uuids = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
    if (!uuids.length) return new Map();
    const rows = await this.db.$queryRaw<CaseRow[]>`SELECT ${COLUMNS} FROM cases c
      WHERE c.domain_id = ${domain.id}::uuid AND c.id = ANY(${uuids}::uuid[])`;
    const records = await this.withIndices(domain, rows);
    return new Map(records.map((r) => [r.id, r]));
  }

  /** The oldest case (by date_opened, then case_id) for each external id. */
  async byExternalIds(domain: { id: string; name: string }, externalIds: string[]): Promise<Map<string, CaseRecord>> {
    const unique = [...new Set(externalIds.filter(isStorableText))];
    if (!unique.length) return new Map();
    const rows = await this.db.$queryRaw<CaseRow[]>`SELECT DISTINCT ON (c.external_id) ${COLUMNS} FROM cases c
      WHERE c.domain_id = ${domain.id}::uuid AND c.external_id = ANY(${unique}::text[])
      ORDER BY c.external_id, c.date_opened, c.id`;
    const records = await this.withIndices(domain, rows);
    return new Map(records.map((r) => [r.externalId!, r]));
  }

  /** The indices of the domain that point at these cases, by the indexing case's id. */
  async referencing(domain: { id: string }, ids: string[]): Promise<{ caseId: string; referencedId: string; relationship: string }[]> {
    const uuids = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
    if (!uuids.length) return [];
    return this.db.$queryRaw<{ caseId: string; referencedId: string; relationship: string }[]>`SELECT ci.case_id AS "caseId",
        ci.referenced_id AS "referencedId", ci.relationship
      FROM case_indices ci WHERE ci.domain_id = ${domain.id}::uuid AND ci.referenced_id = ANY(${uuids}::uuid[])
      ORDER BY ci.case_id`;
  }

  // ---- for writes: the cases a request writes, read and locked in one statement

  /**
   * The cases a write may change (named by case_id, or by external_id: every case holding one of
   * them), read and locked FOR UPDATE in id order (so that concurrent writers cannot deadlock),
   * without their indices: the write statement reads those. Inside a transaction whose advisory
   * locks on the upserted external ids were taken by an earlier statement, so that this
   * statement's snapshot sees a case a concurrent upsert of the same external id committed. One
   * statement on `cases` alone: a distributed planner refuses FOR UPDATE beside a subquery, a join
   * or a window function, so the oldest case of each external id is chosen here.
   */
  async lockNamed(domain: { id: string; name: string }, ids: string[], externalIds: string[]): Promise<NamedCases> {
    const uuids = uniqueUuids(ids);
    const externals = uniqueExternalIds(externalIds);
    if (!uuids.length && !externals.length) return { byId: new Map(), oldestByExternalId: new Map() };
    const rows = await this.db.$queryRaw<(CaseRow & { opened_us: bigint })[]>`SELECT ${COLUMNS}, ${OPENED_US} AS opened_us
      FROM cases c WHERE c.domain_id = ${domain.id}::uuid AND (c.id = ANY(${uuids}::uuid[]) OR c.external_id = ANY(${externals}::text[]))
      ORDER BY c.id FOR UPDATE`;
    return {
      byId: new Map(rows.map((row) => [row.id, toRecord(domain.name, row, [])])),
      oldestByExternalId: oldestOf(rows, externals),
    };
  }

  /**
   * Which of these ids name a case of the domain, and the oldest case of each external id (by
   * date_opened, then case_id), without a lock: the cases an index points at, which a write reads
   * but does not change.
   */
  async namedIds(
    domain: { id: string },
    ids: string[],
    externalIds: string[],
  ): Promise<{ ids: Set<string>; oldestByExternalId: Map<string, string> }> {
    const uuids = uniqueUuids(ids);
    const externals = uniqueExternalIds(externalIds);
    if (!uuids.length && !externals.length) return { ids: new Set(), oldestByExternalId: new Map() };
    const rows = await this.db.$queryRaw<{ id: string; external_id: string | null; opened_us: bigint }[]>`SELECT c.id, c.external_id,
        ${OPENED_US} AS opened_us
      FROM cases c WHERE c.domain_id = ${domain.id}::uuid AND (c.id = ANY(${uuids}::uuid[]) OR c.external_id = ANY(${externals}::text[]))
      ORDER BY c.id`;
    return { ids: new Set(rows.map((r) => r.id)), oldestByExternalId: oldestOf(rows, externals) };
  }

  /** The rows as records with their indices, in name order (byte order, as a connection page reads them). */
  private async withIndices(domain: { id: string; name: string }, rows: CaseRow[]): Promise<CaseRecord[]> {
    if (!rows.length) return [];
    const indexRows = await this.db.$queryRaw<IndexRow[]>`
      SELECT case_id, name, referenced_id, referenced_type, relationship FROM case_indices
      WHERE domain_id = ${domain.id}::uuid AND case_id = ANY(${rows.map((r) => r.id)}::uuid[])
      ORDER BY case_id, name COLLATE "C"`;
    const byCase = indicesByCase(indexRows);
    return rows.map((r) => toRecord(domain.name, r, byCase.get(r.id) ?? []));
  }
}

/** date_opened to the microsecond, for choosing the oldest case of an external id in JavaScript. */
const OPENED_US = sql`(extract(epoch FROM c.date_opened) * 1000000)::bigint`;

const uniqueUuids = (ids: string[]) => [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
const uniqueExternalIds = (externalIds: string[]) => [...new Set(externalIds.filter(isStorableText))];

/**
 * The oldest case (by date_opened, then case_id) of each wanted external id, from rows in case_id
 * order: the first of a tie stays.
 */
function oldestOf(rows: { id: string; external_id: string | null; opened_us: bigint }[], wanted: string[]): Map<string, string> {
  const names = new Set(wanted);
  const oldest = new Map<string, { id: string; openedUs: bigint }>();
  for (const row of rows) {
    if (row.external_id === null || !names.has(row.external_id)) continue;
    const openedUs = BigInt(row.opened_us);
    const held = oldest.get(row.external_id);
    if (!held || openedUs < held.openedUs) oldest.set(row.external_id, { id: row.id, openedUs });
  }
  return new Map([...oldest].map(([externalId, { id }]) => [externalId, id]));
}

/** What `lockNamed` found: the named cases by id (indices not read), and the oldest case of each named external id. */
export interface NamedCases {
  byId: Map<string, CaseRecord>;
  oldestByExternalId: Map<string, string>;
}

/** A case_indices row as a write statement reads it back. */
export interface IndexRow {
  case_id: string;
  name: string;
  referenced_id: string;
  referenced_type: string;
  relationship: string;
}

/** The rows of case_indices as the index records of their cases. */
export function indicesByCase(rows: IndexRow[]): Map<string, CaseIndexRecord[]> {
  const byCase = new Map<string, CaseIndexRecord[]>();
  for (const i of rows) {
    const list = byCase.get(i.case_id) ?? [];
    list.push({ name: i.name, referencedId: i.referenced_id, referencedType: i.referenced_type, relationship: i.relationship });
    byCase.set(i.case_id, list);
  }
  return byCase;
}

function toRecord(domainName: string, r: CaseRow, indices: CaseIndexRecord[]): CaseRecord {
  return {
    id: r.id,
    domainName,
    caseType: r.case_type,
    caseName: r.case_name,
    externalId: r.external_id,
    ownerId: r.owner_id,
    dateOpened: r.date_opened,
    lastModified: r.last_modified,
    serverLastModified: r.server_last_modified,
    indexedOn: r.indexed_on,
    closed: r.closed,
    dateClosed: r.date_closed,
    properties: r.properties ?? {},
    indices,
  };
}
