import { getOrCreate } from "../util/maps.ts";
import type { Principal } from "../auth/principal.ts";
import { perDomainLoader, scopePerDomain } from "../graphql/domain-loader.ts";
import {
  bulkEntries,
  checkBulkRequest,
  type BulkEntry,
  type BulkRequest,
  type CaseLink,
  type CaseReadScope,
  type CaseReads,
} from "./case.read.service.ts";
import type { CaseRecord } from "./case.record.ts";
import type { FormView } from "./form.repository.ts";

/**
 * Per-request batching of case relations for GraphQL: a page of cases with their parents, children
 * or forms costs a constant number of queries, whatever its size. Every batch goes through the
 * caller's read scope of its domain (`caseReads.in`), obtained once per domain per request.
 */

export function createCaseLoaders(principal: Principal, caseReads: CaseReads) {
  /** The caller's read scope of each domain, checked once per request. */
  const scopes = scopePerDomain<CaseReadScope>((domain) => caseReads.in(principal, domain));
  const scope = scopes.orNull;

  const byId = perDomainLoader<CaseReadScope, CaseRecord | null>(
    scope,
    async (s, ids) => {
      const found = await s.byIds(ids);
      return ids.map((id) => found.get(id.toLowerCase()) ?? null);
    },
    null,
  );

  /** The oldest case with each external id (external ids are case-sensitive). */
  const byExternalId = perDomainLoader<CaseReadScope, CaseRecord | null>(
    scope,
    async (s, ids) => {
      const found = await s.byExternalIds(ids);
      return ids.map((id) => found.get(id) ?? null);
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

  /** keys `first/caseId`: one query per `first` asked for, reading no more than that of each case */
  const formsOf = perDomainLoader<CaseReadScope, FormView[]>(
    scope,
    async (s, keys) => {
      const found = new Map<string, FormView[]>();
      for (const [first, pairs] of Map.groupBy(
        keys.map((key) => key.split("/")),
        ([first]) => first,
      )) {
        const lists = await s.formsOf(
          pairs.map(([, id]) => id!),
          Number(first),
        );
        for (const [i, [, id]] of pairs.entries()) found.set(`${first}/${id}`, lists[i]!);
      }
      return keys.map((key) => found.get(key) ?? []);
    },
    [],
  );

  const relatedOnce = new Map<string, Promise<CaseRecord[]>>();
  const SEP = "\u0000";
  const recordsOf = async (loader: typeof byId, domain: string, ids: string[]) =>
    (await loader.loadMany(ids.map((key) => ({ domain, key })))).map((r) => (r && !(r instanceof Error) ? r : undefined));

  return {
    /** The caller's read scope of the domain, or the 401/403/404 to answer: one check per request. */
    reads: scopes.open,
    case: (domain: string, caseId: string) => byId.load({ domain, key: caseId }),
    /**
     * The bulk fetch (as `CaseReadScope.fetch`), batched with every other fetch and relation of the
     * request: 100 aliased `casesByIds` read their cases in one query, not 100.
     */
    fetch: async (domain: string, request: BulkRequest): Promise<BulkEntry[]> => {
      await scopes.open(domain);
      checkBulkRequest(request);
      const [byCaseId, byExternal] = await Promise.all([
        recordsOf(byId, domain, request.caseIds),
        recordsOf(byExternalId, domain, request.externalIds),
      ]);
      return bulkEntries(request, byCaseId, byExternal);
    },
    /**
     * The first `limit` cases whose index points at the case with the given relationship (children
     * or extensions), by case id: only those cases are read and built; the index rows that point at
     * the case are all read (small rows, one query for the whole page).
     */
    related: (domain: string, caseId: string, relationship: string, limit: number): Promise<CaseRecord[]> => {
      // the same relation asked for by many parents (aliases, repeated ids) is read and built once
      const key = [domain, caseId, relationship, limit].join(SEP);
      return getOrCreate(relatedOnce, key, async () => {
        const links = (await referencing.load({ domain, key: caseId })).filter((r) => r.relationship === relationship).slice(0, limit);
        return (
          await recordsOf(
            byId,
            domain,
            links.map((r) => r.caseId),
          )
        ).filter((r) => r !== undefined);
      });
    },
    /** the first `first` forms that wrote the case, oldest first */
    forms: (domain: string, caseId: string, first: number) => formsOf.load({ domain, key: `${first}/${caseId}` }),
  };
}

export type CaseLoaders = ReturnType<typeof createCaseLoaders>;
