import DataLoader from "dataloader";
import type { Prisma } from "../db/client.ts";

/** Domain ids by name, batched per request (loaders of records that carry a domain name). */
export function domainIdLoader(prisma: Prisma): DataLoader<string, string | null> {
  return new DataLoader<string, string | null>(async (names) => {
    const rows = await prisma.domain.findMany({ where: { name: { in: [...names] } }, select: { id: true, name: true } });
    const byName = new Map(rows.map((r) => [r.name, r.id]));
    return names.map((n) => byName.get(n) ?? null);
  });
}
