/**
 * What PostgreSQL's planner does with a repository's list statements: the statements are recorded
 * as the repository sends them (with their parameters), then EXPLAINed with sequential scans and
 * sorts priced out. A plan that still scans the table whole, or sorts rows that no LIMIT bounds,
 * has no index that serves the order. Both engines are PostgreSQL (PGlite is 18, the server 15).
 */
import type { Database } from "../../src/db/client.ts";
import { Prisma } from "../../src/generated/prisma/client.ts";

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** A stand-in for the client's `$queryRaw` that runs each statement and keeps those with an ORDER BY. */
export function recordingDb(db: Database) {
  const ordered: Prisma.Sql[] = [];
  const queryRaw = (strings: TemplateStringsArray, ...values: unknown[]) => {
    const statement = Prisma.sql(strings, ...(values as Prisma.Sql[]));
    if (/ORDER BY/.test(statement.sql)) ordered.push(statement);
    return db.prisma.$queryRaw(statement);
  };
  return { db: { $queryRaw: queryRaw } as unknown as Pick<Database["prisma"], "$queryRaw">, ordered };
}

/** The statement's plan when no sequential scan and no sort is worth having. */
export async function planOf(db: Database, statement: Prisma.Sql): Promise<PlanNode> {
  const rows = await db.prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
    await tx.$executeRawUnsafe("SET LOCAL enable_sort = off");
    return tx.$queryRaw<Record<string, unknown>[]>(Prisma.sql`EXPLAIN (FORMAT JSON) ${statement}`);
  });
  const cell = Object.values(rows[0]!)[0];
  const json = typeof cell === "string" ? JSON.parse(cell) : cell;
  return (json as { Plan: PlanNode }[])[0]!.Plan;
}

/**
 * How the plan reads `table`: the index of each scan (or the scan's type when it is no index scan),
 * and whether a sort sits above a scan of it with no LIMIT between them (a sort of the ranges a
 * LIMIT has already cut is a merge of a page or two, not of the table).
 */
export function readsOf(plan: PlanNode, table: string): { indexes: string[]; unboundedSort: boolean } {
  const indexes: string[] = [];
  let unboundedSort = false;
  const walk = (node: PlanNode, sortAbove: boolean) => {
    const type = node["Node Type"];
    if (node["Relation Name"] === table) {
      indexes.push(type === "Index Scan" || type === "Index Only Scan" ? node["Index Name"]! : type);
      if (sortAbove) unboundedSort = true;
    }
    const sorting = type === "Sort" || type === "Incremental Sort" ? true : type === "Limit" ? false : sortAbove;
    for (const child of node.Plans ?? []) walk(child, sorting);
  };
  walk(plan, false);
  return { indexes, unboundedSort };
}
