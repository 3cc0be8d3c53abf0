/**
 * CONTRACT §7.3 for the orders of `cases(orderBy)`, at the service tier (`CaseReads.in(…).slice`):
 * for each column and direction, the keyset pages through the whole list in the order's exact
 * sequence, ties broken by case id in the order's direction, cases without a date_closed last in
 * both directions; backward and within any window (after and before) alike. The expected order is
 * computed here from the records themselves. Runs on PGlite and, with `npm run test:postgres`, on
 * PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.ts";
import type { CaseOrder, CaseSlice, OrderField, Position } from "../../src/cases/case.query.ts";
import type { CaseRecord } from "../../src/cases/case.record.ts";
import type { KeyedCase } from "../../src/cases/case.repository.ts";
import { services, type TestServices } from "../helpers/services.ts";
import { action, create } from "./case.scenarios.ts";

let t: TestServices;
let demo: string;
let editor: Principal;
let reader: Principal;
/** every case of the domain, as the service reads them after the writes */
let all: CaseRecord[];

const FIELDS: OrderField[] = ["indexed_on", "last_modified", "server_last_modified", "date_opened", "date_closed", "case_name"];
const ORDERS: CaseOrder[] = FIELDS.flatMap((field) => (["asc", "desc"] as const).map((direction) => ({ field, direction })));
const label = (o: CaseOrder) => `${o.field} ${o.direction}`;

const write = async (actions: Parameters<Awaited<ReturnType<TestServices["services"]["caseWrites"]["in"]>>["write"]>[0]) =>
  (await t.services.caseWrites.in(editor, demo)).write(actions, { deviceId: "test", bulk: false });

beforeAll(async () => {
  t = await services();
  demo = await t.domain();
  editor = await t.member(demo, ["access_api", "edit_data"]);
  reader = await t.member(demo, ["access_api", "view_data"]);
  // Cases of one write share every date, so each order has ties; names repeat too. Names are
  // lower-case letters and digits of one length, which every collation orders alike.
  const first = (await write(["n2", "n1", "n2", "n3", "n1"].map((caseName) => create({ caseName })))).cases;
  const second = (await write(["n4", "n2", "n0"].map((caseName) => create({ caseName })))).cases;
  await write([create({ caseName: "n5", close: true }), create({ caseName: "n1", close: true })]);
  // an update moves a case in the write-time orders, not in date_opened's
  await write([
    action({ caseName: "n9" }, { kind: "update", caseId: first[1]!.id }),
    action({ properties: { x: "1" } }, { kind: "update", caseId: second[0]!.id }),
  ]);
  // closes in one write share their date_closed; one more close later; the rest stay open (null)
  await write([first[0]!, first[2]!, second[2]!].map((c) => action({ close: true }, { kind: "update", caseId: c.id })));
  await write([action({ close: true }, { kind: "update", caseId: first[3]!.id })]);
  const scope = await t.services.caseReads.in(reader, demo);
  all = (await scope.list({ limit: 100, exact: {}, properties: new Map(), indices: new Map(), ranges: [] })).records;
  expect(all).toHaveLength(10);
});
afterAll(() => t.close());

const VALUE: Record<OrderField, (c: CaseRecord) => string | number | null> = {
  indexed_on: (c) => c.indexedOn.getTime(),
  last_modified: (c) => c.lastModified.getTime(),
  server_last_modified: (c) => c.serverLastModified.getTime(),
  date_opened: (c) => c.dateOpened.getTime(),
  date_closed: (c) => c.dateClosed?.getTime() ?? null,
  case_name: (c) => c.caseName,
};

/** The list in `order`, as the contract defines it: by value, ties by id in the same direction, no value last. */
function expected(order: CaseOrder): string[] {
  const sign = order.direction === "asc" ? 1 : -1;
  const value = VALUE[order.field];
  const compare = (a: CaseRecord, b: CaseRecord) => {
    const [x, y] = [value(a), value(b)];
    if (x === null || y === null) {
      if (x !== y) return x === null ? 1 : -1;
    } else if (x !== y) {
      return x < y ? -sign : sign;
    }
    return a.id < b.id ? -sign : sign;
  };
  return [...all].sort(compare).map((c) => c.id);
}

