import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import { createDomain, createUser, type TestUser } from "../helpers/app.ts";
import { gql } from "../helpers/graphql.ts";
import { buildLocationApp, type LocationTestApp } from "../helpers/locations.ts";
import { globalId } from "../../src/graphql/node.ts";

/** CONTRACT §7.3: Location and LocationType are Nodes, seen through the caller's location read scope. */

const Ids = graphql(`
  query LocationNodeIds($domain: String!, $locationId: ID!) {
    location(domain: $domain, locationId: $locationId) { id locationId locationType { id code } }
    locationTypes(domain: $domain) { id code }
  }
`);
const NodeById = graphql(`
  query LocationNodeById($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on Location { locationId name locationType { code } }
      ... on LocationType { code name parentCode }
    }
  }
`);

let app: LocationTestApp;
let locationId: string;
let ids: { location: string; type: string };
/** a member of another domain with every location permission there */
let outsider: TestUser;
/** a member of "demo" without a location permission */
let casesOnly: TestUser;

beforeAll(async () => {
  app = await buildLocationApp();
  locationId = (await app.createLocation({ name: "Land", location_type_code: "country" })).location_id;
  const res = await gql(app, app.reader.authorization, Ids, { domain: "demo", locationId });
  const location = res.body.data!.location!;
  ids = { location: location.id, type: location.locationType.id };
  await createDomain(app, "other");
  outsider = await createUser(app, { domain: "other", permissions: ["access_api", "edit_locations"] });
  casesOnly = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
});
afterAll(() => app.close());

describe("CONTRACT §7.3 Location and LocationType nodes", () => {
  it("a location's id is an opaque global id beside locationId, and node(id) fetches it again", async () => {
    expect(ids.location).not.toBe(locationId);
    expect(ids.location).not.toContain(locationId);
    const res = await gql(app, app.reader.authorization, NodeById, { id: ids.location });
    expect(res.body).toEqual({
      data: { node: { __typename: "Location", id: ids.location, locationId, name: "Land", locationType: { code: "country" } } },
    });
  });

  it("a location type's id is a global id (the same from locationTypes and from a location), and node(id) fetches it", async () => {
    const listed = await gql(app, app.reader.authorization, Ids, { domain: "demo", locationId });
    expect(listed.body.data!.locationTypes.find((t) => t.code === "country")!.id).toBe(ids.type);
    const res = await gql(app, app.reader.authorization, NodeById, { id: ids.type });
    expect(res.body).toEqual({ data: { node: { __typename: "LocationType", id: ids.type, code: "country", name: "Country", parentCode: null } } });
  });

  it("node is null, never an error, for a member of another domain, a member without location permissions, and unknown ids", async () => {
    for (const user of [outsider, casesOnly]) {
      for (const id of [ids.location, ids.type]) {
        expect((await gql(app, user.authorization, NodeById, { id })).body).toEqual({ data: { node: null } });
      }
    }
    for (const id of [
      globalId("Location", "demo", "00000000-0000-4000-8000-000000000000"),
      globalId("Location", "demo", "not-a-uuid"),
      globalId("LocationType", "demo", "country"),
      globalId("Location", "other", locationId),
      globalId("Location", "nowhere", locationId),
    ]) {
      expect([id, (await gql(app, app.reader.authorization, NodeById, { id })).body]).toEqual([id, { data: { node: null } }]);
    }
  });
});
