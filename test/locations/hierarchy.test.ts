import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDomain, createUser } from "../helpers/app.ts";
import { buildLocationApp, type LocationTestApp } from "../helpers/locations.ts";
import { countLocations } from "../helpers/rows.ts";

/**
 * CONTRACT §3 "Rules" across a whole hierarchy (country → state → district → facility, plus the
 * root type zone): at each level only the child type of the parent's type is valid, a root needs a
 * root type, and facility (no child types) cannot have children. Also the location types listing
 * `GET /a/{domain}/api/location_type/v1/`.
 */

let app: LocationTestApp;
beforeEach(async () => {
  app = await buildLocationApp();
});
afterEach(() => app.close());

const TYPES = ["country", "state", "district", "facility", "zone"];
const NOT_VALID = "Location type not valid for the selected parent.";
const NO_CHILDREN = "The selected parent location cannot have child locations!";

async function attempt(type: string, parent: string | null) {
  return app.post({ name: `A ${type}`, location_type_code: type, ...(parent ? { parent_location_id: parent } : {}) });
}

describe("a 5-level hierarchy: country → state → district → facility → (nothing)", () => {
  it("each level accepts only its child type; facility cannot have children", async () => {
    const levels: [string | null, string][] = [
      [null, "country"],
      ["country", "state"],
      ["state", "district"],
      ["district", "facility"],
    ];
    const made: Record<string, Record<string, any>> = {};
    for (const [parentType, childType] of levels) {
      const parent = parentType ? made[parentType].location_id : null;
      // every other type is refused here, and nothing is written
      const before = await countLocations(app);
      for (const wrong of TYPES.filter((t) => t !== childType && !(parent === null && t === "zone"))) {
        const res = await attempt(wrong, parent);
        expect(res.status, `${wrong} under ${parentType}`).toBe(400);
        expect(res.body, `${wrong} under ${parentType}`).toEqual({ error: NOT_VALID });
      }
      expect(await countLocations(app)).toBe(before);
      made[childType] = await app.createLocation({
        name: `The ${childType}`,
        location_type_code: childType,
        ...(parent ? { parent_location_id: parent } : {}),
      });
      expect(made[childType].parent_location_id).toBe(parent);
      expect(made[childType].location_type_code).toBe(childType);
    }
    // the fifth level: facility has no child types, whatever the type asked for
    const before = await countLocations(app);
    for (const type of TYPES) {
      const res = await attempt(type, made.facility.location_id);
      expect(res.status, type).toBe(400);
      expect(res.body, type).toEqual({ error: NO_CHILDREN });
    }
    expect(await countLocations(app)).toBe(before);

    // each level lists its direct child only
    for (const [parentType, childType] of levels.slice(1)) {
      const res = await app.get(`?format=json&parent_location_id=${made[parentType!].location_id}`);
      expect(res.body.objects.map((o: Record<string, any>) => o.location_id)).toEqual([made[childType].location_id]);
    }
    const roots = await app.get("?format=json&location_type_code=country");
    expect(roots.body.meta.total_count).toBe(1);
  });

  it("a root type other than country (zone) may be a root; a zone cannot have children", async () => {
    const zone = await app.createLocation({ name: "Zone 1", location_type_code: "zone" });
    expect(zone.parent_location_id).toBeNull();
    for (const type of TYPES) {
      const res = await attempt(type, zone.location_id);
      expect(res.body, type).toEqual({ error: NO_CHILDREN });
    }
  });

  it("a district can be moved to another state, not to a country or a district", async () => {
    const country = await app.createLocation({ name: "C", location_type_code: "country" });
    const s1 = await app.createLocation({ name: "S1", location_type_code: "state", parent_location_id: country.location_id });
    const s2 = await app.createLocation({ name: "S2", location_type_code: "state", parent_location_id: country.location_id });
    const d = await app.createLocation({ name: "D", location_type_code: "district", parent_location_id: s1.location_id });
    const d2 = await app.createLocation({ name: "D2", location_type_code: "district", parent_location_id: s1.location_id });
    expect((await app.put(d.location_id, { parent_location_id: country.location_id })).body).toEqual({ error: NOT_VALID });
    expect((await app.put(d.location_id, { parent_location_id: d2.location_id })).body).toEqual({ error: NOT_VALID });
    const moved = await app.put(d.location_id, { parent_location_id: s2.location_id });
    expect(moved.status).toBe(200);
    expect(moved.body.parent_location_id).toBe(s2.location_id);
  });
});

describe("GET /a/{domain}/api/location_type/v1/", () => {
  const TYPES_PATH = "/a/demo/api/location_type/v1/";

  it("lists the domain's types with code, name and parent type, in a meta/objects envelope", async () => {
    const res = await app.http().get(TYPES_PATH).set("Authorization", app.reader.authorization);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["meta", "objects"]);
    expect(Object.keys(res.body.meta)).toEqual(["limit", "next", "offset", "previous", "total_count"]);
    expect(res.body.meta.total_count).toBe(5);
    const summary = res.body.objects.map((t: Record<string, any>) => [t.code, t.name, t.parent, t.domain]);
    expect(summary).toEqual([
      ["country", "Country", null, "demo"],
      ["state", "State", "country", "demo"],
      ["district", "District", "state", "demo"],
      ["facility", "Facility", "district", "demo"],
      ["zone", "Zone", null, "demo"],
    ]);
  });

  it("another domain's types are not listed; a non-member is 403; no credentials 401", async () => {
    await createDomain(app, "other");
    await (await app.services.locationTypes.in(app.root, "other", "admin")).create({ code: "island", name: "Island" });
    const res = await app.http().get(TYPES_PATH).set("Authorization", app.editor.authorization);
    expect(res.body.objects.map((t: Record<string, any>) => t.code)).not.toContain("island");
    const outsider = await createUser(app, { domain: "other", permissions: ["access_api", "edit_locations"] });
    const forbidden = await app.http().get(TYPES_PATH).set("Authorization", outsider.authorization);
    expect(forbidden.status).toBe(403);
    expect(Object.keys(forbidden.body)).toEqual(["error"]);
    expect((await app.http().get(TYPES_PATH)).status).toBe(401);
  });
});
