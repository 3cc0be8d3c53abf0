import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import { countQueries } from "../helpers/db.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";
import { createUser, type TestUser } from "../helpers/app.ts";
import { buildLocationApp, type LocationTestApp } from "../helpers/locations.ts";

/** CONTRACT §5 for locations: the REST rules and messages, hierarchies and relations batched. */

const Tree = graphql(`
  query GqlLocationTree($domain: String!, $id: ID!, $depth: Int) {
    location(domain: $domain, locationId: $id) {
      name
      locationType { code parentCode }
      parent { name }
      children { name }
      ancestors { name }
      descendants(depth: $depth) { name }
    }
  }
`);
const FirstOfTree = graphql(`
  query GqlLocationFirstOfTree($domain: String!, $id: ID!, $first: Int) {
    location(domain: $domain, locationId: $id) {
      children(first: $first) { name children(first: $first) { name } }
      descendants(first: $first) { name }
    }
  }
`);
const Page = graphql(`
  query GqlLocationPage($domain: String!, $filter: LocationFilter, $first: Int, $after: String) {
    locations(domain: $domain, filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { name siteCode parent { name } ancestors { name } locationType { code } }
    }
  }
`);
const Create = graphql(`
  mutation GqlCreateLocation($domain: String!, $input: LocationInput!) {
    createLocation(domain: $domain, input: $input) { locationId name siteCode parentLocationId }
  }
`);
const Update = graphql(`
  mutation GqlUpdateLocation($domain: String!, $id: ID!, $input: LocationInput!) {
    updateLocation(domain: $domain, locationId: $id, input: $input) { name }
  }
`);
const Bulk = graphql(`
  mutation GqlBulkLocations($domain: String!, $items: [LocationBulkItem!]!) {
    bulkLocations(domain: $domain, items: $items)
  }
`);
const BySiteCode = graphql(`
  query GqlBySiteCode($domain: String!, $siteCode: String!) {
    locationBySiteCode(domain: $domain, siteCode: $siteCode) { name }
  }
`);
const UpdateType = graphql(`
  mutation GqlUpdateLocationType($domain: String!, $code: String!, $name: String, $parentCode: String) {
    updateLocationType(domain: $domain, code: $code, name: $name, parentCode: $parentCode) { code name parentCode }
  }
`);
const DeleteType = graphql(`
  mutation GqlDeleteLocationType($domain: String!, $code: String!) {
    deleteLocationType(domain: $domain, code: $code)
  }
`);

let app: LocationTestApp;
let ids: Record<string, string>;

/** country → state → district → facility, plus a sibling district. */
async function seedTree() {
  const country = await app.createLocation({ name: "Land", location_type_code: "country" });
  const state = await app.createLocation({ name: "North", location_type_code: "state", parent_location_id: country.location_id });
  const district = await app.createLocation({ name: "Hills", location_type_code: "district", parent_location_id: state.location_id });
  const other = await app.createLocation({ name: "Coast", location_type_code: "district", parent_location_id: state.location_id });
  const facility = await app.createLocation({ name: "Clinic 1", location_type_code: "facility", parent_location_id: district.location_id });
  ids = {
    country: country.location_id,
    state: state.location_id,
    district: district.location_id,
    other: other.location_id,
    facility: facility.location_id,
  };
}

