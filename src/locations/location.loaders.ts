import DataLoader from "dataloader";
import type { Prisma } from "../db/client.ts";
import { LocationRepository } from "./location.repository.ts";
import { toLocationType } from "./location-type.resolver.ts";
import type { LocationTypeType } from "./location-type.types.ts";
import type { LocationRecord } from "./location.serializer.ts";

/**
 * Per-request batching of location relations for GraphQL: parents, children, ancestors and
 * descendants of a whole page load in one query each (the hierarchies in one recursive query).
 */

const SEP = "\u0000";

export function createLocationLoaders(prisma: Prisma, domainIds: DataLoader<string, string | null>) {
  const repository = new LocationRepository(prisma);

  /** Groups `domain\0rest` keys by domain and runs `load` once per domain. */
  function perDomain<V>(load: (domain: { id: string; name: string }, rests: string[]) => Promise<Map<string, V>>, missing: V) {
    return new DataLoader<string, V>(async (keys) => {
      const groups = new Map<string, string[]>();
      for (const key of keys) {
        const [domain, rest] = [key.slice(0, key.indexOf(SEP)), key.slice(key.indexOf(SEP) + 1)];
        groups.set(domain, [...(groups.get(domain) ?? []), rest]);
      }
      const found = new Map<string, V>();
      await Promise.all(
        [...groups].map(async ([name, rests]) => {
          const id = await domainIds.load(name);
          if (!id) return;
          for (const [rest, value] of await load({ id, name }, [...new Set(rests)])) found.set(`${name}${SEP}${rest}`, value);
        }),
      );
      return keys.map((k) => found.get(k) ?? missing);
    });
  }

  const byId = perDomain<LocationRecord | null>((domain, ids) => repository.byIds(domain, ids), null);
  const children = perDomain<LocationRecord[]>(async (domain, ids) => {
    const rows = await repository.childrenOf(domain, ids);
    return new Map(ids.map((id) => [id, rows.filter((r) => r.parentId === id)]));
  }, []);
  const ancestors = perDomain<LocationRecord[]>((domain, ids) => repository.ancestorsOf(domain, ids), []);
  /** keys `depth\0id` within a domain; depth "" for all levels */
  const descendants = perDomain<LocationRecord[]>(async (domain, keys) => {
    const byDepth = new Map<string, string[]>();
    for (const key of keys) {
      const [depth, id] = key.split(SEP);
      byDepth.set(depth, [...(byDepth.get(depth) ?? []), id]);
    }
    const out = new Map<string, LocationRecord[]>();
    for (const [depth, ids] of byDepth) {
      const found = await repository.descendantsOf(domain, ids, depth === "" ? null : Number(depth));
      for (const [id, list] of found) out.set(`${depth}${SEP}${id}`, list);
    }
    return out;
  }, []);

  const types = new DataLoader<string, LocationTypeType | null>(async (ids) => {
    const rows = await prisma.locationType.findMany({ where: { id: { in: [...ids] } }, include: { parent: true, domain: true } });
    const byId = new Map(rows.map((r) => [r.id, toLocationType(r)]));
    return ids.map((id) => byId.get(id) ?? null);
  });

  return {
    type: (typeId: string) => types.load(typeId),
    location: (domain: string, id: string) => byId.load(`${domain}${SEP}${id.toLowerCase()}`),
    children: (domain: string, id: string) => children.load(`${domain}${SEP}${id}`),
    ancestors: (domain: string, id: string) => ancestors.load(`${domain}${SEP}${id}`),
    descendants: (domain: string, id: string, depth: number | null) =>
      descendants.load(`${domain}${SEP}${depth ?? ""}${SEP}${id}`),
  };
}

export type LocationLoaders = ReturnType<typeof createLocationLoaders>;
