import type { Principal } from "../auth/principal.ts";
import { perDomainLoader, scopePerDomain } from "../graphql/domain-loader.ts";
import type { AppRecord, AppScope, AppService, AppVersionRow } from "./app.service.ts";
import type { Reference } from "./references.ts";

/**
 * Per-request batching of the per-app GraphQL fields: a list of apps with their versions and
 * references costs one query per field and domain, whatever the number of apps. Every batch goes
 * through the caller's apps scope of its domain (`apps.in`), obtained once per domain per request
 * and shared with the resolvers (`scope`), so that a relation is read only inside a checked scope.
 */

/** An app by its domain's name and its id. */
type AppKey = { appId: string; domain: string };

export function createAppLoaders(principal: Principal, apps: AppService) {
  /** The caller's apps scope of each domain, checked once per request. */
  const scopes = scopePerDomain<AppScope>((domain) => apps.in(principal, domain));

  const versions = perDomainLoader<AppScope, AppVersionRow[]>(
    scopes.orNull,
    async (scope, appIds) => {
      const found = await scope.versionsOf(appIds);
      return appIds.map((id) => found.get(id) ?? []);
    },
    [],
  );
  // keyed by app id and version: the references are those of the version the app row names
  const references = perDomainLoader<AppScope, Reference[]>(
    scopes.orNull,
    async (scope, keys) => {
      const wanted = keys.map((key) => ({ id: key.slice(0, key.lastIndexOf(" ")), version: Number(key.slice(key.lastIndexOf(" ") + 1)) }));
      const byApp = await scope.referencesOf(wanted);
      return wanted.map((w) => byApp.get(w.id) ?? []);
    },
    [],
  );

  const byId = perDomainLoader<AppScope, AppRecord | null>(
    scopes.orNull,
    async (scope, appIds) => {
      const found = await scope.appsOf(appIds);
      return appIds.map((id) => found.get(id) ?? null);
    },
    null,
  );

  return {
    /** The caller's apps scope of the domain, or the 401/403/404 to answer: one check per request. */
    scope: scopes.open,
    /** the app of the domain with this id, or null (also where the caller may not see the domain's apps) */
    app: (app: AppKey) => byId.load({ domain: app.domain, key: app.appId }),
    versions: (app: AppKey) => versions.load({ domain: app.domain, key: app.appId }),
    references: (app: AppKey & { version: number }) => references.load({ domain: app.domain, key: `${app.appId} ${app.version}` }),
  };
}

export type AppLoaders = ReturnType<typeof createAppLoaders>;
