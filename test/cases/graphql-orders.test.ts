import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import type { CaseOrderBy } from "../generated/graphql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";

/**
 * CONTRACT §7.3 for `cases(orderBy)` on the wire: every order pages through the list by its edges'
 * cursors (a position of each order, an open case's by date_closed included), a cursor of one order
 * is BAD_USER_INPUT in another, a hand-made position the order cannot hold is an invalid cursor
 * (never a 500), and a case written mid-pull moves as the schema's descriptions say.
 */

const OrderedPage = graphql(`
  query OrderedCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {
    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {
      totalCount
      edges { cursor node { id caseId caseName dateOpened lastModified dateClosed } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

const ORDERS: CaseOrderBy[] = [
  "INDEXED_ON_ASC",
  "INDEXED_ON_DESC",
  "LAST_MODIFIED_ASC",
  "LAST_MODIFIED_DESC",
  "SERVER_LAST_MODIFIED_ASC",
  "SERVER_LAST_MODIFIED_DESC",
  "DATE_OPENED_ASC",
  "DATE_OPENED_DESC",
  "DATE_CLOSED_ASC",
  "DATE_CLOSED_DESC",
  "CASE_NAME_ASC",
  "CASE_NAME_DESC",
];

let app: TestApp;
let editor: TestUser;
let reader: TestUser;

type Variables = { orderBy?: CaseOrderBy; first?: number; after?: string | null; last?: number; before?: string | null };

/** The list of one case type: each test's cases are a type of their own. */
async function page(caseType: string, variables: Variables) {
  return (await gql(app, reader.authorization, OrderedPage, { domain: "demo", filter: { caseType: [caseType] }, ...variables })).body;
}

async function cases(caseType: string, variables: Variables) {
  const body = await page(caseType, variables);
  expect(body.errors).toBeUndefined();
  return body.data!.cases;
}

/** Pages forward by each page's endCursor; the case ids in the order seen. */
async function pullForward(caseType: string, orderBy: CaseOrderBy, size: number, between?: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const c = await cases(caseType, { orderBy, first: size, after });
    seen.push(...c.edges.map((e) => e.node.caseId));
    if (!c.pageInfo.hasNextPage) return seen;
    after = c.pageInfo.endCursor;
    await between?.();
  }
  throw new Error("the list did not end");
}

async function pullBackward(caseType: string, orderBy: CaseOrderBy, size: number): Promise<string[]> {
  const seen: string[] = [];
  let before: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const c = await cases(caseType, { orderBy, last: size, before });
    seen.unshift(...c.edges.map((e) => e.node.caseId));
    if (!c.pageInfo.hasPreviousPage) return seen;
    before = c.pageInfo.startCursor;
  }
  throw new Error("the list did not end");
}

async function post(body: object): Promise<void> {
  const res = await app.http().post("/a/demo/api/case/v2/").set("Authorization", editor.authorization).send(body);
  expect(res.status).toBe(200);
}

async function update(caseId: string, body: object): Promise<void> {
  const res = await app.http().put(`/a/demo/api/case/v2/${caseId}`).set("Authorization", editor.authorization).send(body);
  expect(res.status).toBe(200);
}

/** `count` cases of this type, one write each (distinct times). */
async function createCases(caseType: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await post({ case_type: caseType, case_name: `m${i}`, owner_id: "o" });
}

beforeAll(async () => {
  app = await build();
  await createDomain(app, "demo");
  editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  // ties in every column (one bulk write shares its dates; names repeat), open and closed cases
  await post(
    ["b1", "a1", "b1", "c1", "a1", "d1"].map((name, i) => ({ create: true, case_type: "t", case_name: name, owner_id: "o", close: i % 2 === 0 })),
  );
  await post(["e1", "a1", "b1"].map((name, i) => ({ create: true, case_type: "t", case_name: name, owner_id: "o", close: i === 1 })));
});
afterAll(() => app?.close());

describe("§7.3 cases(orderBy): every order pages by its cursors", () => {
  for (const orderBy of ORDERS) {
    it(`${orderBy}: forward by 2 and backward by 4 give the same list, each case once, in order`, async () => {
      const whole = (await cases("t", { orderBy, first: 100 })).edges.map((e) => e.node);
      expect(whole).toHaveLength(9);
      const ids = whole.map((n) => n.caseId);
      expect(await pullForward("t", orderBy, 2)).toEqual(ids);
      expect(await pullBackward("t", orderBy, 4)).toEqual(ids);
    });
  }

  it("open cases come last by dateClosed in both directions", async () => {
    for (const orderBy of ["DATE_CLOSED_ASC", "DATE_CLOSED_DESC"] as const) {
      const closedFlags = (await cases("t", { orderBy, first: 100 })).edges.map((e) => e.node.dateClosed !== null);
      expect(closedFlags, orderBy).toEqual([true, true, true, true, false, false, false, false, false]);
    }
  });

  it("names order with ties broken by caseId in the order's direction", async () => {
    const nodes = (await cases("t", { orderBy: "CASE_NAME_DESC", first: 100 })).edges.map((e) => e.node);
    const sorted = [...nodes].sort((a, b) => (a.caseName === b.caseName ? (a.caseId < b.caseId ? 1 : -1) : a.caseName < b.caseName ? 1 : -1));
    expect(nodes.map((n) => n.caseId)).toEqual(sorted.map((n) => n.caseId));
  });
});

describe("§7.3 cases(orderBy): a cursor belongs to the order that made it", () => {
  it("a cursor of one order given to another, or to the other direction, is BAD_USER_INPUT", async () => {
    const byName = await cases("t", { orderBy: "CASE_NAME_ASC", first: 2 });
    const cursor = byName.pageInfo.endCursor!;
    for (const [orderBy, argument] of [
      ["CASE_NAME_DESC", "after"],
      ["LAST_MODIFIED_DESC", "after"],
      ["INDEXED_ON_ASC", "before"],
    ] as const) {
      const body = await page("t", argument === "after" ? { orderBy, first: 2, after: cursor } : { orderBy, last: 2, before: cursor });
      expect(errorCodes(body), orderBy).toEqual(["BAD_USER_INPUT"]);
      expect(body.errors![0]!.message).toBe(
        `The cursor given as '${argument}' was made for another filter or order; page with the filter and order that made it, or start again without '${argument}'.`,
      );
      expect(body.data).toBeNull();
    }
  });

  it("the default order is INDEXED_ON_ASC: its cursors and the default's are one list's", async () => {
    const explicit = await cases("t", { orderBy: "INDEXED_ON_ASC", first: 3 });
    const implicit = await cases("t", { first: 3 });
    expect(implicit.edges.map((e) => e.cursor)).toEqual(explicit.edges.map((e) => e.cursor));
  });

  it("a hand-made position the order cannot hold is an invalid cursor, never a server error", async () => {
    const byClosed = await cases("t", { orderBy: "DATE_CLOSED_ASC", first: 100 });
    const parts = (cursor: string) => JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as string[];
    const make = (p: string[]) => Buffer.from(JSON.stringify(p)).toString("base64url");
    const closed = parts(byClosed.edges[0]!.cursor);
    const open = parts(byClosed.edges[8]!.cursor);
    // an open case's position is its id alone
    expect(closed).toHaveLength(4);
    expect(open).toHaveLength(3);
    const byName = parts((await cases("t", { orderBy: "CASE_NAME_ASC", first: 1 })).edges[0]!.cursor);
    const byTime = parts((await cases("t", { orderBy: "LAST_MODIFIED_ASC", first: 1 })).edges[0]!.cursor);
    const refused: [CaseOrderBy, string][] = [
      ["DATE_CLOSED_ASC", make([closed[0]!, closed[1]!, "2020-02-30T00:00:00.000000Z", closed[3]!])],
      ["DATE_CLOSED_ASC", make([open[0]!, open[1]!, "not-a-uuid"])],
      ["CASE_NAME_ASC", make([byName[0]!, byName[1]!, "a\u0000b", byName[3]!])],
      // a non-nullable column has no position without a value
      ["LAST_MODIFIED_ASC", make([byTime[0]!, byTime[1]!, byTime[3]!])],
    ];
    for (const [orderBy, after] of refused) {
      const body = await page("t", { orderBy, first: 2, after });
      expect(errorCodes(body), orderBy).toEqual(["BAD_USER_INPUT"]);
      expect(body.errors![0]!.message).toMatch(/is not a valid cursor for 'after'\.$/);
    }
    // any name is a position by name, even one no case has
    const unknownName = await page("t", { orderBy: "CASE_NAME_ASC", first: 100, after: make([byName[0]!, byName[1]!, "b", byName[3]!]) });
    expect(unknownName.errors).toBeUndefined();
    expect(unknownName.data!.cases.edges.map((e) => e.node.caseName).every((name) => name > "b")).toBe(true);
  });
});

describe("§7.3 cases(orderBy): what a client sees of a case written mid-pull (the CaseOrderBy descriptions)", () => {
  for (const orderBy of ["LAST_MODIFIED_ASC", "INDEXED_ON_ASC"] as const) {
    it(`by ${orderBy}, a case updated after it was seen appears again on a later page`, async () => {
      const caseType = `moved-${orderBy}`;
      await createCases(caseType, 6);
      const all = await pullForward(caseType, orderBy, 100);
      let updated = false;
      const seen = await pullForward(caseType, orderBy, 2, async () => {
        if (updated) return;
        updated = true;
        await update(all[0]!, { properties: { touched: "yes" } });
      });
      // every case once, and the updated one again at the end (the review's 132 edges for 131 cases)
      expect(seen).toEqual([...all, all[0]]);
    });
  }

  it("by DATE_OPENED_ASC, an update moves nothing: each case once", async () => {
    await createCases("opened", 6);
    const all = await pullForward("opened", "DATE_OPENED_ASC", 100);
    let updated = false;
    const seen = await pullForward("opened", "DATE_OPENED_ASC", 2, async () => {
      if (updated) return;
      updated = true;
      await update(all[0]!, { properties: { touched: "yes" } });
    });
    expect(seen).toEqual(all);
  });
});