async function slice(order: CaseOrder, window: Omit<CaseSlice, "order">) {
  const scope = await t.services.caseReads.in(reader, demo);
  return scope.slice({ exact: {}, properties: new Map(), indices: new Map(), ranges: [] }, { order, ...window });
}

const ids = (read: KeyedCase[]) => read.map((c) => c.record.id);

/** Every page forward (`after` the last edge) or backward (`before` the first), as a client pages. */
async function pageThrough(order: CaseOrder, size: number, backward: boolean): Promise<string[]> {
  const seen: string[] = [];
  let at: Position | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const { read, total } = await slice(order, { size, backward, ...(backward ? { before: at } : { after: at }) });
    expect(total).toBe(all.length);
    const page = read.slice(0, size);
    if (backward) seen.unshift(...ids(page).reverse());
    else seen.push(...ids(page));
    if (read.length <= size) return seen;
    at = page[page.length - 1]!.key;
  }
  throw new Error("the list did not end");
}

describe("§7.3 orderBy: each order pages through the whole list in its exact sequence", () => {
  for (const order of ORDERS) {
    it(`${label(order)}: forward in pages of 3 and of 1, backward in pages of 4, each case once`, async () => {
      const want = expected(order);
      expect(await pageThrough(order, 3, false)).toEqual(want);
      expect(await pageThrough(order, 1, false)).toEqual(want);
      expect(await pageThrough(order, 4, true)).toEqual(want);
    });
  }

  it("the data has what each rule needs: ties of every date, repeated names, closed and open cases", () => {
    for (const field of FIELDS) {
      const values = all.map(VALUE[field]).filter((v) => v !== null);
      expect(new Set(values).size, field).toBeLessThan(values.length);
    }
    const closed = all.filter((c) => c.dateClosed).length;
    expect(closed).toBeGreaterThan(2);
    expect(closed).toBeLessThan(all.length - 2);
  });
});

describe("§7.3 orderBy: a window between two edges holds exactly the cases between them", () => {
  for (const order of ORDERS) {
    it(`${label(order)}: every (after, before) pair, read forward and backward`, async () => {
      const want = expected(order);
      const { read } = await slice(order, { size: all.length, backward: false });
      const key = new Map(read.map((c) => [c.record.id, c.key]));
      for (let i = 0; i < want.length; i++) {
        for (let j = i + 1; j < want.length; j += order.field === "date_closed" ? 1 : 3) {
          const between = want.slice(i + 1, j);
          const window = { after: key.get(want[i]!)!, before: key.get(want[j]!)! };
          const forward = await slice(order, { size: all.length, backward: false, ...window });
          expect(ids(forward.read), `${i} to ${j}`).toEqual(between);
          expect(forward.outside).toEqual({ beforeAfter: true, afterBefore: true });
          const backward = await slice(order, { size: 2, backward: true, ...window });
          expect(ids(backward.read.slice(0, 2)), `${i} to ${j}, last 2`).toEqual(between.slice(-2).reverse());
        }
      }
    });
  }
});

describe("§7.3 orderBy: positions of cases without a value (date_closed)", () => {
  it("an open case's position is its id alone (value null), and paging after it stays among the open cases", async () => {
    for (const direction of ["asc", "desc"] as const) {
      const order: CaseOrder = { field: "date_closed", direction };
      const want = expected(order);
      const { read } = await slice(order, { size: all.length, backward: false });
      const firstOpen = read.findIndex((c) => c.key.value === null);
      expect(firstOpen, direction).toBeGreaterThan(0);
      expect(read.slice(firstOpen).every((c) => c.key.value === null && c.record.dateClosed === null)).toBe(true);
      expect(read.slice(0, firstOpen).every((c) => c.key.value !== null)).toBe(true);
      const after = await slice(order, { size: all.length, backward: false, after: read[firstOpen]!.key });
      expect(ids(after.read)).toEqual(want.slice(firstOpen + 1));
      // the last closed case's successor is the first open one
      const afterLastClosed = await slice(order, { size: 1, backward: false, after: read[firstOpen - 1]!.key });
      expect(ids(afterLastClosed.read)).toEqual(want.slice(firstOpen, firstOpen + 2));
    }
  });

  it("a time keeps its microseconds: a position is the column's value at full precision", async () => {
    const { read } = await slice({ field: "last_modified", direction: "asc" }, { size: 1, backward: false });
    expect(read[0]!.key.value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });
});
