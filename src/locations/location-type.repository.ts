import type { DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { isUuid } from "../util/ids.ts";

/** Location type reads and writes, every one scoped to one domain (by its id, or by a type found in it). */

type Db = Pick<Prisma, "locationType" | "location">;

/** A location type as read: its parent named by code. */
export interface LocationTypeRecord {
  id: string;
  domainName: string;
  code: string;
  name: string;
  parentId: string | null;
  parentCode: string | null;
}

const WITH_PARENT = { parent: { select: { code: true } } } as const;

type Row = { id: string; code: string; name: string; parentId: string | null; parent: { code: string } | null };

const record = (domain: DomainRef, row: Row): LocationTypeRecord => ({
  id: row.id,
  domainName: domain.name,
  code: row.code,
  name: row.name,
  parentId: row.parentId,
  parentCode: row.parent?.code ?? null,
});

export class LocationTypeRepository {
  constructor(private readonly db: Db) {}

  async list(domain: DomainRef): Promise<LocationTypeRecord[]> {
    const rows = await this.db.locationType.findMany({
      where: { domainId: domain.id },
      include: WITH_PARENT,
      orderBy: [{ createdAt: "asc" }, { code: "asc" }],
    });
    return rows.map((row) => record(domain, row));
  }

  async byIds(domain: DomainRef, ids: string[]): Promise<Map<string, LocationTypeRecord>> {
    const rows = await this.db.locationType.findMany({
      where: { domainId: domain.id, id: { in: ids.filter(isUuid) } },
      include: WITH_PARENT,
    });
    return new Map(rows.map((row) => [row.id, record(domain, row)]));
  }

  async byCode(domain: DomainRef, code: string): Promise<LocationTypeRecord | null> {
    const row = await this.db.locationType.findUnique({ where: { domainId_code: { domainId: domain.id, code } }, include: WITH_PARENT });
    return row && record(domain, row);
  }

  async create(domain: DomainRef, data: { code: string; name: string; parentId: string | null }): Promise<LocationTypeRecord> {
    return record(domain, await this.db.locationType.create({ data: { domainId: domain.id, ...data }, include: WITH_PARENT }));
  }

  async update(domain: DomainRef, id: string, data: { name?: string; parentId?: string | null }): Promise<LocationTypeRecord> {
    return record(domain, await this.db.locationType.update({ where: { id_domainId: { id, domainId: domain.id } }, data, include: WITH_PARENT }));
  }

  async delete(domain: DomainRef, id: string): Promise<void> {
    await this.db.locationType.delete({ where: { id_domainId: { id, domainId: domain.id } } });
  }

  /** The parent type's id (within the domain), or null. */
  async parentIdOf(domain: DomainRef, id: string): Promise<string | null> {
    return (await this.db.locationType.findFirst({ where: { id, domainId: domain.id }, select: { parentId: true } }))?.parentId ?? null;
  }

  /** How many locations are of the type, and how many types have it as their parent. */
  async usage(domain: DomainRef, id: string): Promise<{ locations: number; children: number }> {
    const [locations, children] = await Promise.all([
      this.db.location.count({ where: { domainId: domain.id, locationTypeId: id } }),
      this.db.locationType.count({ where: { domainId: domain.id, parentId: id } }),
    ]);
    return { locations, children };
  }
}
