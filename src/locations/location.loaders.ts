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

/** A loader key's parts: its numbers first, the location id last (ids hold no "/"). */
const splitKey = (key: string): string[] => key.split("/");

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
  /** keys `first/id`: one query per `first` asked for, reading no more than that of each parent */
  const children = perDomainLoader<LocationReadScope, LocationRecord[]>(
    scope,
    async (s, keys) => {
      const found = new Map<string, LocationRecord[]>();
      for (const [first, pairs] of Map.groupBy(keys.map(splitKey), ([first]) => first)) {
        const byParent = Map.groupBy(
          await s.childrenOf(
            pairs.map(([, id]) => id),
            Number(first),
          ),
          (r) => r.parentId,
        );
        for (const [, id] of pairs) found.set(`${first}/${id}`, byParent.get(id) ?? []);
      }
      return keys.map((key) => found.get(key) ?? []);
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
  /** keys `depth/first/id`, depth "" for all levels: one query per depth and `first` asked for */
  const descendants = perDomainLoader<LocationReadScope, LocationRecord[]>(
    scope,
    async (s, keys) => {
      const found = new Map<string, LocationRecord[]>();
      for (const [group, triples] of Map.groupBy(keys.map(splitKey), ([depth, first]) => `${depth}/${first}`)) {
        const [depth, first] = group.split("/");
        const lists = await s.descendantsOf(
          triples.map((t) => t.at(-1)!),
          depth === "" ? null : Number(depth),
          Number(first),
        );
        for (const [id, list] of lists) found.set(`${group}/${id}`, list);
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
    /** the first `first` children, by name */
    children: (domain: string, id: string, first: number) => children.load({ domain, key: `${first}/${id}` }),
    ancestors: (domain: string, id: string) => ancestors.load({ domain, key: id }),
    /** the first `first` descendants, breadth first, to `depth` levels (null: all) */
    descendants: (domain: string, id: string, depth: number | null, first: number) =>
      descendants.load({ domain, key: `${depth ?? ""}/${first}/${id}` }),
  };
}

export type LocationLoaders = ReturnType<typeof createLocationLoaders>;
