import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import type { LocationOrderBy } from "../generated/graphql.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";
import { buildLocationApp, LOCATIONS, type LocationTestApp } from "../helpers/locations.ts";

/**
 * CONTRACT §7.3 for `locations(orderBy)` by name and by site code: each direction lists in its exact
 * order (names tie across parents, broken by locationId in the same direction; site codes are unique),
 * pages by its cursors, and refuses another order's cursor. REST's `order_by` keeps its three values
 * (CONTRACT §3).
 */

const OrderedLocations = graphql(`
  query OrderedLocationsPage($domain: String!, $orderBy: LocationOrderBy, $first: Int, $after: String) {
    locations(domain: $domain, filter: { locationTypeCode: "facility" }, orderBy: $orderBy, first: $first, after: $after) {
      totalCount
      edges { cursor node { locationId name siteCode } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

type Row = { locationId: string; name: string; siteCode: string };

let app: LocationTestApp;
let facilities: Row[];

async function page(variables: { orderBy: LocationOrderBy; first: number; after?: string | null }) {
  return (await gql(app, app.reader.authorization, OrderedLocations, { domain: "demo", ...variables })).body;
}

async function pull(orderBy: LocationOrderBy, size: number): Promise<Row[]> {
  const seen: Row[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 20; pages++) {
    const body = await page({ orderBy, first: size, after });
    expect(body.errors).toBeUndefined();
    seen.push(...body.data!.locations.edges.map((e) => e.node));
    if (!body.data!.locations.pageInfo.hasNextPage) return seen;
    after = body.data!.locations.pageInfo.endCursor;
  }
  throw new Error("the list did not end");
}

beforeAll(async () => {
  app = await buildLocationApp();
  const country = await app.createLocation({ name: "Land", location_type_code: "country" });
  const state = await app.createLocation({ name: "North", location_type_code: "state", parent_location_id: country.location_id });
  const east = await app.createLocation({ name: "East", location_type_code: "district", parent_location_id: state.location_id });
  const west = await app.createLocation({ name: "West", location_type_code: "district", parent_location_id: state.location_id });
  // a name is unique among siblings only: the same names under two districts tie
  const made: [string, string, string][] = [
    ["c2", "s05", east.location_id],
    ["c1", "s02", east.location_id],
    ["c3", "s09", east.location_id],
    ["c2", "s01", west.location_id],
    ["c4", "s07", west.location_id],
    ["c1", "s03", west.location_id],
  ];
  facilities = [];
  for (const [name, siteCode, parent] of made) {
    const created = await app.createLocation({ name, site_code: siteCode, location_type_code: "facility", parent_location_id: parent });
    facilities.push({ locationId: created.location_id, name, siteCode });
  }
});
afterAll(() => app.close());

/** The facilities in an order: by the key, ties by locationId, both in the direction. */
function sorted(key: "name" | "siteCode", direction: 1 | -1): Row[] {
  return [...facilities].sort((a, b) =>
    a[key] === b[key] ? (a.locationId < b.locationId ? -direction : direction) : a[key] < b[key] ? -direction : direction,
  );
}

describe("§7.3 locations(orderBy): by name and by site code", () => {
  const ORDERS: [LocationOrderBy, () => Row[]][] = [
    ["NAME_ASC", () => sorted("name", 1)],
    ["NAME_DESC", () => sorted("name", -1)],
    ["SITE_CODE_ASC", () => sorted("siteCode", 1)],
    ["SITE_CODE_DESC", () => sorted("siteCode", -1)],
  ];
  for (const [orderBy, want] of ORDERS) {
    it(`${orderBy}: the list in its exact order, whole and in pages of 4 and of 1`, async () => {
      const ids = want().map((r) => r.locationId);
      expect((await pull(orderBy, 100)).map((r) => r.locationId)).toEqual(ids);
      expect((await pull(orderBy, 4)).map((r) => r.locationId)).toEqual(ids);
      expect((await pull(orderBy, 1)).map((r) => r.locationId)).toEqual(ids);
    });
  }

  it("a cursor of one order given to another is BAD_USER_INPUT", async () => {
    const byName = await page({ orderBy: "NAME_ASC", first: 2 });
    const cursor = byName.data!.locations.pageInfo.endCursor!;
    for (const orderBy of ["NAME_DESC", "SITE_CODE_ASC"] as const) {
      const body = await page({ orderBy, first: 2, after: cursor });
      expect(errorCodes(body), orderBy).toEqual(["BAD_USER_INPUT"]);
      expect(body.errors![0]!.message).toMatch(/^The cursor given as 'after' was made for another filter or order/);
    }
  });

  it("REST's order_by keeps its three values: order_by=name is still 400", async () => {
    const res = await app.http().get(`${LOCATIONS}?format=json&order_by=name`).set("Authorization", app.reader.authorization);
    expect(res.status).toBe(400);
  });
});
