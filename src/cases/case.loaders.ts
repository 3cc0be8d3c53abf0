import type DataLoader from "dataloader";
import type { DomainRef } from "../auth/permissions.ts";
import { perDomainLoader } from "../graphql/domain-loader.ts";
import type { CaseRecord } from "./case.record.ts";
import type { CaseRepository } from "./case.repository.ts";
import type { FormRepository, FormView } from "./form.repository.ts";

/**
 * Per-request batching of case relations for GraphQL: a page of cases with their parents, children
 * or forms costs a constant number of queries, whatever its size. Every read goes through the
 * repositories, scoped to the domain of the case it starts from.
 */

export interface CaseLoaderSources {
  cases: CaseRepository;
  forms: FormRepository;
}

export function createCaseLoaders({ cases, forms }: CaseLoaderSources, domainIds: DataLoader<string, string | null>) {
  const scope = async (name: string): Promise<DomainRef | null> => {
    const id = await domainIds.load(name);
    return id ? { id, name } : null;
  };

  const byId = perDomainLoader<DomainRef, CaseRecord | null>(
    scope,
    async (domain, ids) => {
      const found = await cases.byIds(domain, ids);
      return ids.map((id) => found.get(id.toLowerCase()) ?? null);
    },
    null,
  );

  /** The indices that point at a case: the id of the case holding each, and its relationship. */
  const referencing = perDomainLoader<DomainRef, { caseId: string; relationship: string }[]>(
    scope,
    async (domain, ids) => {
      const byTarget = new Map<string, { caseId: string; relationship: string }[]>();
      for (const { caseId, referencedId, relationship } of await cases.referencing(domain, ids)) {
        const links = byTarget.get(referencedId);
        if (links) links.push({ caseId, relationship });
        else byTarget.set(referencedId, [{ caseId, relationship }]);
      }
      return ids.map((id) => byTarget.get(id) ?? []);
    },
    [],
  );

  const formsOf = perDomainLoader<DomainRef, FormView[]>(scope, (domain, caseIds) => forms.byCases(domain, caseIds), []);

  return {
    case: (domain: string, caseId: string) => byId.load({ domain, key: caseId }),
    /** Cases whose index points at the case with the given relationship (children or extensions), by case id. */
    related: async (domain: string, caseId: string, relationship: string): Promise<CaseRecord[]> => {
      const links = (await referencing.load({ domain, key: caseId })).filter((r) => r.relationship === relationship);
      const records = await byId.loadMany(links.map((r) => ({ domain, key: r.caseId })));
      return records.flatMap((r) => (r && !(r instanceof Error) ? [r] : []));
    },
    forms: (domain: string, caseId: string) => formsOf.load({ domain, key: caseId }),
  };
}

export type CaseLoaders = ReturnType<typeof createCaseLoaders>;
