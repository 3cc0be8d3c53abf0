import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import type { LocationConnectionPageQueryVariables } from "../generated/graphql.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";
import { buildLocationApp, type LocationTestApp } from "../helpers/locations.ts";

/** CONTRACT §7.3: `locations` is a Relay cursor connection. */

const Page = graphql(`
  query LocationConnectionPage(
    $domain: String!
    $filter: LocationFilter
    $orderBy: LocationOrderBy
    $first: Int
    $after: String
    $last: Int
    $before: String
  ) {
    locations(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {
      totalCount
      edges { cursor node { locationId name } }
      nodes { locationId }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

type PageVariables = Partial<LocationConnectionPageQueryVariables>;

let app: LocationTestApp;
/** the 13 facilities under "Hills", in creation order (the default order) */
let hills: string[];
let hillsId: string;

async function page(variables: PageVariables) {
  const res = await gql(app, app.reader.authorization, Page, { domain: "demo", ...variables });
  return res.body;
}

async function okPage(variables: PageVariables) {
  const body = await page(variables);
  expect(body.errors).toBeUndefined();
  return body.data!.locations;
}

beforeAll(async () => {
  app = await buildLocationApp();
  const country = await app.createLocation({ name: "Land", location_type_code: "country" });
  const state = await app.createLocation({ name: "North", location_type_code: "state", parent_location_id: country.location_id });
  const district = await app.createLocation({ name: "Hills", location_type_code: "district", parent_location_id: state.location_id });
  const coast = await app.createLocation({ name: "Coast", location_type_code: "district", parent_location_id: state.location_id });
  hillsId = district.location_id;
  hills = [];
  for (let i = 0; i < 13; i++) {
    hills.push((await app.createLocation({ name: `Clinic ${i}`, location_type_code: "facility", parent_location_id: hillsId })).location_id);
    // facilities elsewhere, interleaved, which the filter must leave out
    if (i % 3 === 0) await app.createLocation({ name: `Shore ${i}`, location_type_code: "facility", parent_location_id: coast.location_id });
  }
});
afterAll(() => app.close());

const filter = () => ({ parentLocationId: hillsId });

describe("CONTRACT §7.3 locations connection", () => {
  it("pages forward with first/after through a filtered list: every row exactly once, in order, totalCount the same on every page", async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const p = await okPage({ filter: filter(), first: 4, after });
      expect(p.totalCount).toBe(13);
      expect(p.nodes.map((n) => n.locationId)).toEqual(p.edges.map((e) => e.node.locationId));
      expect(p.pageInfo.hasPreviousPage).toBe(pages > 0);
      seen.push(...p.nodes.map((n) => n.locationId));
      pages++;
      if (!p.pageInfo.hasNextPage) break;
      after = p.pageInfo.endCursor;
    }
    expect(pages).toBe(4);
    expect(seen).toEqual(hills);
  });

  it("pages backward with last/before through the same list: every row exactly once, totalCount the same on every page", async () => {
    const pages: string[][] = [];
    let before: string | null = null;
    for (;;) {
      const p = await okPage({ filter: filter(), last: 5, before });
      expect(p.totalCount).toBe(13);
      pages.unshift(p.nodes.map((n) => n.locationId));
      expect(p.pageInfo.hasNextPage).toBe(pages.length > 1);
      if (!p.pageInfo.hasPreviousPage) break;
      before = p.pageInfo.startCursor;
    }
    expect(pages.map((p) => p.length)).toEqual([3, 5, 5]);
    expect(pages.flat()).toEqual(hills);
  });

  it("gives each edge its own cursor: after any edge continues right after it, before any edge ends right before it", async () => {
    const all = await okPage({ filter: filter(), first: 13 });
    const cursors = all.edges.map((e) => e.cursor);
    expect(new Set(cursors).size).toBe(13);
    expect(all.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: false, startCursor: cursors[0], endCursor: cursors[12] });
    for (const i of [0, 5, 11]) {
      const after = await okPage({ filter: filter(), first: 2, after: cursors[i] });
      expect(after.nodes.map((n) => n.locationId)).toEqual(hills.slice(i + 1, i + 3));
      expect(after.edges.map((e) => e.cursor)).toEqual(cursors.slice(i + 1, i + 3));
      const before = await okPage({ filter: filter(), last: 2, before: cursors[i + 1] });
      expect(before.nodes.map((n) => n.locationId)).toEqual(hills.slice(Math.max(0, i - 1), i + 1));
    }
    const between = await okPage({ filter: filter(), first: 10, after: cursors[2], before: cursors[6] });
    expect(between.nodes.map((n) => n.locationId)).toEqual(hills.slice(3, 6));
    expect(between.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const afterLast = await okPage({ filter: filter(), first: 5, after: cursors[12] });
    expect(afterLast).toMatchObject({
      totalCount: 13,
      nodes: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
    });
  });

  it("refuses with BAD_USER_INPUT a cursor used with another filter or another order, and changes nothing", async () => {
    const { pageInfo } = await okPage({ filter: filter(), first: 2 });
    const withOtherFilter = await page({ filter: { parentLocationId: hillsId, name: "Clinic 3" }, first: 2, after: pageInfo.endCursor });
    expect(errorCodes(withOtherFilter)).toEqual(["BAD_USER_INPUT"]);
    expect(withOtherFilter.errors![0].message).toContain("another filter or order");
    const withoutFilter = await page({ first: 2, after: pageInfo.endCursor });
    expect(errorCodes(withoutFilter)).toEqual(["BAD_USER_INPUT"]);
    const withOtherOrder = await page({ filter: filter(), orderBy: "LAST_MODIFIED_DESC", last: 2, before: pageInfo.endCursor });
    expect(errorCodes(withOtherOrder)).toEqual(["BAD_USER_INPUT"]);
    // the same filter and order, spelled out, is the same list
    const same = await page({ filter: filter(), orderBy: "CREATED_ASC", first: 2, after: pageInfo.endCursor });
    expect(same.data!.locations.nodes.map((n) => n.locationId)).toEqual(hills.slice(2, 4));
  });

  it("refuses malformed cursors and page sizes with BAD_USER_INPUT", async () => {
    const cases: PageVariables[] = [
      { after: "nope" },
      { before: "" },
      { after: Buffer.from('["1","x","0"]').toString("base64url") },
      { first: -1 },
      { last: 5001 },
      { first: 2, last: 2 },
    ];
    for (const variables of cases) {
      expect([variables, errorCodes(await page({ filter: filter(), ...variables }))]).toEqual([variables, ["BAD_USER_INPUT"]]);
    }
  });

  it("answers 20 locations when neither first nor last is given, and first: 0 gives only the count", async () => {
    const p = await okPage({});
    expect(p.totalCount).toBe(4 + 13 + 5);
    expect(p.nodes).toHaveLength(20);
    expect(p.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const none = await okPage({ filter: filter(), first: 0 });
    expect(none).toMatchObject({ totalCount: 13, nodes: [], edges: [], pageInfo: { hasNextPage: true, hasPreviousPage: false } });
  });
});
