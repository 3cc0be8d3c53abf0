import { Prisma } from "../generated/prisma/client.ts";
import type { Prisma as PrismaClient } from "../db/client.ts";
import { isUuid } from "../util/ids.ts";
import type { LocationFilter, LocationOrder, LocationPage, LocationRecord } from "./location.model.ts";
import { isStorableText } from "../util/text.ts";

/** Whether PostgreSQL text can hold (and so a stored value can equal) the string. */

/** Location reads in SQL, always scoped to one domain; hierarchies in one recursive query. */

const { sql, join, raw, empty } = Prisma;
type Db = Pick<PrismaClient, "$queryRaw">;

interface Row {
  id: string;
  name: string;
  site_code: string;
  latitude: string | null;
  longitude: string | null;
  location_data: Record<string, string>;
  parent_id: string | null;
  last_modified: Date;
  type_id: string;
  type_code: string;
  type_name: string;
}

const SELECT = sql`SELECT l.id, l.name, l.site_code, l.latitude, l.longitude, l.location_data, l.parent_id,
  l.last_modified, t.id AS type_id, t.code AS type_code, t.name AS type_name
  FROM locations l JOIN location_types t ON t.id = l.location_type_id`;

const ORDER: Record<LocationOrder, Prisma.Sql> = {
  default: sql`ORDER BY l.created_at, l.id`,
  last_modified: sql`ORDER BY l.last_modified, l.id`,
  "-last_modified": sql`ORDER BY l.last_modified DESC, l.id DESC`,
  name: sql`ORDER BY l.name, l.id`,
  "-name": sql`ORDER BY l.name DESC, l.id DESC`,
  // a site code is unique in its domain: it needs no tie-break, and its unique index serves the order
  site_code: sql`ORDER BY l.site_code`,
  "-site_code": sql`ORDER BY l.site_code DESC`,
};

const NO_MATCH = "00000000-0000-0000-0000-000000000000";

export class LocationRepository {
  constructor(private readonly db: Db) {}

  private records(domainName: string, rows: Row[]): LocationRecord[] {
    return rows.map((r) => ({
      id: r.id,
      domainName,
      name: r.name,
      siteCode: r.site_code,
      latitude: r.latitude,
      longitude: r.longitude,
      locationData: r.location_data ?? {},
      parentId: r.parent_id,
      lastModified: r.last_modified,
      typeId: r.type_id,
      typeCode: r.type_code,
      typeName: r.type_name,
    }));
  }

  async page(
    domain: { id: string; name: string },
    filter: LocationFilter,
    order: LocationOrder,
    limit: number,
    offset: number,
  ): Promise<LocationPage> {
    const where = LocationRepository.where(domain, filter);
    const [rows, total] = await Promise.all([
      this.db.$queryRaw<Row[]>`${SELECT} WHERE ${where} ${ORDER[order]} LIMIT ${limit} OFFSET ${offset}`,
      this.countWhere(where),
    ]);
    return { records: this.records(domain.name, rows), total };
  }

  /** How many locations of the domain the filter matches. */
  count(domain: { id: string; name: string }, filter: LocationFilter): Promise<number> {
    return this.countWhere(LocationRepository.where(domain, filter));
  }

  private async countWhere(where: Prisma.Sql): Promise<number> {
    const [{ count }] = await this.db.$queryRaw<
      { count: bigint }[]
    >`SELECT count(*) AS count FROM locations l JOIN location_types t ON t.id = l.location_type_id WHERE ${where}`;
    return Number(count);
  }

  private static where(domain: { id: string }, filter: LocationFilter): Prisma.Sql {
    const parts: Prisma.Sql[] = [sql`l.domain_id = ${domain.id}::uuid`];
    // PostgreSQL text cannot hold NUL nor unpaired surrogates (as a parameter they may fail: a
    // 500), so no stored value has one.
    const equals = (column: Prisma.Sql, value: string) => (!isStorableText(value) ? sql`FALSE` : sql`${column} = ${value}`);
    if (filter.siteCode !== undefined) parts.push(equals(sql`l.site_code`, filter.siteCode.toLowerCase()));
    if (filter.name !== undefined) parts.push(equals(sql`l.name`, filter.name));
    if (filter.typeCode !== undefined) parts.push(equals(sql`t.code`, filter.typeCode));
    if (filter.parentId !== undefined) {
      parts.push(sql`l.parent_id = ${isUuid(filter.parentId) ? filter.parentId : NO_MATCH}::uuid`);
    }
    for (const b of filter.modified) parts.push(sql`l.last_modified ${raw(b.op)} ${b.at}::timestamptz`);
    return join(parts, " AND ");
  }

