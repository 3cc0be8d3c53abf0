import type { Principal } from "../auth/principal.ts";
import { perDomainLoader, scopePerDomain } from "../graphql/domain-loader.ts";
import type { LocationTypeRecord } from "./location-type.repository.ts";
import type { LocationRecord } from "./location.model.ts";
import type { LocationReadScope, LocationService } from "./location.service.ts";

/**
 * Per-request batching of location relations for GraphQL: parents, children, ancestors and
 * descendants of a whole page load in one query each (the hierarchies in one recursive query).
 * Every batch goes through the caller's read scope of its domain, obtained once per request.
 */

export function createLocationLoaders(principal: Principal, locations: LocationService) {
  /** The caller's read scope of each domain, checked once per request. */
  const scopes = scopePerDomain<LocationReadScope>((domain) => locations.in(principal, domain));
  const scope = scopes.orNull;

  const byId = perDomainLoader<LocationReadScope, LocationRecord | null>(
    scope,
    async (s, ids) => {
      const found = await s.byIds(ids);
      return ids.map((id) => found.get(id) ?? null);
    },
    null,
  );
  const children = perDomainLoader<LocationReadScope, LocationRecord[]>(
    scope,
    async (s, ids) => {
      const byParent = Map.groupBy(await s.childrenOf(ids), (r) => r.parentId);
      return ids.map((id) => byParent.get(id) ?? []);
    },
    [],
  );
  const ancestors = perDomainLoader<LocationReadScope, LocationRecord[]>(
    scope,
    async (s, ids) => {
      const found = await s.ancestorsOf(ids);
      return ids.map((id) => found.get(id) ?? []);
    },
    [],
  );
  /** keys `depth/id`, depth "" for all levels: one query per depth asked for */
  const descendants = perDomainLoader<LocationReadScope, LocationRecord[]>(
    scope,
    async (s, keys) => {
      const byDepth = Map.groupBy(
        keys.map((key) => key.split("/")),
        ([depth]) => depth,
      );
      const found = new Map<string, LocationRecord[]>();
      for (const [depth, pairs] of byDepth) {
        const ids = pairs.map(([, id]) => id);
        const lists = await s.descendantsOf(ids, depth === "" ? null : Number(depth));
        for (const [id, list] of lists) found.set(`${depth}/${id}`, list);
      }
      return keys.map((key) => found.get(key) ?? []);
    },
    [],
  );
  const types = perDomainLoader<LocationReadScope, LocationTypeRecord | null>(
    scope,
    async (s, ids) => {
      const found = await s.typesByIds(ids);
      return ids.map((id) => found.get(id) ?? null);
    },
    null,
  );

  return {
    /** The caller's read scope of the domain, or the 401/403/404 to answer: one check per request. */
    reads: scopes.open,
    type: (domain: string, typeId: string) => types.load({ domain, key: typeId }),
    location: (domain: string, id: string) => byId.load({ domain, key: id.toLowerCase() }),
    children: (domain: string, id: string) => children.load({ domain, key: id }),
    ancestors: (domain: string, id: string) => ancestors.load({ domain, key: id }),
    descendants: (domain: string, id: string, depth: number | null) => descendants.load({ domain, key: `${depth ?? ""}/${id}` }),
  };
}

export type LocationLoaders = ReturnType<typeof createLocationLoaders>;
