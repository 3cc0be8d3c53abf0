import { perDomainLoader } from "../graphql/domain-loader.ts";
import type { AppRecord, AppService, AppVersionRow } from "./app.service.ts";
import type { Reference } from "./references.ts";

/**
 * Per-request batching of the per-app GraphQL fields: a list of apps with their versions and
 * references costs one query per field and domain, whatever the number of apps. Keys carry the
 * app's domain id, and the service scopes every query by it.
 */

type AppKey = { appId: string; domainId: string };

/** A key's domain is an id already: nothing to resolve. */
const byId = async (domainId: string) => ({ id: domainId });

export function createAppLoaders(service: AppService) {
  const versions = perDomainLoader<{ id: string }, AppVersionRow[]>(
    byId,
    async (domain, appIds) => {
      const found = await service.versionsOf(domain, appIds);
      return appIds.map((id) => found.get(id) ?? []);
    },
    [],
  );
  // keyed by app id and version: the references are those of the version the app row names
  const references = perDomainLoader<{ id: string }, Reference[]>(
    byId,
    async (domain, keys) => {
      const wanted = keys.map((key) => ({ id: key.slice(0, key.lastIndexOf(" ")), version: Number(key.slice(key.lastIndexOf(" ") + 1)) }));
      const byApp = await service.referencesOf(domain, wanted);
      return wanted.map((w) => byApp.get(w.id) ?? []);
    },
    [],
  );

  const apps = perDomainLoader<{ id: string }, AppRecord | null>(
    byId,
    async (domain, appIds) => {
      const found = await service.appsOf(domain, appIds);
      return appIds.map((id) => found.get(id) ?? null);
    },
    null,
  );

  return {
    /** the app of the domain with this id, or null (the caller's domain scope is the caller's to check) */
    app: (app: AppKey) => apps.load({ domain: app.domainId, key: app.appId }),
    versions: (app: AppKey) => versions.load({ domain: app.domainId, key: app.appId }),
    references: (app: AppKey & { version: number }) => references.load({ domain: app.domainId, key: `${app.appId} ${app.version}` }),
  };
}

export type AppLoaders = ReturnType<typeof createAppLoaders>;
