import type { Prisma } from "../db/client.ts";
import { DomainError, forbidden } from "../errors.ts";
import { isStorableText } from "../util/text.ts";
import type { DomainGrant, Permission, Principal } from "./principal.ts";

/**
 * What an operation needs (CONTRACT §1): every permission in `all`, and at least one of `anyOf`.
 * Reading cases needs access_api and view_data or edit_data; editing needs access_api and edit_data.
 */
export interface Requirement {
  all: Permission[];
  anyOf?: Permission[];
}

export const ACCESS = {
  caseRead: { all: ["access_api"], anyOf: ["view_data", "edit_data"] },
  caseWrite: { all: ["access_api", "edit_data"] },
  locationRead: { all: ["access_api"], anyOf: ["view_locations", "edit_locations"] },
  locationWrite: { all: ["access_api", "edit_locations"] },
  apps: { all: ["edit_apps"] },
} satisfies Record<string, Requirement>;

export type Access = keyof typeof ACCESS;

export interface DomainRef {
  id: string;
  name: string;
}

export function satisfies(granted: readonly string[], requirement: Requirement): boolean {
  return requirement.all.every((p) => granted.includes(p)) && (!requirement.anyOf || requirement.anyOf.some((p) => granted.includes(p)));
}

/**
 * The domain the principal may act in for `access`, or the error to answer. An unknown domain is
 * a 404 only for a superuser: anyone else gets the same 403 as for a domain they are not in, so
 * that domain names cannot be probed.
 */
export async function authorize(prisma: Prisma, principal: Principal, domainName: string, access: Access): Promise<DomainRef> {
  if (principal.memberships && !principal.isSuperuser) return authorizeMember(principal.memberships.get(domainName), domainName, access);
  // A name PostgreSQL text cannot hold (NUL; unpaired surrogates, which PGlite may even fail to
  // encode) names no domain: answer as for an unknown one.
  const domain = !isStorableText(domainName)
    ? null
    : await prisma.domain.findUnique({
        where: { name: domainName },
        select: { id: true, name: true, memberships: { where: { userId: principal.userId }, select: { permissions: true } } },
      });
  if (principal.isSuperuser) {
    if (!domain) throw new DomainError("NOT_FOUND", `Domain '${domainName}' not found`);
    return { id: domain.id, name: domain.name };
  }
  const membership = domain?.memberships[0];
  return authorizeMember(domain && membership && { id: domain.id, name: domain.name, permissions: membership.permissions }, domainName, access);
}

/**
 * Of `names`, the domains in which the principal may hold anything at all: a member's own (whatever
 * the permissions), or, for a superuser, those that exist. What `Query.nodes` asks once for all the
 * domains its ids name, before it opens any scope: ids naming a thousand unknown domains then cost
 * one query (none for a principal that carries its memberships), not one check each.
 */
export async function domainsOpenTo(prisma: Prisma, principal: Principal, names: Iterable<string>): Promise<Set<string>> {
  const wanted = [...new Set(names)].filter(isStorableText);
  const memberships = principal.memberships;
  if (memberships && !principal.isSuperuser) return new Set(wanted.filter((name) => memberships.has(name)));
  if (!wanted.length) return new Set();
  const membersOnly = principal.isSuperuser ? {} : { memberships: { some: { userId: principal.userId } } };
  const rows = await prisma.domain.findMany({ where: { name: { in: wanted }, ...membersOnly }, select: { name: true } });
  return new Set(rows.map((row) => row.name));
}

/** The member's domain, or the same 403 for a domain they are not in as for one that does not exist. */
function authorizeMember(grant: DomainGrant | null | undefined, domainName: string, access: Access): DomainRef {
  if (!grant) throw forbidden(`You are not a member of the domain '${domainName}'.`);
  if (!satisfies(grant.permissions, ACCESS[access])) throw forbidden("You do not have permission to do this.");
  return { id: grant.id, name: grant.name };
}
