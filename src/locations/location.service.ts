import type { Principal } from "../auth/principal.ts";
import { authorize, type DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { badInput, notFound } from "../errors.ts";
import { parseDateValue, rangeBound, type RangeOp } from "../util/dates.ts";
import { isUuid, newUuid } from "../util/ids.ts";
import { requireJson } from "../util/json.ts";
import { pythonStr } from "../util/python.ts";
import { LocationRepository, type LocationFilter, type LocationOrder } from "./location.repository.ts";
import type { LocationRecord } from "./location.serializer.ts";
import { isValidSiteCode, siteCodeBase, uniqueSiteCode } from "./site-code.ts";

/**
 * The Location API v2 (CONTRACT §3): list, detail, create, update and the atomic bulk PATCH. Every
 * write runs in a transaction holding the domain's location lock, so uniqueness of site codes and
 * sibling names holds across processes, and a refused request changes nothing.
 */

export const MAX_LOCATION_LIMIT = 5000;
export const MAX_BULK_LOCATIONS = 100;
const FIELDS = ["name", "location_type_code", "site_code", "latitude", "longitude", "location_data", "parent_location_id"];
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
/**
 * Longest name and site code, in characters (HQ's 255): both are index keys, and a btree entry over
 * ~2700 bytes fails in SQL (a 500).
 */
export const MAX_TEXT_LENGTH = 255;

type Tx = Parameters<Parameters<Prisma["$transaction"]>[0]>[0];

export interface ListParams {
  params: [string, string][];
}

export interface LocationPage {
  records: LocationRecord[];
  total: number;
  limit: number;
  offset: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Tastypie's paging parameters: limit 0 means the maximum; larger limits are capped. */
function paging(params: Map<string, string>): { limit: number; offset: number } {
  const rawLimit = params.get("limit");
  let limit = 20;
  if (rawLimit !== undefined) {
    if (!/^\d+$/.test(rawLimit)) throw badInput(`Invalid limit '${rawLimit}' provided. Please provide a positive integer.`);
    limit = Number(rawLimit) === 0 ? MAX_LOCATION_LIMIT : Math.min(Number(rawLimit), MAX_LOCATION_LIMIT);
  }
  const rawOffset = params.get("offset");
  let offset = 0;
  if (rawOffset !== undefined) {
    if (!/^-?\d+$/.test(rawOffset)) throw badInput(`Invalid offset '${rawOffset}' provided. Please provide an integer.`);
    if (Number(rawOffset) < 0) throw badInput(`Invalid offset '${rawOffset}' provided. Please provide a positive integer >= 0.`);
    // PostgreSQL's OFFSET is a bigint: a larger value would fail in SQL (a 500), and no table is that long.
    if (!Number.isSafeInteger(Number(rawOffset))) {
      throw badInput(`Invalid offset '${rawOffset}' provided. Please provide an integer up to ${Number.MAX_SAFE_INTEGER}.`);
    }
    offset = Number(rawOffset);
  }
  return { limit, offset };
}

export function parseLocationQuery(pairs: [string, string][]) {
  const params = new Map(pairs);
  const order = params.get("order_by") ?? "default";
  if (order !== "default" && order !== "last_modified" && order !== "-last_modified") {
    throw badInput(`No matching '${order.replace(/^-/, "")}' field for ordering on.`);
  }
  const filter: LocationFilter = {
    siteCode: params.get("site_code"),
    name: params.get("name"),
    typeCode: params.get("location_type_code"),
    parentId: params.get("parent_location_id"),
    modified: [],
  };
  for (const op of ["gt", "gte", "lt", "lte"] as RangeOp[]) {
    const value = params.get(`last_modified.${op}`);
    if (value !== undefined) filter.modified.push(rangeBound(op, parseDateValue(value)));
  }
  return { filter, order: order as LocationOrder, ...paging(params) };
}

/** What one create or update asks for, checked for shape. */
interface Changes {
  name?: string;
  typeCode?: string;
  siteCode?: string;
  latitude?: string | null;
  longitude?: string | null;
  locationData?: Record<string, string>;
  /** null makes the location a root */
  parentId?: string | null;
}

function stringField(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw badInput(`'${key}' must be a string, received '${pythonStr(value)}'`);
  if (value.includes("\u0000")) throw badInput(`'${key}' cannot contain the NUL character.`);
  // not text at all; PGlite fails to encode two in a row (a 500 before)
  if (/\p{Cs}/u.test(value)) throw badInput(`'${key}' cannot contain an unpaired surrogate.`);
  if ((key === "name" || key === "site_code") && [...value].length > MAX_TEXT_LENGTH) {
    throw badInput(`'${key}' cannot be longer than ${MAX_TEXT_LENGTH} characters.`);
  }
  return value;
}

function coordinate(body: Record<string, unknown>, key: string): string | null | undefined {
  const value = body[key];
  if (value === undefined || value === null) return value as null | undefined;
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== "string" || !DECIMAL.test(text.trim())) {
    throw badInput(`'${key}' must be a decimal number, received '${pythonStr(value)}'`);
  }
  const [whole, fraction = ""] = text.trim().replace(/^[+-]/, "").split(".");
  if (fraction.length > 10 || whole.replace(/^0+/, "").length > 10) {
    throw badInput(`'${key}' must have at most 10 digits before and 10 after the decimal point`);
  }
  return text.trim();
}

function parseChanges(raw: unknown, creating: boolean, allowed: string[]): Changes {
  if (!isObject(raw)) throw badInput("Payload must be a JSON object");
  const invalid = Object.keys(raw).filter((k) => !allowed.includes(k));
  if (invalid.length) throw badInput(`Invalid fields were included in request: ${pythonStr(invalid)}.`);
  const missing = (k: string) => raw[k] === undefined || raw[k] === null || raw[k] === "";
  if (creating && (missing("name") || missing("location_type_code"))) {
    throw badInput("'name' and 'location_type_code' are required fields when creating a new location.");
  }
  const changes: Changes = {
    name: stringField(raw, "name"),
    typeCode: stringField(raw, "location_type_code"),
    siteCode: stringField(raw, "site_code"),
    latitude: coordinate(raw, "latitude"),
    longitude: coordinate(raw, "longitude"),
  };
  if (raw.parent_location_id !== undefined) {
    changes.parentId = raw.parent_location_id === null || raw.parent_location_id === "" ? null : stringField(raw, "parent_location_id");
  }
  if (raw.location_data !== undefined) {
    const data = raw.location_data;
    if (!isObject(data) || !Object.values(data).every((v) => typeof v === "string")) {
      throw badInput("'location_data' must be a dictionary of string values.");
    }
    // PostgreSQL's jsonb cannot hold \u0000 (it would fail in SQL: a 500).
    if (Object.entries(data).some(([k, v]) => k.includes("\u0000") || (v as string).includes("\u0000"))) {
      throw badInput("'location_data' cannot contain the NUL character.");
    }
    // Nor an unpaired surrogate: JSON.stringify writes it as an escape jsonb refuses (a 500 before).
    if (Object.entries(data).some(([k, v]) => /\p{Cs}/u.test(k) || /\p{Cs}/u.test(v as string))) {
      throw badInput("'location_data' cannot contain an unpaired surrogate.");
    }
    changes.locationData = data as Record<string, string>;
  }
  if (changes.name !== undefined && !changes.name.trim()) throw badInput("'name' cannot be blank.");
  return changes;
}

export class LocationService {
  constructor(private readonly prisma: Prisma) {}

  private domain(principal: Principal, domainName: string, write = false) {
    return authorize(this.prisma, principal, domainName, write ? "locationWrite" : "locationRead");
  }

  async list(principal: Principal, domainName: string, params: [string, string][]): Promise<LocationPage> {
    const domain = await this.domain(principal, domainName);
    const query = parseLocationQuery(params);
    const page = await new LocationRepository(this.prisma).page(domain, query.filter, query.order, query.limit, query.offset);
    return { ...page, limit: query.limit, offset: query.offset };
  }

  async get(principal: Principal, domainName: string, locationId: string): Promise<LocationRecord> {
    const domain = await this.domain(principal, domainName);
    const found = (await new LocationRepository(this.prisma).byIds(domain, [locationId])).get(locationId.toLowerCase());
    if (!found) throw notFound(`Location '${locationId}' not found`);
    return found;
  }

  async bySiteCode(principal: Principal, domainName: string, siteCode: string): Promise<LocationRecord | undefined> {
    return new LocationRepository(this.prisma).bySiteCode(await this.domain(principal, domainName), siteCode);
  }

  /** For GraphQL: the domain a principal may read, for loaders. */
  readableDomain(principal: Principal, domainName: string): Promise<DomainRef> {
    return this.domain(principal, domainName);
  }

  async create(principal: Principal, domainName: string, body: unknown): Promise<LocationRecord> {
    const domain = await this.domain(principal, domainName, true);
    const changes = parseChanges(requireJson(body), true, FIELDS);
    return this.inTransaction(domain, (tx) => this.apply(tx, domain, undefined, changes));
  }

  async update(principal: Principal, domainName: string, locationId: string, body: unknown): Promise<LocationRecord> {
    const domain = await this.domain(principal, domainName, true);
    const json = requireJson(body);
    return this.inTransaction(domain, async (tx) => {
      const existing = (await new LocationRepository(tx).byIds(domain, [locationId])).get(locationId.toLowerCase());
      if (!existing) throw notFound(`Location '${locationId}' not found`);
      return this.apply(tx, domain, existing, parseChanges(json, false, FIELDS));
    });
  }

  /** `PATCH {"objects": […]}`: creates and updates, all or nothing; the ids in request order. */
  async bulk(principal: Principal, domainName: string, body: unknown): Promise<string[]> {
    const domain = await this.domain(principal, domainName, true);
    const json = requireJson(body);
    if (!isObject(json) || !Array.isArray(json.objects)) {
      throw badInput("The request must be an object with an 'objects' list.");
    }
    const items = json.objects;
    if (items.length > MAX_BULK_LOCATIONS) {
      throw badInput(`You cannot submit more than ${MAX_BULK_LOCATIONS} locations in a single request.`);
    }
    return this.inTransaction(domain, async (tx) => {
      const ids: string[] = [];
      for (const item of items) {
        const id = isObject(item) ? item.location_id : undefined;
        if (id === undefined) {
          ids.push((await this.apply(tx, domain, undefined, parseChanges(item, true, FIELDS))).id);
          continue;
        }
        if (typeof id !== "string") throw badInput(`'location_id' must be a string, received '${pythonStr(id)}'`);
        const existing = (await new LocationRepository(tx).byIds(domain, [id])).get(id.toLowerCase());
        if (!existing) throw badInput(`Location '${id}' not found`);
        ids.push((await this.apply(tx, domain, existing, parseChanges(item, false, [...FIELDS, "location_id"]))).id);
      }
      return ids;
    });
  }

  private async inTransaction<T>(domain: DomainRef, run: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(
      async (tx) => {
        // One writer per domain at a time: sibling names and site codes stay unique.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`locations:${domain.id}`}, 0))`;
        return run(tx);
      },
      { timeout: 60_000, maxWait: 30_000 },
    );
  }

  /** Validates one create (existing undefined) or update against the database, then writes it. */
  private async apply(tx: Tx, domain: DomainRef, existing: LocationRecord | undefined, changes: Changes): Promise<LocationRecord> {
    const type = await this.resolveType(tx, domain, changes.typeCode ?? existing!.typeCode);
    const parentId = changes.parentId === undefined ? (existing?.parentId ?? null) : changes.parentId;
    await this.checkParent(tx, domain, existing, parentId, type);
    if (existing && type.id !== existing.typeId) {
      const children = await tx.location.count({ where: { parentId: existing.id } });
      if (children) throw badInput("Location type cannot be changed for a location that has child locations.");
    }
    const name = changes.name ?? existing!.name;
    const siteCode = await this.siteCodeFor(tx, domain, existing, changes.siteCode, name);
    const sibling = await tx.location.findFirst({
      where: { domainId: domain.id, parentId, name, ...(existing ? { NOT: { id: existing.id } } : {}) },
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
    if (existing) await tx.location.update({ where: { id }, data });
    else await tx.location.create({ data: { id, domainId: domain.id, ...data } });
    if (Object.hasOwn(data.locationData, "__proto__")) {
      // Prisma rebuilds Json input by assignment, which drops an own "__proto__" key: write it as given.
      await tx.$executeRaw`UPDATE locations SET location_data = ${JSON.stringify(data.locationData)}::jsonb WHERE id = ${id}::uuid`;
    }
    return (await new LocationRepository(tx).byIds(domain, [id])).get(id)!;
  }

  private async resolveType(tx: Tx, domain: DomainRef, code: string) {
    const type = await tx.locationType.findUnique({
      where: { domainId_code: { domainId: domain.id, code } },
      include: { children: { select: { id: true } } },
    });
    if (!type) throw badInput(`LocationType '${code}' not found`);
    return type;
  }

  /** The parent exists in the domain, may have children, of this type, and is not the location's own subtree. */
  private async checkParent(tx: Tx, domain: DomainRef, existing: LocationRecord | undefined, parentId: string | null, type: { parentId: string | null }) {
    if (parentId === null) {
      if (type.parentId !== null) throw badInput("Location type not valid for the selected parent.");
      return;
    }
    const parent = isUuid(parentId)
      ? await tx.location.findFirst({
          where: { id: parentId.toLowerCase(), domainId: domain.id },
          include: { locationType: { include: { children: { select: { id: true } } } } },
        })
      : null;
    if (!parent) throw badInput("Could not find parent location with the given ID.");
    if (existing) {
      const ancestors = (await new LocationRepository(tx).ancestorsOf(domain, [parent.id])).get(parent.id) ?? [];
      if (parent.id === existing.id || ancestors.some((a) => a.id === existing.id)) {
        throw badInput("A location cannot be moved under itself or one of its descendants.");
      }
    }
    if (parent.locationType.children.length === 0) throw badInput("The selected parent location cannot have child locations!");
    if (type.parentId !== parent.locationTypeId) throw badInput("Location type not valid for the selected parent.");
  }

  private async siteCodeFor(tx: Tx, domain: DomainRef, existing: LocationRecord | undefined, given: string | undefined, name: string) {
    if (given === undefined) {
      if (existing) return existing.siteCode;
      const base = siteCodeBase(name);
      const taken = await tx.location.findMany({
        where: { domainId: domain.id, siteCode: { startsWith: base } },
        select: { siteCode: true },
      });
      return uniqueSiteCode(base, new Set(taken.map((t) => t.siteCode)));
    }
    const code = given.toLowerCase();
    if (!isValidSiteCode(code)) throw badInput("The site code cannot contain spaces or special characters.");
    const clash = await tx.location.findFirst({
      where: { domainId: domain.id, siteCode: code, ...(existing ? { NOT: { id: existing.id } } : {}) },
      select: { id: true },
    });
    if (clash) throw badInput("another location already uses this site code");
    return code;
  }
}
