import type { Prisma } from "../db/client.ts";
import type { Principal } from "../auth/principal.ts";
import { authorize } from "../auth/permissions.ts";
import { badInput, forbidden, notFound } from "../errors.ts";

/** Location types per domain: a code, a name and an optional parent type (CONTRACT §3). */

export interface LocationTypeInput {
  code: string;
  name: string;
  parentCode?: string | null;
}

const CODE = /^[\w-]{1,100}$/;

export class LocationTypeService {
  constructor(private readonly prisma: Prisma) {}

  async create(principal: Principal, domainName: string, input: LocationTypeInput) {
    if (!principal.isSuperuser) throw forbidden("Only a superuser may do this.");
    const domain = await this.prisma.domain.findUnique({ where: { name: domainName } });
    if (!domain) throw notFound(`Domain '${domainName}' not found`);
    if (!CODE.test(input.code)) throw badInput("A location type code is 1-100 letters, digits, '_' or '-'.");
    if (!input.name.trim()) throw badInput("A location type needs a name.");
    const clash = await this.prisma.locationType.findUnique({
      where: { domainId_code: { domainId: domain.id, code: input.code } },
    });
    if (clash) throw badInput(`LocationType '${input.code}' already exists`);
    let parentId: string | null = null;
    if (input.parentCode) {
      const parent = await this.prisma.locationType.findUnique({
        where: { domainId_code: { domainId: domain.id, code: input.parentCode } },
      });
      if (!parent) throw badInput(`LocationType '${input.parentCode}' not found`);
      parentId = parent.id;
    }
    return this.prisma.locationType.create({
      data: { domainId: domain.id, code: input.code, name: input.name, parentId },
      include: { parent: true, domain: true },
    });
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
