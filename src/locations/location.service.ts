import type { Principal } from "../auth/principal.ts";
import { authorize, type DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { badInput, notFound } from "../errors.ts";
import { isUuid, newUuid } from "../util/ids.ts";
import { LocationTypeRepository, type LocationTypeRecord } from "./location-type.repository.ts";
import type { LocationBulkReader, LocationFields, LocationFilter, LocationPage, LocationQuery, LocationRecord } from "./location.model.ts";
import { LocationRepository } from "./location.repository.ts";
import { checkBulkSize, checkFields, checkPaging, type CheckedFields } from "./location.rules.ts";
import { isValidSiteCode, siteCodeBase, uniqueSiteCode } from "./site-code.ts";

/**
 * The Location API v2 (CONTRACT §3): list, detail, create, update and the atomic bulk write. `in`
 * answers who may (401/403) and which domain (404) before any input is looked at; the scope it
 * returns takes typed commands and returns records. Every write runs in a transaction holding the
 * domain's location lock, so uniqueness of site codes and sibling names holds across processes,
 * and a refused request changes nothing.
 */

type Tx = Parameters<Parameters<Prisma["$transaction"]>[0]>[0];

/** "read": view_locations or edit_locations; "write": edit_locations. */
export type LocationAccess = "read" | "write";

export class LocationService {
  private readonly locations: LocationRepository;
  private readonly types: LocationTypeRepository;

  constructor(private readonly prisma: Prisma) {
    this.locations = new LocationRepository(prisma);
    this.types = new LocationTypeRepository(prisma);
  }

  in(principal: Principal, domainName: string, access?: "read"): Promise<LocationReadScope>;
  in(principal: Principal, domainName: string, access: "write"): Promise<LocationWriteScope>;
  async in(principal: Principal, domainName: string, access: LocationAccess = "read"): Promise<LocationReadScope> {
    if (access === "read") {
      return new LocationReadScope(this.locations, this.types, await authorize(this.prisma, principal, domainName, "locationRead"));
    }
    const domain = await authorize(this.prisma, principal, domainName, "locationWrite");
    return new LocationWriteScope(this.locations, this.types, domain, this.prisma);
  }
}

/** The reads of one domain; the batch reads serve GraphQL's relation loaders. */
export class LocationReadScope {
  constructor(
    protected readonly locations: LocationRepository,
    private readonly types: LocationTypeRepository,
    readonly domain: DomainRef,
  ) {}

  list(query: LocationQuery): Promise<LocationPage> {
    checkPaging(query.limit, query.offset);
    return this.locations.page(this.domain, query.filter, query.order, query.limit, query.offset);
  }

  /** How many locations the filter matches. */
  count(filter: LocationFilter): Promise<number> {
    return this.locations.count(this.domain, filter);
  }

  async get(locationId: string): Promise<LocationRecord> {
    const found = (await this.locations.byIds(this.domain, [locationId])).get(locationId.toLowerCase());
    if (!found) throw notFound(`Location '${locationId}' not found`);
    return found;
  }

  bySiteCode(siteCode: string): Promise<LocationRecord | undefined> {
    return this.locations.bySiteCode(this.domain, siteCode);
  }

  /** By (lowercased) id; ids not in the domain are left out. */
  byIds(ids: string[]): Promise<Map<string, LocationRecord>> {
    return this.locations.byIds(this.domain, ids);
  }

  /** The children of each parent, by name. */
  childrenOf(parentIds: string[], perParent: number): Promise<LocationRecord[]> {
    return this.locations.childrenOf(this.domain, parentIds, perParent);
  }

  /** For each location, its ancestors nearest first. */
  ancestorsOf(ids: string[]): Promise<Map<string, LocationRecord[]>> {
    return this.locations.ancestorsOf(this.domain, ids);
  }

  /** For each location, its descendants to `depth` levels (all when null), breadth first. */
  descendantsOf(ids: string[], depth: number | null, perStart: number): Promise<Map<string, LocationRecord[]>> {
    return this.locations.descendantsOf(this.domain, ids, depth, perStart);
  }

  /** Location types of the domain by id. */
  typesByIds(ids: string[]): Promise<Map<string, LocationTypeRecord>> {
    return this.types.byIds(this.domain, ids);
  }
}

/** The reads and the writes of one domain, for a principal who may edit its locations. */
export class LocationWriteScope extends LocationReadScope {
  constructor(
    locations: LocationRepository,
    types: LocationTypeRepository,
    domain: DomainRef,
    private readonly prisma: Prisma,
  ) {
    super(locations, types, domain);
  }

  async create(fields: LocationFields): Promise<LocationRecord> {
    const checked = checkFields(fields, true);
    return this.inTransaction((tx) => this.apply(tx, undefined, checked));
  }

  /** A partial update; an unknown id is a 404. */
  async update(locationId: string, fields: LocationFields): Promise<LocationRecord> {
    return this.inTransaction(async (tx) => {
      const existing = (await new LocationRepository(tx).byIds(this.domain, [locationId])).get(locationId.toLowerCase());
      if (!existing) throw notFound(`Location '${locationId}' not found`);
      return this.apply(tx, existing, checkFields(fields, false));
    });
  }

  /**
   * Creates and updates, all or nothing; the ids in request order. Each item is read, checked and
   * written before the next is read, so it sees the effects of those before it and the first
   * failure is the one answered. An update of an unknown id is a 400 here.
   */
  async bulk<T>(items: readonly T[], reader: LocationBulkReader<T>): Promise<string[]> {
    checkBulkSize(items.length);
    return this.inTransaction(async (tx) => {
      const ids: string[] = [];
      for (const item of items) {
        const id = reader.locationId(item);
        if (id === undefined) {
          ids.push((await this.apply(tx, undefined, checkFields(reader.fields(item, true), true))).id);
          continue;
        }
        const existing = (await new LocationRepository(tx).byIds(this.domain, [id])).get(id.toLowerCase());
        if (!existing) throw badInput(`Location '${id}' not found`);
        ids.push((await this.apply(tx, existing, checkFields(reader.fields(item, false), false))).id);
      }
      return ids;
    });
  }

  private async inTransaction<T>(run: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(
      async (tx) => {
        // One writer per domain at a time: sibling names and site codes stay unique.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`locations:${this.domain.id}`}, 0))`;
        return run(tx);
      },
      { timeout: 60_000, maxWait: 30_000 },
    );
  }

  /** Validates one create (existing undefined) or update against the database, then writes it. */
  private async apply(tx: Tx, existing: LocationRecord | undefined, changes: CheckedFields): Promise<LocationRecord> {
    const type = await this.resolveType(tx, changes.typeCode ?? existing!.typeCode);
    const parentId = changes.parentId === undefined ? (existing?.parentId ?? null) : changes.parentId;
    await this.checkParent(tx, existing, parentId, type);
    if (existing && type.id !== existing.typeId) {
      const children = await tx.location.count({ where: { parentId: existing.id } });
      if (children) throw badInput("Location type cannot be changed for a location that has child locations.");
    }
    const name = changes.name ?? existing!.name;
    const siteCode = await this.siteCodeFor(tx, existing, changes.siteCode, name);
    const sibling = await tx.location.findFirst({
      where: { domainId: this.domain.id, parentId, name, ...(existing ? { NOT: { id: existing.id } } : {}) },
      select: { id: true },
    });
    if (sibling) throw badInput("Location with same name and parent already exists.");

    const data = {
      name,
      siteCode,
      locationTypeId: type.id,
      parentId,
      latitude: changes.latitude === undefined ? (existing?.latitude ?? null) : changes.latitude,
      longitude: changes.longitude === undefined ? (existing?.longitude ?? null) : changes.longitude,
      locationData: changes.locationData ?? existing?.locationData ?? {},
      lastModified: new Date(),
    };
    const id = existing?.id ?? newUuid();
    if (existing) await tx.location.update({ where: { id_domainId: { id, domainId: this.domain.id } }, data });
    else await tx.location.create({ data: { id, domainId: this.domain.id, ...data } });
    if (Object.hasOwn(data.locationData, "__proto__")) {
      // Prisma rebuilds Json input by assignment, which drops an own "__proto__" key: write it as given.
      await tx.$executeRaw`UPDATE locations SET location_data = ${JSON.stringify(data.locationData)}::jsonb WHERE domain_id = ${this.domain.id}::uuid AND id = ${id}::uuid`;
    }
    return (await new LocationRepository(tx).byIds(this.domain, [id])).get(id)!;
  }

  private async resolveType(tx: Tx, code: string) {
    const type = await tx.locationType.findUnique({
      where: { domainId_code: { domainId: this.domain.id, code } },
      include: { children: { select: { id: true } } },
    });
    if (!type) throw badInput(`LocationType '${code}' not found`);
    return type;
  }

  /** The parent exists in the domain, may have children, of this type, and is not the location's own subtree. */
  private async checkParent(tx: Tx, existing: LocationRecord | undefined, parentId: string | null, type: { parentId: string | null }) {
    if (parentId === null) {
      if (type.parentId !== null) throw badInput("Location type not valid for the selected parent.");
      return;
    }
    const parent = isUuid(parentId)
      ? await tx.location.findFirst({
          where: { id: parentId.toLowerCase(), domainId: this.domain.id },
          include: { locationType: { include: { children: { select: { id: true } } } } },
        })
      : null;
    if (!parent) throw badInput("Could not find parent location with the given ID.");
    if (existing) {
      const ancestors = (await new LocationRepository(tx).ancestorsOf(this.domain, [parent.id])).get(parent.id) ?? [];
      if (parent.id === existing.id || ancestors.some((a) => a.id === existing.id)) {
        throw badInput("A location cannot be moved under itself or one of its descendants.");
      }
    }
    if (parent.locationType.children.length === 0) throw badInput("The selected parent location cannot have child locations!");
    if (type.parentId !== parent.locationTypeId) throw badInput("Location type not valid for the selected parent.");
  }

  private async siteCodeFor(tx: Tx, existing: LocationRecord | undefined, given: string | undefined, name: string) {
    if (given === undefined) {
      if (existing) return existing.siteCode;
      const base = siteCodeBase(name);
      const taken = await tx.location.findMany({
        where: { domainId: this.domain.id, siteCode: { startsWith: base } },
        select: { siteCode: true },
      });
      return uniqueSiteCode(base, new Set(taken.map((t) => t.siteCode)));
    }
    const code = given.toLowerCase();
    if (!isValidSiteCode(code)) throw badInput("The site code cannot contain spaces or special characters.");
    const clash = await tx.location.findFirst({
      where: { domainId: this.domain.id, siteCode: code, ...(existing ? { NOT: { id: existing.id } } : {}) },
      select: { id: true },
    });
    if (clash) throw badInput("another location already uses this site code");
    return code;
  }
}
