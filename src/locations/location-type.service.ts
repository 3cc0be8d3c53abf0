import type { Prisma } from "../db/client.ts";
import type { Principal } from "../auth/principal.ts";
import { authorize } from "../auth/permissions.ts";
import { badInput, forbidden, notFound } from "../errors.ts";
import { isStorableText } from "../util/text.ts";

/** Location types per domain: a code, a name and an optional parent type (CONTRACT §3). */

export interface LocationTypeInput {
  code: string;
  name: string;
  parentCode?: string | null;
}

const CODE = /^[\w-]{1,100}$/;

/** A name PostgreSQL text cannot hold names nothing: look-ups answer "not found" without asking. */
const unstorable = (text: string) => !isStorableText(text);

export class LocationTypeService {
  constructor(private readonly prisma: Prisma) {}

  async create(principal: Principal, domainName: string, input: LocationTypeInput) {
    if (!principal.isSuperuser) throw forbidden("Only a superuser may do this.");
    const domain = unstorable(domainName) ? null : await this.prisma.domain.findUnique({ where: { name: domainName } });
    if (!domain) throw notFound(`Domain '${domainName}' not found`);
    if (!CODE.test(input.code)) throw badInput("A location type code is 1-100 letters, digits, '_' or '-'.");
    if (!input.name.trim()) throw badInput("A location type needs a name.");
    const clash = await this.prisma.locationType.findUnique({
      where: { domainId_code: { domainId: domain.id, code: input.code } },
    });
    if (clash) throw badInput(`LocationType '${input.code}' already exists`);
    let parentId: string | null = null;
    if (input.parentCode) {
      const parent = unstorable(input.parentCode) ? null : await this.prisma.locationType.findUnique({
        where: { domainId_code: { domainId: domain.id, code: input.parentCode } },
      });
      if (!parent) throw badInput(`LocationType '${input.parentCode}' not found`);
      parentId = parent.id;
    }
    if (unstorable(input.name)) throw badInput("A location type name cannot contain the NUL character or an unpaired surrogate.");
    return this.prisma.locationType.create({
      data: { domainId: domain.id, code: input.code, name: input.name, parentId },
      include: { parent: true, domain: true },
    });
  }

  /** Renames a type or moves it under another parent type (not under itself or its subtypes). */
  async update(principal: Principal, domainName: string, code: string, input: { name?: string | null; parentCode?: string | null }) {
    const { domain, type } = await this.existing(principal, domainName, code);
    const data: { name?: string; parentId?: string | null } = {};
    if (input.name !== undefined && input.name !== null) {
      if (!input.name.trim()) throw badInput("A location type needs a name.");
      if (unstorable(input.name)) throw badInput("A location type name cannot contain the NUL character or an unpaired surrogate.");
      data.name = input.name;
    }
    if (input.parentCode !== undefined) {
      if (input.parentCode === null || input.parentCode === "") data.parentId = null;
      else {
        const parent = unstorable(input.parentCode) ? null : await this.prisma.locationType.findUnique({
          where: { domainId_code: { domainId: domain.id, code: input.parentCode } },
        });
        if (!parent) throw badInput(`LocationType '${input.parentCode}' not found`);
        if (await this.isWithin(parent.id, type.id)) throw badInput("A location type cannot be its own ancestor.");
        data.parentId = parent.id;
      }
      if (data.parentId !== type.parentId && (await this.prisma.location.count({ where: { locationTypeId: type.id } }))) {
        throw badInput(`LocationType '${code}' is in use: its parent type cannot change.`);
      }
    }
    return this.prisma.locationType.update({ where: { id: type.id }, data, include: { parent: true, domain: true } });
  }

  /** Deletes a type that no location and no other type uses. */
  async delete(principal: Principal, domainName: string, code: string) {
    const { type } = await this.existing(principal, domainName, code);
    const [locations, children] = await Promise.all([
      this.prisma.location.count({ where: { locationTypeId: type.id } }),
      this.prisma.locationType.count({ where: { parentId: type.id } }),
    ]);
    if (locations || children) throw badInput(`LocationType '${code}' is in use and cannot be deleted.`);
    await this.prisma.locationType.delete({ where: { id: type.id } });
    return true;
  }

  private async existing(principal: Principal, domainName: string, code: string) {
    if (!principal.isSuperuser) throw forbidden("Only a superuser may do this.");
    const domain = unstorable(domainName) ? null : await this.prisma.domain.findUnique({ where: { name: domainName } });
    if (!domain) throw notFound(`Domain '${domainName}' not found`);
    const type = unstorable(code) ? null : await this.prisma.locationType.findUnique({ where: { domainId_code: { domainId: domain.id, code } } });
    if (!type) throw notFound(`LocationType '${code}' not found`);
    return { domain, type };
  }

  /** True when `typeId` is `ancestorId` or lies below it. */
  private async isWithin(typeId: string, ancestorId: string): Promise<boolean> {
    for (let id: string | null = typeId, hops = 0; id && hops < 100; hops++) {
      if (id === ancestorId) return true;
      id = (await this.prisma.locationType.findUnique({ where: { id }, select: { parentId: true } }))?.parentId ?? null;
    }
    return false;
  }

  async list(principal: Principal, domainName: string) {
    const domain = await authorize(this.prisma, principal, domainName, "locationRead");
    return this.prisma.locationType.findMany({
      where: { domainId: domain.id },
      include: { parent: true, domain: true },
      orderBy: [{ createdAt: "asc" }, { code: "asc" }],
    });
  }
}
