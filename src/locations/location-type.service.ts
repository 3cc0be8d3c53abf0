import type { Prisma } from "../db/client.ts";
import type { Principal } from "../auth/principal.ts";
import { authorize, type DomainRef } from "../auth/permissions.ts";
import { badInput, forbidden, notFound } from "../errors.ts";
import { isStorableText } from "../util/text.ts";
import { LocationTypeRepository, type LocationTypeRecord } from "./location-type.repository.ts";

/**
 * Location types per domain: a code, a name and an optional parent type (CONTRACT §3). Anyone who
 * may read locations may list them; only a superuser manages them. `in` answers who may (403) and
 * which domain (404) first, then the scope it returns does the work.
 */

export interface LocationTypeInput {
  code: string;
  name: string;
  parentCode?: string | null;
}

/** A change to a type: a new name, and a new parent (null or "" makes a root type); null or undefined keeps it. */
export interface LocationTypePatch {
  name?: string | null;
  parentCode?: string | null;
}

/** "read": whoever may read the domain's locations; "admin": a superuser. */
export type LocationTypeAccess = "read" | "admin";

const CODE = /^[\w-]{1,100}$/;

/** A name PostgreSQL text cannot hold names nothing: look-ups answer "not found" without asking. */
const unstorable = (text: string) => !isStorableText(text);

export class LocationTypeService {
  private readonly types: LocationTypeRepository;

  constructor(private readonly prisma: Prisma) {
    this.types = new LocationTypeRepository(prisma);
  }

  in(principal: Principal, domainName: string, access?: "read"): Promise<LocationTypeReadScope>;
  in(principal: Principal, domainName: string, access: "admin"): Promise<LocationTypeAdminScope>;
  async in(principal: Principal, domainName: string, access: LocationTypeAccess = "read"): Promise<LocationTypeReadScope> {
    if (access === "read") {
      return new LocationTypeReadScope(this.types, await authorize(this.prisma, principal, domainName, "locationRead"));
    }
    if (!principal.isSuperuser) throw forbidden("Only a superuser may do this.");
    // for a superuser, authorize is the domain look-up alone (an unknown domain is a 404): the
    // access it is given is not consulted
    return new LocationTypeAdminScope(this.types, await authorize(this.prisma, principal, domainName, "locationWrite"));
  }
}

export class LocationTypeReadScope {
  constructor(
    protected readonly types: LocationTypeRepository,
    readonly domain: DomainRef,
  ) {}

  list(): Promise<LocationTypeRecord[]> {
    return this.types.list(this.domain);
  }
}

export class LocationTypeAdminScope extends LocationTypeReadScope {
  async create(input: LocationTypeInput): Promise<LocationTypeRecord> {
    if (!CODE.test(input.code)) throw badInput("A location type code is 1-100 letters, digits, '_' or '-'.");
    if (!input.name.trim()) throw badInput("A location type needs a name.");
    if (await this.types.byCode(this.domain, input.code)) throw badInput(`LocationType '${input.code}' already exists`);
    let parentId: string | null = null;
    if (input.parentCode) parentId = (await this.parent(input.parentCode)).id;
    if (unstorable(input.name)) throw badInput("A location type name cannot contain the NUL character or an unpaired surrogate.");
    return this.types.create(this.domain, { code: input.code, name: input.name, parentId });
  }

  /** Renames a type or moves it under another parent type (not under itself or its subtypes). */
  async update(code: string, patch: LocationTypePatch): Promise<LocationTypeRecord> {
    const type = await this.existing(code);
    const data: { name?: string; parentId?: string | null } = {};
    if (patch.name !== undefined && patch.name !== null) {
      if (!patch.name.trim()) throw badInput("A location type needs a name.");
      if (unstorable(patch.name)) throw badInput("A location type name cannot contain the NUL character or an unpaired surrogate.");
      data.name = patch.name;
    }
    if (patch.parentCode !== undefined) {
      if (patch.parentCode === null || patch.parentCode === "") data.parentId = null;
      else {
        const parent = await this.parent(patch.parentCode);
        if (await this.isWithin(parent.id, type.id)) throw badInput("A location type cannot be its own ancestor.");
        data.parentId = parent.id;
      }
      if (data.parentId !== type.parentId && (await this.types.usage(this.domain, type.id)).locations) {
        throw badInput(`LocationType '${code}' is in use: its parent type cannot change.`);
      }
    }
    return this.types.update(this.domain, type.id, data);
  }

  /** Deletes a type that no location and no other type uses. */
  async delete(code: string): Promise<boolean> {
    const type = await this.existing(code);
    const usage = await this.types.usage(this.domain, type.id);
    if (usage.locations || usage.children) throw badInput(`LocationType '${code}' is in use and cannot be deleted.`);
    await this.types.delete(this.domain, type.id);
    return true;
  }

  private async existing(code: string): Promise<LocationTypeRecord> {
    const type = unstorable(code) ? null : await this.types.byCode(this.domain, code);
    if (!type) throw notFound(`LocationType '${code}' not found`);
    return type;
  }

  private async parent(code: string): Promise<LocationTypeRecord> {
    const parent = unstorable(code) ? null : await this.types.byCode(this.domain, code);
    if (!parent) throw badInput(`LocationType '${code}' not found`);
    return parent;
  }

  /** True when `typeId` is `ancestorId` or lies below it. */
  private async isWithin(typeId: string, ancestorId: string): Promise<boolean> {
    for (let id: string | null = typeId, hops = 0; id && hops < 100; hops++) {
      if (id === ancestorId) return true;
      id = await this.types.parentIdOf(this.domain, id);
    }
    return false;
  }
}
