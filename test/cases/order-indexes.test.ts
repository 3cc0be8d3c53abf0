/**
 * CONTRACT §7.3 `cases(orderBy)`, served from an index: the statements the case repository sends
 * for each order and direction (a first page, a last page, pages after and before a position, an
 * open case's position by date_closed, and REST's page) are planned by PostgreSQL as scans of that
 * order's index (prisma/schema.prisma), with no sort of the matches. Runs on PGlite and, with
 * `npm run test:postgres`, on PostgreSQL 15.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkFilter, type CaseOrder, type CaseSlice, type OrderField, type Position } from "../../src/cases/case.query.ts";
import { CaseRepository } from "../../src/cases/case.repository.ts";
import { domainRow } from "../helpers/rows.ts";
import { services, type TestServices } from "../helpers/services.ts";
import { planOf, readsOf, recordingDb } from "./plans.ts";

let t: TestServices;
let domain: { id: string; name: string };

beforeAll(async () => {
  t = await services();
  const name = await t.domain();
  domain = { id: (await domainRow(t, name)).id, name };
});
afterAll(() => t.close());

/**
 * The index each order is read from, either direction. By date_closed, a segment of open cases
 * (ordered by id alone) or of closed ones may be read from either date_closed index.
 */
const INDEX_OF: Record<OrderField, Record<CaseOrder["direction"], string>> = {
  indexed_on: { asc: "cases_list_order_idx", desc: "cases_list_order_idx" },
  last_modified: { asc: "cases_order_last_modified_idx", desc: "cases_order_last_modified_idx" },
  server_last_modified: { asc: "cases_order_server_last_modified_idx", desc: "cases_order_server_last_modified_idx" },
  date_opened: { asc: "cases_order_date_opened_idx", desc: "cases_order_date_opened_idx" },
  date_closed: { asc: "cases_order_date_closed_idx", desc: "cases_order_date_closed_desc_idx" },
  case_name: { asc: "cases_order_case_name_idx", desc: "cases_order_case_name_idx" },
};
const allowed = (order: CaseOrder) =>
  new Set(order.field === "date_closed" ? Object.values(INDEX_OF.date_closed) : [INDEX_OF[order.field][order.direction]]);

const NO_FILTER = checkFilter({ exact: {}, properties: new Map(), indices: new Map(), ranges: [] });

/** A position of the order's column: a time, a name, or (date_closed) an open case's. */
function positions(field: OrderField): Position[] {
  const valued = { value: field === "case_name" ? "m" : "2024-06-01T00:00:00.000000Z", caseId: randomUUID() };
  return field === "date_closed" ? [valued, { value: null, caseId: randomUUID() }] : [valued];
}

/** The slices a client's pages make: first and last pages, after and before each position, and between two. */
function slices(order: CaseOrder): CaseSlice[] {
  const page = { order, size: 20 };
  const [at, other] = positions(order.field);
  const result: CaseSlice[] = [
    { ...page, backward: false },
    { ...page, backward: true },
  ];
  for (const position of positions(order.field)) {
    result.push({ ...page, backward: false, after: position }, { ...page, backward: true, before: position });
  }
  result.push({ ...page, backward: false, after: at, before: other ?? { ...at!, caseId: randomUUID() } });
  return result;
}

describe("§7.3 cases(orderBy): each order is read from its index", () => {
  for (const field of Object.keys(INDEX_OF) as OrderField[]) {
    for (const direction of ["asc", "desc"] as const) {
      it(`${field} ${direction}: every page's read scans ${INDEX_OF[field][direction]} and sorts no unbounded rows`, async () => {
        const order = { field, direction };
        for (const slice of slices(order)) {
          const { db, ordered } = recordingDb(t.db);
          await new CaseRepository(db).slice(domain, NO_FILTER, slice);
          expect(ordered).toHaveLength(1);
          const reads = readsOf(await planOf(t.db, ordered[0]!), "cases");
          const where = `${JSON.stringify(slice)}\n${ordered[0]!.sql}`;
          expect(reads.indexes.length, where).toBeGreaterThan(0);
          expect(
            reads.indexes.every((index) => allowed(order).has(index)),
            `${reads.indexes}: ${where}`,
          ).toBe(true);
          expect(reads.unboundedSort, where).toBe(false);
        }
      });
    }
  }

  it("REST's pages (indexed_on, then case_id) scan the list's index", async () => {
    const { db, ordered } = recordingDb(t.db);
    const repository = new CaseRepository(db);
    await repository.page(domain, NO_FILTER, 20);
    await repository.page(domain, NO_FILTER, 20, { indexedOn: "2024-06-01T00:00:00.000000Z", caseId: randomUUID() });
    expect(ordered).toHaveLength(2);
    for (const statement of ordered) {
      expect(readsOf(await planOf(t.db, statement), "cases")).toEqual({ indexes: ["cases_list_order_idx"], unboundedSort: false });
    }
  });
});