describe("locations over GraphQL", () => {
  beforeEach(async () => {
    app = await buildLocationApp();
    await seedTree();
  });
  afterEach(() => app.close());

  it("resolves parent, children, ancestors (nearest first) and descendants (to a depth) in a 4-level tree", async () => {
    const all = await gql(app, app.reader.authorization, Tree, { domain: "demo", id: ids.state });
    expect(all.body.data!.location).toEqual({
      name: "North",
      locationType: { code: "state", parentCode: "country" },
      parent: { name: "Land" },
      children: [{ name: "Coast" }, { name: "Hills" }],
      ancestors: [{ name: "Land" }],
      descendants: [{ name: "Coast" }, { name: "Hills" }, { name: "Clinic 1" }],
    });
    const leaf = await gql(app, app.reader.authorization, Tree, { domain: "demo", id: ids.facility, depth: 1 });
    expect(leaf.body.data!.location!.ancestors.map((a) => a.name)).toEqual(["Hills", "North", "Land"]);
    const shallow = await gql(app, app.reader.authorization, Tree, { domain: "demo", id: ids.country, depth: 1 });
    expect(shallow.body.data!.location!.descendants).toEqual([{ name: "North" }]);
  });

  it("F1: children(first) and descendants(first) return the first by name (breadth first) of each location, and no more", async () => {
    const one = await gql(app, app.reader.authorization, FirstOfTree, { domain: "demo", id: ids.state, first: 1 });
    expect(one.body.data!.location).toEqual({ children: [{ name: "Coast", children: [] }], descendants: [{ name: "Coast" }] });
    const two = await gql(app, app.reader.authorization, FirstOfTree, { domain: "demo", id: ids.state, first: 2 });
    expect(two.body.data!.location).toEqual({
      children: [
        { name: "Coast", children: [] },
        { name: "Hills", children: [{ name: "Clinic 1" }] },
      ],
      descendants: [{ name: "Coast" }, { name: "Hills" }],
    });
  });

  it("gives the REST messages as BAD_USER_INPUT for the child-type rules", async () => {
    const wrongType = await gql(app, app.editor.authorization, Create, {
      domain: "demo",
      input: { name: "X", locationTypeCode: "facility", parentLocationId: ids.state },
    });
    expect(errorCodes(wrongType.body)).toEqual(["BAD_USER_INPUT"]);
    expect(wrongType.body.errors![0].message).toBe("Location type not valid for the selected parent.");
    const leafParent = await gql(app, app.editor.authorization, Create, {
      domain: "demo",
      input: { name: "X", locationTypeCode: "facility", parentLocationId: ids.facility },
    });
    expect(leafParent.body.errors![0].message).toBe("The selected parent location cannot have child locations!");
    const missing = await gql(app, app.editor.authorization, Create, { domain: "demo", input: { name: "X" } });
    expect(missing.body.errors![0].message).toBe("'name' and 'location_type_code' are required fields when creating a new location.");
  });

  it("creates, updates and bulk-writes through the same service, site codes generated", async () => {
    const created = await gql(app, app.editor.authorization, Create, {
      domain: "demo",
      input: { name: "Clinic 2", locationTypeCode: "facility", parentLocationId: ids.district },
    });
    expect(created.body.data!.createLocation).toMatchObject({ name: "Clinic 2", siteCode: "clinic2", parentLocationId: ids.district });
    const updated = await gql(app, app.editor.authorization, Update, { domain: "demo", id: ids.other, input: { name: "Shore" } });
    expect(updated.body.data!.updateLocation.name).toBe("Shore");
    const bulk = await gql(app, app.editor.authorization, Bulk, {
      domain: "demo",
      items: [
        { name: "Clinic 3", locationTypeCode: "facility", parentLocationId: ids.other },
        { locationId: ids.other, name: "Bay" },
      ],
    });
    expect(bulk.body.data!.bulkLocations).toHaveLength(2);
    expect(bulk.body.data!.bulkLocations[1]).toBe(ids.other);
    const bySite = await gql(app, app.reader.authorization, BySiteCode, { domain: "demo", siteCode: "CLINIC3" });
    expect(bySite.body.data!.locationBySiteCode).toEqual({ name: "Clinic 3" });
  });

  it("pages with first/after; the last page's endCursor is its last edge's", async () => {
    const first = await gql(app, app.reader.authorization, Page, { domain: "demo", first: 3 });
    expect(first.body.data!.locations.totalCount).toBe(5);
    expect(first.body.data!.locations.nodes).toHaveLength(3);
    const rest = await gql(app, app.reader.authorization, Page, { domain: "demo", first: 3, after: first.body.data!.locations.pageInfo.endCursor });
    expect(rest.body.data!.locations.nodes).toHaveLength(2);
    expect(rest.body.data!.locations.pageInfo).toEqual({ hasNextPage: false, endCursor: expect.any(String) });
  });

  it("§7.3 orderBy is the LocationOrderBy enum, in the REST orders; a string is refused", async () => {
    const names = async (orderBy?: string) => {
      const query = `query { locations(domain: "demo"${orderBy ? `, orderBy: ${orderBy}` : ""}) { nodes { name } } }`;
      const res = await app.http().post("/graphql").set("Authorization", app.reader.authorization).send({ query });
      expect(res.body.errors).toBeUndefined();
      return res.body.data.locations.nodes.map((n: { name: string }) => n.name);
    };
    const created = ["Land", "North", "Hills", "Coast", "Clinic 1"];
    expect(await names()).toEqual(created);
    expect(await names("CREATED_ASC")).toEqual(created);
    await app.put(ids.state, { name: "Northern" });
    expect(await names("LAST_MODIFIED_DESC")).toEqual(["Northern", "Clinic 1", "Coast", "Hills", "Land"]);
    expect(await names("LAST_MODIFIED_ASC")).toEqual(["Land", "Hills", "Coast", "Clinic 1", "Northern"]);
    const asString = await app
      .http()
      .post("/graphql")
      .set("Authorization", app.reader.authorization)
      .send({ query: 'query { locations(domain: "demo", orderBy: "last_modified") { totalCount } }' });
    expect(errorCodes(asString.body)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
  });

  it("refuses writes to a reader with FORBIDDEN and reads to a stranger", async () => {
    const write = await gql(app, app.reader.authorization, Update, { domain: "demo", id: ids.other, input: { name: "Nope" } });
    expect(errorCodes(write.body)).toEqual(["FORBIDDEN"]);
    const stranger: TestUser = await createUser(app, {});
    const read = await gql(app, stranger.authorization, Tree, { domain: "demo", id: ids.state });
    expect(errorCodes(read.body)).toEqual(["FORBIDDEN"]);
  });

  it("updates and deletes location types: in-use types stay, unused ones go", async () => {
    const admin = await createUser(app, { superuser: true });
    const renamed = await gql(app, admin.authorization, UpdateType, { domain: "demo", code: "zone", name: "Zone area" });
    expect(renamed.body.data!.updateLocationType).toEqual({ code: "zone", name: "Zone area", parentCode: null });
    const inUse = await gql(app, admin.authorization, DeleteType, { domain: "demo", code: "state" });
    expect(inUse.body.errors![0].message).toBe("LocationType 'state' is in use and cannot be deleted.");
    const cycle = await gql(app, admin.authorization, UpdateType, { domain: "demo", code: "country", parentCode: "facility" });
    expect(errorCodes(cycle.body)).toEqual(["BAD_USER_INPUT"]);
    const deleted = await gql(app, admin.authorization, DeleteType, { domain: "demo", code: "zone" });
    expect(deleted.body.data!.deleteLocationType).toBe(true);
    const notAdmin = await gql(app, app.editor.authorization, DeleteType, { domain: "demo", code: "zone" });
    expect(errorCodes(notAdmin.body)).toEqual(["FORBIDDEN"]);
  });
});

describe("location relations are batched", () => {
  let counter: ReturnType<typeof countQueries>;
  beforeEach(async () => {
    app = await buildLocationApp((db) => (counter = countQueries(db)).db);
    await seedTree();
  });
  afterEach(() => app.close());

  it("costs the same number of queries for pages of 2 and of 50 locations with parents, ancestors and types", async () => {
    const items = Array.from({ length: 48 }, (_, i) => ({ name: `Clinic x${i}`, location_type_code: "facility", parent_location_id: ids.other }));
    expect((await app.patch({ objects: items })).status).toBe(202);
    const measure = async (first: number) => {
      counter.reset();
      const res = await gql(app, app.reader.authorization, Page, { domain: "demo", first });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data!.locations.nodes).toHaveLength(first);
      return counter.count();
    };
    const small = await measure(2);
    // constant, not proportional (a DataLoader batch may split across ticks under load)
    expect(await measure(50)).toBeLessThanOrEqual(small + 2);
  });
});

