import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import type { CaseFilter, CaseOrderBy } from "../generated/graphql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";

/**
 * CONTRACT §7.3 for `Query.cases`: a Relay cursor connection. Each edge has its own cursor, paging
 * runs forward (first/after) and backward (last/before), totalCount is the whole filter's on every
 * page, pageInfo is exact, and a cursor belongs to the filter and order that made it.
 */

const Page = graphql(`
  query ConnCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {
    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {
      totalCount
      edges { cursor node { caseId } }
      nodes { caseId }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

let app: TestApp;
let reader: TestUser;
/** the ids of the 14 cases of type `t`, in list order (indexed_on, then case_id) */
let listed: string[];

const FILTER: CaseFilter = { caseType: ["t"] };
const NEWEST_FIRST: CaseOrderBy = "INDEXED_ON_DESC";

async function page(variables: { filter?: CaseFilter; orderBy?: CaseOrderBy; first?: number; after?: string; last?: number; before?: string }) {
  const res = await gql(app, reader.authorization, Page, { domain: "demo", filter: FILTER, ...variables });
  return res.body;
}

async function cases(variables: Parameters<typeof page>[0]) {
  const body = await page(variables);
  expect(body.errors).toBeUndefined();
  return body.data!.cases;
}

const ids = (c: { nodes: { caseId: string }[] }) => c.nodes.map((n) => n.caseId);

beforeAll(async () => {
  app = await build();
  await createDomain(app, "demo");
  const editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  // three writes: cases of one write share indexed_on, so the order's tie-break by case_id is paged too
  for (const [type, count] of [
    ["t", 6],
    ["other", 3],
    ["t", 5],
    ["t", 3],
  ] as const) {
    const items = Array.from({ length: count }, (_, i) => ({ create: true, case_type: type, case_name: `${type}${i}`, owner_id: "o" }));
    const res = await app.http().post("/a/demo/api/case/v2/").set("Authorization", editor.authorization).send(items);
    expect(res.status).toBe(200);
  }
  const rest = await app.http().get("/a/demo/api/case/v2/?case_type=t&limit=100").set("Authorization", reader.authorization);
  listed = rest.body.cases.map((c: { case_id: string }) => c.case_id);
  expect(listed).toHaveLength(14);
});
afterAll(() => app.close());

describe("Query.cases: a Relay cursor connection (CONTRACT §7.3)", () => {
  it("each edge carries its own cursor: paging after the 2nd edge of a page continues at the 3rd", async () => {
    const first = await cases({ first: 5 });
    const cursors = first.edges.map((e) => e.cursor);
    expect(new Set(cursors).size).toBe(5);
    expect(first.edges.map((e) => e.node.caseId)).toEqual(ids(first));

    const afterSecond = await cases({ first: 2, after: cursors[1] });
    expect(ids(afterSecond)).toEqual(listed.slice(2, 4));
    // the page size is the request's, not the cursor's: a cursor of a `first: 2` page serves `first: 5`
    const wider = await cases({ first: 5, after: afterSecond.pageInfo.endCursor! });
    expect(ids(wider)).toEqual(listed.slice(4, 9));
    const beforeFourth = await cases({ last: 2, before: cursors[3] });
    expect(ids(beforeFourth)).toEqual(listed.slice(1, 3));
  });

  it("first/after then last/before through a filtered list of 14 cases yields every row exactly once in both directions", async () => {
    const forward: string[] = [];
    const totals: number[] = [];
    let after: string | undefined;
    for (;;) {
      const c = await cases({ first: 4, after });
      forward.push(...ids(c));
      totals.push(c.totalCount);
      if (!c.pageInfo.hasNextPage) break;
      after = c.pageInfo.endCursor!;
    }
    expect(forward).toEqual(listed);

    const backward: string[][] = [];
    let before: string | undefined;
    for (;;) {
      const c = await cases({ last: 4, before });
      backward.unshift(ids(c));
      totals.push(c.totalCount);
      if (!c.pageInfo.hasPreviousPage) break;
      before = c.pageInfo.startCursor!;
    }
    expect(backward.flat()).toEqual(listed);
    expect(backward.map((p) => p.length)).toEqual([2, 4, 4, 4]);
    expect(totals).toEqual(Array(totals.length).fill(14));
  });

  it("orderBy INDEXED_ON_DESC lists the same cases newest first, forward and backward", async () => {
    const newest = await cases({ orderBy: NEWEST_FIRST, first: 6 });
    expect(ids(newest)).toEqual(listed.toReversed().slice(0, 6));
    const next = await cases({ orderBy: NEWEST_FIRST, first: 100, after: newest.pageInfo.endCursor! });
    expect(ids(next)).toEqual(listed.toReversed().slice(6));
    const back = await cases({ orderBy: NEWEST_FIRST, last: 3, before: next.edges[0]!.cursor });
    expect(ids(back)).toEqual(listed.toReversed().slice(3, 6));
  });

  it("totalCount counts everything the filter matches, the same on every page", async () => {
    const firstPage = await cases({ first: 3 });
    const later = await cases({ first: 3, after: firstPage.edges[2]!.cursor });
    const lastPage = await cases({ last: 3 });
    const all = await cases({ filter: {}, first: 0 });
    expect([firstPage.totalCount, later.totalCount, lastPage.totalCount]).toEqual([14, 14, 14]);
    expect(all.totalCount).toBe(17);
  });

  it("pageInfo: hasPreviousPage true exactly when rows come before the first edge, hasNextPage when rows come after the last", async () => {
    const start = await cases({ first: 5 });
    expect(start.pageInfo).toEqual({
      hasPreviousPage: false,
      hasNextPage: true,
      startCursor: start.edges[0]!.cursor,
      endCursor: start.edges[4]!.cursor,
    });

    const middle = await cases({ first: 5, after: start.pageInfo.endCursor! });
    expect(middle.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });

    const end = await cases({ first: 5, after: middle.pageInfo.endCursor! });
    expect(ids(end)).toEqual(listed.slice(10));
    expect(end.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false, endCursor: end.edges[3]!.cursor });

    const beyond = await cases({ first: 5, after: end.pageInfo.endCursor! });
    expect(beyond).toMatchObject({ totalCount: 14, edges: [], nodes: [] });
    expect(beyond.pageInfo).toEqual({ hasPreviousPage: true, hasNextPage: false, startCursor: null, endCursor: null });

    const tail = await cases({ last: 5 });
    expect(ids(tail)).toEqual(listed.slice(9));
    expect(tail.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });

    const beforeTail = await cases({ last: 5, before: tail.pageInfo.startCursor! });
    expect(beforeTail.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });

    // a window between two cursors: rows beyond either bound count
    const window = await cases({ first: 2, after: start.edges[0]!.cursor, before: start.edges[3]!.cursor });
    expect(ids(window)).toEqual(listed.slice(1, 3));
    expect(window.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });

    const sizeOnly = await cases({ first: 0 });
    expect(sizeOnly).toMatchObject({ totalCount: 14, edges: [], pageInfo: { hasPreviousPage: false, hasNextPage: true } });

    const none = await cases({ filter: { caseType: ["nothing"] } });
    expect(none).toEqual({
      totalCount: 0,
      edges: [],
      nodes: [],
      pageInfo: { hasPreviousPage: false, hasNextPage: false, startCursor: null, endCursor: null },
    });
  });

  it("a cursor used with another filter or order is BAD_USER_INPUT; so are a malformed cursor and first with last", async () => {
    const { pageInfo } = await cases({ first: 2 });
    const cursor = pageInfo.endCursor!;
    const refusals = [
      await page({ filter: { caseType: ["other"] }, first: 2, after: cursor }),
      await page({ filter: {}, last: 2, before: cursor }),
      await page({ orderBy: NEWEST_FIRST, first: 2, after: cursor }),
    ];
    for (const body of refusals) {
      expect(errorCodes(body)).toEqual(["BAD_USER_INPUT"]);
      expect(body.errors![0]!.message).toMatch(/^The cursor given as '(after|before)' was made for another filter or order/);
      expect(body.data).toBeNull();
    }
    // the same filter written in another order of its values is the same list
    const reordered = await page({ filter: { caseType: ["t", "t"] }, first: 2, after: cursor });
    expect(reordered.errors).toBeUndefined();

    // a well-formed cursor of this list whose position PostgreSQL could not read
    const [version, list, , caseId] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const impossibleDate = Buffer.from(JSON.stringify([version, list, "2020-02-30T00:00:00.000000Z", caseId])).toString("base64url");
    const notUuid = Buffer.from(JSON.stringify([version, list, "2020-02-03T00:00:00.000000Z", "x"])).toString("base64url");
    for (const bad of [cursor.slice(0, -3), `${cursor}x`, "!!", "", impossibleDate, notUuid]) {
      const res = await page({ first: 2, after: bad });
      expect(errorCodes(res)).toEqual(["BAD_USER_INPUT"]);
      expect(res.errors![0]!.message).toMatch(/is not a valid cursor for 'after'\.$/);
    }
    const both = await page({ first: 2, last: 2 });
    expect(both.errors![0]).toMatchObject({ message: "Pass either 'first' or 'last', not both.", extensions: { code: "BAD_USER_INPUT" } });
    const tooMany = await page({ last: 5001 });
    expect(tooMany.errors![0]!.message).toBe("You cannot request more than 5000 cases per request.");
    const negative = await page({ first: -1 });
    expect(errorCodes(negative)).toEqual(["BAD_USER_INPUT"]);
    expect(negative.errors![0]!.message).toBe("'first' must not be negative.");
  });
});
