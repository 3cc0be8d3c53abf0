import { perDomainLoader } from "../graphql/domain-loader.ts";
import type { MediaFile, MultimediaJobService } from "./job.service.ts";

/**
 * Per-request batching of the stored files the apps of a GraphQL response map: one query per
 * domain, whatever the number of apps. Keys carry the app's domain id, and the service scopes the
 * query by it, so a map naming another domain's file finds nothing.
 */
export function createMultimediaLoaders(multimedia: MultimediaJobService) {
  const files = perDomainLoader<{ id: string }, MediaFile | null>(
    async (domainId) => ({ id: domainId }),
    async (domain, ids) => {
      const found = await multimedia.filesOf(domain, ids);
      return ids.map((id) => found.get(id) ?? null);
    },
    null,
  );
  return {
    /** the domain's files with these ids, in that order, leaving out any it does not have */
    files: async (domainId: string, ids: string[]) => {
      const rows = await Promise.all(ids.map((id) => files.load({ domain: domainId, key: id })));
      return rows.filter((row) => row !== null);
    },
  };
}

export type MultimediaLoaders = ReturnType<typeof createMultimediaLoaders>;