  async byIds(domain: { id: string; name: string }, ids: string[]): Promise<Map<string, LocationRecord>> {
    const uuids = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
    if (!uuids.length) return new Map();
    const rows = await this.db.$queryRaw<Row[]>`${SELECT} WHERE l.domain_id = ${domain.id}::uuid AND l.id = ANY(${uuids}::uuid[])`;
    return new Map(this.records(domain.name, rows).map((r) => [r.id, r]));
  }

  async bySiteCode(domain: { id: string; name: string }, siteCode: string): Promise<LocationRecord | undefined> {
    if (!isStorableText(siteCode)) return undefined;
    const rows = await this.db.$queryRaw<Row[]>`${SELECT} WHERE l.domain_id = ${domain.id}::uuid AND l.site_code = ${siteCode.toLowerCase()}`;
    return this.records(domain.name, rows)[0];
  }

  /** Children of many parents at once, by name. */
  async childrenOf(domain: { id: string; name: string }, parentIds: string[], perParent: number): Promise<LocationRecord[]> {
    if (!parentIds.length) return [];
    // the first `perParent` children of each parent, by name: a parent with 100,000 children costs no more to read
    const rows = await this.db.$queryRaw<Row[]>`SELECT r.* FROM unnest(${parentIds}::uuid[]) AS p(id)
      JOIN LATERAL (${SELECT} WHERE l.domain_id = ${domain.id}::uuid AND l.parent_id = p.id ORDER BY l.name, l.id LIMIT ${perParent}) r ON TRUE
      ORDER BY r.name, r.id`;
    return this.records(domain.name, rows);
  }

  /** For each start location, its ancestors nearest first: one recursive query for all of them. */
  async ancestorsOf(domain: { id: string; name: string }, ids: string[]): Promise<Map<string, LocationRecord[]>> {
    const result = new Map<string, LocationRecord[]>(ids.map((id) => [id, []]));
    if (!ids.length) return result;
    const rows = await this.db.$queryRaw<(Row & { start_id: string; depth: number })[]>`
      WITH RECURSIVE up(start_id, id, depth) AS (
        SELECT l.id, l.parent_id, 1 FROM locations l
          WHERE l.domain_id = ${domain.id}::uuid AND l.id = ANY(${ids}::uuid[]) AND l.parent_id IS NOT NULL
        UNION ALL
        SELECT up.start_id, l.parent_id, up.depth + 1 FROM up JOIN locations l ON l.id = up.id
          WHERE l.domain_id = ${domain.id}::uuid AND l.parent_id IS NOT NULL AND up.depth < 100
      )
      SELECT up.start_id, up.depth, r.* FROM up
      JOIN LATERAL (${SELECT} WHERE l.domain_id = ${domain.id}::uuid AND l.id = up.id) r ON TRUE
      ORDER BY up.start_id, up.depth`;
    for (const row of rows) result.get(row.start_id)?.push(this.records(domain.name, [row])[0]);
    return result;
  }

  /**
   * For each start location, its descendants to `depth` levels (all when null), breadth first:
   * one recursive query for all of them.
   */
  async descendantsOf(
    domain: { id: string; name: string },
    ids: string[],
    depth: number | null,
    perStart: number,
  ): Promise<Map<string, LocationRecord[]>> {
    const result = new Map<string, LocationRecord[]>(ids.map((id) => [id, []]));
    if (!ids.length) return result;
    const limit = depth === null ? empty : sql`AND down.depth < ${depth}`;
    // the tree is walked by id alone; only the first `perStart` of each start location are read whole
    const rows = await this.db.$queryRaw<(Row & { start_id: string; depth: number })[]>`
      WITH RECURSIVE down(start_id, id, depth) AS (
        SELECT l.parent_id, l.id, 1 FROM locations l
          WHERE l.domain_id = ${domain.id}::uuid AND l.parent_id = ANY(${ids}::uuid[])
        UNION ALL
        SELECT down.start_id, l.id, down.depth + 1 FROM down JOIN locations l ON l.parent_id = down.id
          WHERE l.domain_id = ${domain.id}::uuid ${limit}
      ),
      ranked AS (
        SELECT down.start_id, down.depth, down.id,
          row_number() OVER (PARTITION BY down.start_id ORDER BY down.depth, l.name, l.id) AS rank
        FROM down JOIN locations l ON l.id = down.id AND l.domain_id = ${domain.id}::uuid
      )
      SELECT ranked.start_id, ranked.depth, r.* FROM ranked
      JOIN LATERAL (${SELECT} WHERE l.domain_id = ${domain.id}::uuid AND l.id = ranked.id) r ON TRUE
      WHERE ranked.rank <= ${perStart}
      ORDER BY ranked.start_id, ranked.depth, r.name, r.id`;
    for (const row of rows) result.get(row.start_id)?.push(this.records(domain.name, [row])[0]);
    return result;
  }
}
