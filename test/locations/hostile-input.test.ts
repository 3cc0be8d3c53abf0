import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildLocationApp, type LocationTestApp } from "../helpers/locations.ts";

/**
 * Regressions found by the property tests of issue #7 (test/properties/locations.test.ts): input
 * that reached PostgreSQL and failed there (a 500) instead of a 400.
 */

let app: LocationTestApp;

describe("Location API: text PostgreSQL cannot hold", () => {
  beforeEach(async () => {
    app = await buildLocationApp();
  });
  afterEach(() => app.close());

  it.each([
    ["a lone low surrogate in a value", { note: "\udc001" }],
    ["a lone high surrogate in a value", { note: "x\ud800" }],
    ["a lone surrogate in a key", { "\udfffkey": "v" }],
  ])("refuses location_data with %s (400, nothing saved) on create, update and bulk", async (_, locationData) => {
    const root = await app.createLocation({ name: "Land", location_type_code: "country" });
    const expected = { error: "'location_data' cannot contain an unpaired surrogate." };

    const created = await app.post({ name: "Zone", location_type_code: "zone", location_data: locationData });
    expect([created.status, created.body]).toEqual([400, expected]);

    const updated = await app.put(root.location_id, { location_data: locationData });
    expect([updated.status, updated.body]).toEqual([400, expected]);

    const bulk = await app.patch({ objects: [{ name: "Zone", location_type_code: "zone", location_data: locationData }] });
    expect(bulk.status).toBe(400);
    expect(bulk.body.error).toContain("unpaired surrogate");

    const list = await app.get("?format=json");
    expect(list.body.meta.total_count).toBe(1);
    expect(list.body.objects[0].location_data).toEqual({});
  });

  it("still stores well-formed astral characters (surrogate pairs) in location_data", async () => {
    const res = await app.post({ name: "Zone", location_type_code: "zone", location_data: { "😀": "𝔘 ok" } });
    expect(res.status).toBe(201);
    expect(res.body.location_data).toEqual({ "😀": "𝔘 ok" });
  });
});

describe("Location API and location types: unpaired surrogates and NUL (PGlite cannot encode two low surrogates in a row)", () => {
  beforeEach(async () => {
    app = await buildLocationApp();
  });
  afterEach(() => app.close());

  const graphql = (authorization: string, query: string, variables: Record<string, unknown>) =>
    app.http().post("/graphql").set("Authorization", authorization).set("Content-Type", "application/json").send({ query, variables });

  it("refuses a name, site code or parent id with unpaired surrogates (400), on create and update", async () => {
    const root = await app.createLocation({ name: "Land", location_type_code: "country" });
    for (const [field, value] of [
      ["name", "a\udfff\udfffb"],
      ["site_code", "s\udc00\udc01"],
      ["parent_location_id", "\udfff\udfff"],
    ] as const) {
      const created = await app.post({ name: "Zone", location_type_code: "zone", [field]: value });
      expect([created.status, created.body]).toEqual([400, { error: `'${field}' cannot contain an unpaired surrogate.` }]);
      const updated = await app.put(root.location_id, { [field]: value });
      expect([updated.status, updated.body]).toEqual([400, { error: `'${field}' cannot contain an unpaired surrogate.` }]);
    }
  });

  it("answers look-ups by such values with nothing, not a 500 (GraphQL locations filter, locationBySiteCode)", async () => {
    await app.createLocation({ name: "Land", location_type_code: "country" });
    const res = await graphql(
      app.reader.authorization,
      'query($v: String!) { locations(domain: "demo", filter: { name: $v, siteCode: $v }) { totalCount } locationBySiteCode(domain: "demo", siteCode: $v) { name } }',
      { v: "x\udfff\udfff" },
    );
    expect(res.body).toEqual({ data: { locations: { totalCount: 0 }, locationBySiteCode: null } });
  });

  it("answers a superuser's location type mutations naming a domain or code with NUL or unpaired surrogates NOT_FOUND, not a 500", async () => {
    const { createUser } = await import("../helpers/app.ts");
    const root = await createUser(app, { superuser: true });
    for (const [domain, code] of [
      ["de\u0000mo", "country"],
      ["\udfff\udfff", "country"],
      ["demo", "coun\u0000try"],
      ["demo", "\udc00\udc00"],
    ]) {
      for (const query of [
        'mutation($d: String!, $c: String!) { updateLocationType(domain: $d, code: $c, name: "N") { code } }',
        "mutation($d: String!, $c: String!) { deleteLocationType(domain: $d, code: $c) }",
      ]) {
        const res = await graphql(root.authorization, query, { d: domain, c: code });
        expect(
          res.body.errors?.map((e: { extensions: { code: string } }) => e.extensions.code),
          JSON.stringify(res.body),
        ).toEqual(["NOT_FOUND"]);
      }
    }
    const created = await graphql(
      root.authorization,
      'mutation($d: String!) { createLocationType(domain: $d, input: { code: "x", name: "X" }) { code } }',
      { d: "\udfff\udfff" },
    );
    expect(created.body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    const badParent = await graphql(
      root.authorization,
      'mutation($p: String!) { createLocationType(domain: "demo", input: { code: "x", name: "X", parentCode: $p }) { code } }',
      { p: "\u0000" },
    );
    expect(badParent.body.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});
