import { getOrCreate } from "../util/maps.ts";
import DataLoader from "dataloader";
import { DomainError } from "../errors.ts";

/**
 * Per-request batching of GraphQL relations whose records live in several domains: the keys of one
 * batch are grouped by domain and each domain is loaded with one scoped call, so that no query ever
 * reads across domains and a page of any size costs one query per domain.
 */

/** One key of a per-domain loader: the domain's name and the key within it. */
export interface DomainKey {
  domain: string;
  key: string;
}

const SEP = "\u0000";

/**
 * `scope` turns a key's domain into what `load` takes (null: nothing there for the caller, every key
 * of it is `missing`); `load` answers the keys of one domain in their order.
 */
export function perDomainLoader<D, V>(
  scope: (domain: string) => Promise<D | null>,
  load: (domain: D, keys: string[]) => Promise<readonly V[]>,
  missing: V,
): DataLoader<DomainKey, V, string> {
  return new DataLoader<DomainKey, V, string>(
    async (keys) => {
      const groups = Map.groupBy(keys, ({ domain }) => domain);
      const found = new Map<string, V>();
      await Promise.all(
        [...groups].map(async ([domain, group]) => {
          const domainKeys = group.map(({ key }) => key);
          const scoped = await scope(domain);
          if (scoped === null) return;
          const values = await load(scoped, domainKeys);
          for (const [i, key] of domainKeys.entries()) found.set(`${domain}${SEP}${key}`, values[i]!);
        }),
      );
      return keys.map(({ domain, key }) => found.get(`${domain}${SEP}${key}`) ?? missing);
    },
    { cacheKeyFn: ({ domain, key }) => `${domain}${SEP}${key}` },
  );
}

/** The caller's scopes of the domains a request names, each opened once for the whole request. */
export interface ScopesPerDomain<S> {
  /** the scope, or the DomainError of its permission check (401/403/404): what a resolver answers */
  open(domain: string): Promise<S>;
  /** the scope, or null where the check refuses (nothing in that domain for the caller): what a loader reads through */
  orNull(domain: string): Promise<S | null>;
}

/**
 * The caller's scope of each domain (`open`: a service's `in(principal, domain)`), obtained once per
 * request and shared by the resolvers and the loaders that read through it, so that 100 aliased
 * root fields of one domain cost one permission check, and every relation is read inside a checked
 * scope.
 */
export function scopePerDomain<S>(open: (domain: string) => Promise<S>): ScopesPerDomain<S> {
  const scopes = new Map<string, Promise<S>>();
  const opened = (domain: string): Promise<S> => {
    return getOrCreate(scopes, domain, () => {
      const scope = open(domain);
      // a refusal is answered by whoever awaits it; the cache itself must not count as unhandled
      scope.catch(() => {});
      return scope;
    });
  };
  return {
    open: opened,
    orNull: (domain) =>
      opened(domain).catch((error: unknown) => {
        if (error instanceof DomainError) return null;
        throw error;
      }),
  };
}
