import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { withOffset } from "../helpers/arbitraries.ts";
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

/** JSON text of a list nested `depth` levels deep. */
const deepList = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
/** What a message echoes of it: the first 1000 characters, then "…". */
const echoed = `${"[".repeat(1000)}…`;

describe("F8: JSON nested thousands of levels deep in location bodies", () => {
  beforeEach(async () => {
    app = await buildLocationApp();
  });
  afterEach(() => app.close());

  const send = (method: "post" | "put" | "patch", path: string, text: string) =>
    app
      .http()
      [method](`/a/demo/api/location/v2/${path}`)
      .set("Authorization", app.editor.authorization)
      .set("Content-Type", "application/json")
      .send(text);

  it("F8: a deep name or latitude answers 400 with the echo cut, on create, update and bulk, never 500", async () => {
    const root = await app.createLocation({ name: "Land", location_type_code: "country" });
    for (const depth of [6_000, 50_000]) {
      const name = await send("post", "", `{"name":${deepList(depth)},"location_type_code":"country"}`);
      expect([name.status, name.body], `name ${depth}`).toEqual([400, { error: `'name' must be a string, received '${echoed}'` }]);
      const latitude = await send("put", root.location_id, `{"latitude":${deepList(depth)}}`);
      expect([latitude.status, latitude.body], `latitude ${depth}`).toEqual([
        400,
        { error: `'latitude' must be a decimal number, received '${echoed}'` },
      ]);
      const bulk = await send(
        "patch",
        "",
        `{"objects":[{"name":"Zone","location_type_code":"zone","parent_location_id":"${root.location_id}","site_code":${deepList(depth)}}]}`,
      );
      expect(bulk.status, `bulk ${depth}`).toBe(400);
      expect(bulk.body.error).toContain(`'site_code' must be a string, received '${echoed}'`);
      const id = await send("patch", "", `{"objects":[{"location_id":${deepList(depth)}}]}`);
      expect([id.status, id.body.error], `location_id ${depth}`).toEqual([
        400,
        expect.stringContaining(`'location_id' must be a string, received '${echoed}'`),
      ]);
      const data = await send("post", "", `{"name":"Z","location_type_code":"country","location_data":{"a":${deepList(depth)}}}`);
      expect([data.status, data.body]).toEqual([400, { error: "'location_data' must be a dictionary of string values." }]);
    }
    const list = await app.get("?format=json");
    expect(list.body.objects.map((l: { name: string; latitude: unknown }) => [l.name, l.latitude])).toEqual([["Land", null]]);
  });

  it("F8: GraphQL locationData nested thousands of levels deep answers BAD_USER_INPUT", async () => {
    const res = await app
      .http()
      .post("/graphql")
      .set("Authorization", app.editor.authorization)
      .set("Content-Type", "application/json")
      .send(
        `{"query":"mutation($d: JSONObject) { createLocation(domain: \\"demo\\", input: {name: \\"Z\\", locationTypeCode: \\"country\\", locationData: $d}) { locationId } }","variables":{"d":{"a":${deepList(20_000)}}}}`,
      );
    expect(res.body.errors?.map((e: { message: string; extensions: { code: string } }) => [e.message, e.extensions.code])).toEqual([
      ["'location_data' must be a dictionary of string values.", "BAD_USER_INPUT"],
    ]);
  });
});

/** The instant of a naive (UTC) last_modified, written as local time at `minutes` east of UTC. */
const local = (naive: string, minutes: number) => withOffset(Date.parse(`${naive.slice(0, 23)}Z`), minutes);

describe("F10: last_modified filters with offsets PostgreSQL does not take (±16:00 to ±23:59)", () => {
  beforeEach(async () => {
    app = await buildLocationApp();
  });
  afterEach(() => app.close());

  it("F10: REST and GraphQL filters convert every offset to UTC and bound the location's own instant exactly", async () => {
    const land = await app.createLocation({ name: "Land", location_type_code: "country" });
    const names = async (query: string) => {
      const res = await app.get(`?format=json&${query}`);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body.objects.map((l: { name: string }) => l.name);
    };
    for (const minutes of [-(23 * 60 + 59), -20 * 60, -16 * 60, 16 * 60, 23 * 60 + 59]) {
      const at = encodeURIComponent(local(land.last_modified, minutes));
      expect(await names(`last_modified.gte=${at}`), `gte ${at}`).toEqual(["Land"]);
      expect(await names(`last_modified.gt=${at}`), `gt ${at}`).toEqual([]);
    }
    const reviewed = await app.get(`?format=json&last_modified.gte=${encodeURIComponent("2020-01-01T00:00:00-20:00")}`);
    expect([reviewed.status, reviewed.body.meta.total_count]).toEqual([200, 1]);
    const refused = await app.get(`?format=json&last_modified.gte=${encodeURIComponent("2020-01-01T00:00:00+24:00")}`);
    expect([refused.status, refused.body]).toEqual([400, { error: "Cannot parse datetime '2020-01-01T00:00:00+24:00'" }]);

    const gql = await app
      .http()
      .post("/graphql")
      .set("Authorization", app.reader.authorization)
      .send({
        query: 'query($r: DateRange) { locations(domain: "demo", filter: {lastModified: $r}) { totalCount } }',
        variables: { r: { lte: local(land.last_modified, 23 * 60), gt: "2020-01-01T00:00:00-23:59" } },
      });
    expect([gql.body.errors, gql.body.data]).toEqual([undefined, { locations: { totalCount: 1 } }]);
  });
});