describe("a 5-level hierarchy", () => {
  beforeEach(async () => {
    app = await buildLocationApp();
    // zone → area → block → site → spot, beside the fixture's own tree
    let parentCode = "zone";
    for (const code of ["area", "block", "site", "spot"]) {
      await (await app.services.locationTypes.in(app.root, "demo", "admin")).create({ code, name: code, parentCode });
      parentCode = code;
    }
  });
  afterEach(() => app.close());

  it("applies the child-type rules at every level and answers ancestors and descendants from any level", async () => {
    const codes = ["zone", "area", "block", "site", "spot"];
    const chain: string[] = [];
    for (const [level, code] of codes.entries()) {
      const parent = chain[level - 1];
      // the level's own type is accepted only under the level above; a type from two levels down is not
      if (level + 1 < codes.length) {
        const skipped = await app.post({ name: `bad ${level}`, location_type_code: codes[level + 1], parent_location_id: parent ?? null });
        expect(skipped.status).toBe(400);
        expect(skipped.body.error).toBe("Location type not valid for the selected parent.");
      }
      const created = await app.createLocation({ name: `L${level}`, location_type_code: code, ...(parent ? { parent_location_id: parent } : {}) });
      chain.push(created.location_id);
    }
    const underLeaf = await app.post({ name: "below", location_type_code: "spot", parent_location_id: chain[4] });
    expect(underLeaf.body.error).toBe("The selected parent location cannot have child locations!");

    for (const [level, id] of chain.entries()) {
      const res = await gql(app, app.reader.authorization, Tree, { domain: "demo", id });
      const node = res.body.data!.location!;
      expect(node.ancestors.map((a) => a.name)).toEqual(chain.slice(0, level).map((_, i) => `L${level - 1 - i}`));
      expect(node.descendants.map((d) => d.name)).toEqual(chain.slice(level + 1).map((_, i) => `L${level + 1 + i}`));
    }
    const twoDown = await gql(app, app.reader.authorization, Tree, { domain: "demo", id: chain[0], depth: 2 });
    expect(twoDown.body.data!.location!.descendants.map((d) => d.name)).toEqual(["L1", "L2"]);
  });
});
