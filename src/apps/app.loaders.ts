import DataLoader from "dataloader";
import type { AppService, AppVersionRow } from "./app.service.ts";
import type { Reference } from "./references.ts";

/**
 * Per-request batching of the per-app GraphQL fields: a list of apps with their versions,
 * references and files costs one query per field, whatever the number of apps. Keys carry the
 * app's domain id, and the service scopes every query by it.
 */

const SEP = "\u0000";

/** A loader whose keys are `domainId\0rest`: one `load` per domain in the batch. */
function perDomain<V>(load: (domain: { id: string }, rests: string[]) => Promise<Map<string, V>>, missing: V): DataLoader<string, V> {
  return new DataLoader<string, V>(async (keys) => {
    const groups = new Map<string, Set<string>>();
    for (const key of keys) {
      const [domainId, rest] = [key.slice(0, key.indexOf(SEP)), key.slice(key.indexOf(SEP) + 1)];
      if (!groups.has(domainId)) groups.set(domainId, new Set());
      groups.get(domainId)!.add(rest);
    }
    const found = new Map<string, V>();
    await Promise.all(
      [...groups].map(async ([id, rests]) => {
        for (const [rest, value] of await load({ id }, [...rests])) found.set(`${id}${SEP}${rest}`, value);
      }),
    );
    return keys.map((key) => found.get(key) ?? missing);
  });
}

type AppKey = { id: string; domainId: string };

export function createAppLoaders(apps: AppService) {
  const versions = perDomain<AppVersionRow[]>((domain, appIds) => apps.versionsOf(domain, appIds), []);
  // keyed by app id and version: the references are those of the version the app row names
  const references = perDomain<Reference[]>(async (domain, keys) => {
    const wanted = keys.map((key) => {
      const [id, version] = key.split(SEP);
      return { key, id, version: Number(version) };
    });
    const byApp = await apps.referencesOf(domain, wanted);
    return new Map(wanted.map((w) => [w.key, byApp.get(w.id) ?? []]));
  }, []);
  const files = perDomain((domain, ids) => apps.filesOf(domain, ids), null);

  return {
    versions: (app: AppKey) => versions.load(`${app.domainId}${SEP}${app.id}`),
    references: (app: AppKey & { version: number }) => references.load(`${app.domainId}${SEP}${app.id}${SEP}${app.version}`),
    /** the domain's files with these ids, in that order, leaving out any it does not have */
    files: async (domainId: string, ids: string[]) => {
      const rows = await Promise.all(ids.map((id) => files.load(`${domainId}${SEP}${id}`)));
      return rows.filter((row) => row !== null);
    },
  };
}

export type AppLoaders = ReturnType<typeof createAppLoaders>;
