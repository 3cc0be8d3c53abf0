import type { Prisma } from "../db/client.ts";
import type { Principal } from "./principal.ts";
import { authorize, type Access, type DomainRef } from "./permissions.ts";

/**
 * Domains by name, for the code that holds no feature service of its own over them: the per-request
 * domain-id look-up of the GraphQL loaders, and authorize() over this process's database. Keeps the
 * raw Prisma client out of the faces.
 */
export class DomainDirectory {
  constructor(private readonly prisma: Prisma) {}

  /** The domain the principal may act in for `access`, or the 403/404 to answer (see authorize). */
  authorize(principal: Principal, domainName: string, access: Access): Promise<DomainRef> {
    return authorize(this.prisma, principal, domainName, access);
  }

  /** The id of each named domain, in the order given (null: no such domain). */
  async idsByName(names: readonly string[]): Promise<(string | null)[]> {
    const rows = await this.prisma.domain.findMany({ where: { name: { in: [...names] } }, select: { id: true, name: true } });
    const byName = new Map(rows.map((r) => [r.name, r.id]));
    return names.map((n) => byName.get(n) ?? null);
  }
}
