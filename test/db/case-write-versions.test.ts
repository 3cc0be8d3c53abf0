import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase } from "../helpers/db.ts";

/**
 * The rule the case list's count cache rests on (src/cases/case.counts.ts), kept by row triggers
 * now that §7.6 forbids statement triggers with transition tables on a per-domain table: every
 * transaction that writes a domain's cases or case indices, whoever runs it, bumps that domain's
 * version, once. test/cases/counts.test.ts checks the cache on top of it.
 */

let db: Database;
const ours = randomUUID();
const theirs = randomUUID();

const version = async (domain: string): Promise<number> => {
  const [row] = await db.prisma.$queryRawUnsafe<{ version: bigint }[]>(`SELECT version FROM case_write_versions WHERE domain_id = '${domain}'`);
  return Number(row?.version ?? 0);
};

const insertCases = (domain: string, n: number) =>
  `INSERT INTO cases (id, domain_id, case_type, case_name, owner_id, date_opened, last_modified, server_last_modified, indexed_on)
   SELECT gen_random_uuid(), '${domain}', 't', 'n', 'o', now(), now(), now(), now() FROM generate_series(1, ${n})`;

beforeAll(async () => {
  db = await freshDatabase();
  await db.prisma.$executeRawUnsafe(`INSERT INTO domains (id, name) VALUES ('${ours}', 'ours'), ('${theirs}', 'theirs')`);
});
afterAll(async () => {
  await db?.close();
});

describe("case_write_versions: one bump per domain and transaction", () => {
  it("a statement writing many cases bumps its domain once, and leaves other domains alone", async () => {
    await db.prisma.$executeRawUnsafe(insertCases(ours, 50));
    expect(await version(ours)).toBe(1);
    expect(await version(theirs)).toBe(0);
  });

  it("every later transaction bumps again: an update, an index written, a delete", async () => {
    await db.prisma.$executeRawUnsafe(`UPDATE cases SET case_name = 'm' WHERE domain_id = '${ours}'`);
    expect(await version(ours)).toBe(2);
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO case_indices (case_id, name, domain_id, referenced_id, referenced_type, relationship)
       SELECT id, 'parent', domain_id, id, 't', 'child' FROM cases WHERE domain_id = '${ours}' LIMIT 3`,
    );
    expect(await version(ours)).toBe(3);
    await db.prisma.$executeRawUnsafe(`DELETE FROM cases WHERE domain_id = '${ours}'`);
    expect(await version(ours)).toBe(4);
  });

  it("a transaction of several statements bumps once; one rolled back bumps nothing", async () => {
    await db.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(insertCases(ours, 2));
      await tx.$executeRawUnsafe(`UPDATE cases SET case_name = 'x' WHERE domain_id = '${ours}'`);
    });
    expect(await version(ours)).toBe(5);
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(insertCases(ours, 2));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await version(ours)).toBe(5);
  });

  it("a statement writing two domains bumps each of them", async () => {
    await db.prisma.$executeRawUnsafe(insertCases(theirs, 3));
    await db.prisma.$executeRawUnsafe(`UPDATE cases SET case_name = 'y'`);
    expect([await version(ours), await version(theirs)]).toEqual([6, 2]);
  });

  it("a case moved to another domain bumps both", async () => {
    await db.prisma.$executeRawUnsafe(
      `UPDATE cases SET domain_id = '${theirs}' WHERE id = (SELECT id FROM cases WHERE domain_id = '${ours}' LIMIT 1)`,
    );
    expect([await version(ours), await version(theirs)]).toEqual([7, 3]);
  });
});
