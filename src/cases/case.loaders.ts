import type { Principal } from "../auth/principal.ts";
import { perDomainLoader, scopePerDomain } from "../graphql/domain-loader.ts";
import type { CaseLink, CaseReadScope, CaseReads } from "./case.read.service.ts";
import type { CaseRecord } from "./case.record.ts";
import type { FormView } from "./form.repository.ts";

/**
 * Per-request batching of case relations for GraphQL: a page of cases with their parents, children
 * or forms costs a constant number of queries, whatever its size. Every batch goes through the
 * caller's read scope of its domain (`caseReads.in`), obtained once per domain per request.
 */

export function createCaseLoaders(principal: Principal, caseReads: CaseReads) {
  /** The caller's read scope of a domain; none where they may not read (nothing there for them). */
  const scope = scopePerDomain<CaseReadScope>((domain) => caseReads.in(principal, domain));

  const byId = perDomainLoader<CaseReadScope, CaseRecord | null>(
    scope,
    async (s, ids) => {
      const found = await s.byIds(ids);
      return ids.map((id) => found.get(id.toLowerCase()) ?? null);
    },
    null,
  );

  /** The indices that point at a case: the id of the case holding each, and its relationship. */
  const referencing = perDomainLoader<CaseReadScope, CaseLink[]>(
    scope,
    async (s, ids) => {
      const byTarget = Map.groupBy(await s.referencing(ids), (link) => link.referencedId);
      return ids.map((id) => byTarget.get(id) ?? []);
    },
    [],
  );

  const formsOf = perDomainLoader<CaseReadScope, FormView[]>(scope, (s, caseIds) => s.formsOf(caseIds), []);

  return {
    case: (domain: string, caseId: string) => byId.load({ domain, key: caseId }),
    /**
     * The first `limit` cases whose index points at the case with the given relationship (children
     * or extensions), by case id: only those are read, however many there are.
     */
    related: async (domain: string, caseId: string, relationship: string, limit: number): Promise<CaseRecord[]> => {
      const links = (await referencing.load({ domain, key: caseId })).filter((r) => r.relationship === relationship).slice(0, limit);
      const records = await byId.loadMany(links.map((r) => ({ domain, key: r.caseId })));
      return records.flatMap((r) => (r && !(r instanceof Error) ? [r] : []));
    },
    forms: (domain: string, caseId: string) => formsOf.load({ domain, key: caseId }),
  };
}

export type CaseLoaders = ReturnType<typeof createCaseLoaders>;
