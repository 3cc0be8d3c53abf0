import type { Principal } from "../auth/principal.ts";
import { perDomainLoader, scopePerDomain } from "../graphql/domain-loader.ts";
import type { MediaFile, MultimediaJobService, MultimediaScope } from "./job.service.ts";

/**
 * Per-request batching of the stored files the apps of a GraphQL response map: one query per
 * domain, whatever the number of apps. Every batch goes through the caller's multimedia scope of
 * its domain (`multimedia.in`), obtained once per domain per request and shared with the resolvers
 * (`scope`), so a map naming another domain's file finds nothing.
 */
export function createMultimediaLoaders(principal: Principal, multimedia: MultimediaJobService) {
  /** The caller's multimedia scope of each domain, checked once per request. */
  const scopes = scopePerDomain<MultimediaScope>((domain) => multimedia.in(principal, domain));
  const files = perDomainLoader<MultimediaScope, MediaFile | null>(
    scopes.orNull,
    async (scope, ids) => {
      const found = await scope.files(ids);
      return ids.map((id) => found.get(id) ?? null);
    },
    null,
  );
  return {
    /** The caller's multimedia scope of the domain, or the 401/403/404 to answer: one check per request. */
    scope: scopes.open,
    /** the domain's files with these ids, in that order, leaving out any it does not have (or the caller may not see) */
    files: async (domain: string, ids: string[]) => {
      const rows = await Promise.all(ids.map((id) => files.load({ domain, key: id })));
      return rows.filter((row) => row !== null);
    },
  };
}

export type MultimediaLoaders = ReturnType<typeof createMultimediaLoaders>;
