import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDomain } from "../helpers/app.ts";
import { buildLocationApp, LOCATIONS, type LocationTestApp, LOCATION_KEYS } from "../helpers/locations.ts";
import { TWO_MISTAKES } from "./field-order.cases.ts";
import { locationText } from "../helpers/rows.ts";

/**
 * CONTRACT §3 "Update `PUT {location_id}`": 200 with the full location; partial; unknown id 404;
 * `location_id` in the body is an invalid field; the create/update rules; invalid → nothing changes.
 */

let app: LocationTestApp;
beforeEach(async () => {
  app = await buildLocationApp();
});
afterEach(() => app.close());

/** The whole row as PostgreSQL prints it: byte-for-byte comparable. */
const row = (id: string) => locationText(app, id);

/** PUTs `body` on `id`, expects 400 {"error": message}, and that the row did not change. */
async function refused(id: string, body: unknown, message: string) {
  const before = await row(id);
  const res = await app.put(id, body);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toEqual({ error: message });
  expect(await row(id)).toBe(before);
}

async function kenyaTree() {
  const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
  const uganda = await app.createLocation({ name: "Uganda", location_type_code: "country", site_code: "ug" });
  const nairobi = await app.createLocation({ name: "Nairobi", location_type_code: "state", parent_location_id: kenya.location_id });
  const coast = await app.createLocation({ name: "Coast", location_type_code: "state", parent_location_id: kenya.location_id });
  const westlands = await app.createLocation({ name: "Westlands", location_type_code: "district", parent_location_id: nairobi.location_id });
  return { kenya, uganda, nairobi, coast, westlands };
}

describe("200 with the full location; partial", () => {
  it("a PUT with only name changes the name and keeps every other field; last_modified moves on", async () => {
    const made = await app.createLocation({
      name: "Kenya",
      location_type_code: "country",
      site_code: "ke",
      latitude: "1.5",
      longitude: "2.5",
      location_data: { a: "1" },
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const res = await app.put(made.location_id, { name: "Republic of Kenya" });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(LOCATION_KEYS);
    expect(res.body).toEqual({ ...made, name: "Republic of Kenya", last_modified: res.body.last_modified });
    expect(res.body.last_modified > made.last_modified).toBe(true);
    expect((await app.get(`${made.location_id}?format=json`)).body).toEqual(res.body);
  });

  it("each editable field can be changed alone; null clears a coordinate", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country", latitude: "1.0", longitude: "2.0" });
    const id = made.location_id;
    expect((await app.put(id, { site_code: "KEN" })).body.site_code).toBe("ken");
    expect((await app.put(id, { latitude: "-3.25" })).body.latitude).toBe("-3.25");
    expect((await app.put(id, { longitude: null })).body.longitude).toBeNull();
    expect((await app.put(id, { location_data: { b: "2" } })).body.location_data).toEqual({ b: "2" });
    const retyped = await app.put(id, { location_type_code: "zone" });
    expect(retyped.body).toMatchObject({
      location_type_code: "zone",
      location_type_name: "Zone",
      latitude: "-3.25",
      longitude: null,
      site_code: "ken",
    });
  });

  it("an empty body object changes nothing but answers 200 with the location", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const res = await app.put(made.location_id, {});
    expect(res.status).toBe(200);
    expect({ ...res.body, last_modified: null }).toEqual({ ...made, last_modified: null });
  });

  it("a site code may be re-sent in another case by its own location", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    const res = await app.put(made.location_id, { site_code: "KE" });
    expect(res.status).toBe(200);
    expect(res.body.site_code).toBe("ke");
  });

  it("a move to another valid parent answers the new parent_location_id", async () => {
    const t = await kenyaTree();
    const res = await app.put(t.nairobi.location_id, { parent_location_id: t.uganda.location_id });
    expect(res.status).toBe(200);
    expect(res.body.parent_location_id).toBe(t.uganda.location_id);
    // the subtree moves with it
    expect((await app.get(`${t.westlands.location_id}?format=json`)).body.parent_location_id).toBe(t.nairobi.location_id);
  });
});

describe("unknown id: 404", () => {
  it("an unknown, malformed or other-domain id is 404 and nothing is written", async () => {
    await createDomain(app, "other");
    await (await app.services.locationTypes.in(app.root, "other", "admin")).create({ code: "country", name: "Country" });
    const elsewhere = await (await app.services.locations.in(app.root, "other", "write")).create({ name: "Elsewhere", typeCode: "country" });
    const before = await row(elsewhere.id);
    for (const id of ["00000000-0000-4000-8000-000000000000", "nope", elsewhere.id]) {
      const res = await app.put(id, { name: "Taken over" });
      expect(res.status, id).toBe(404);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
    expect(await row(elsewhere.id)).toBe(before);
  });
});

describe("a location_id key in the body: 400 as an invalid field", () => {
  it("even when it equals the path's id", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    await refused(made.location_id, { location_id: made.location_id, name: "X" }, "Invalid fields were included in request: ['location_id'].");
  });

  it("other unknown keys are named too", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    await refused(
      made.location_id,
      { name: "X", domain: "demo", last_modified: "x" },
      "Invalid fields were included in request: ['domain', 'last_modified'].",
    );
  });
});

describe("the rules apply to updates; an invalid update changes nothing", () => {
  it("site_code: format and case-insensitive uniqueness", async () => {
    const t = await kenyaTree();
    await refused(t.uganda.location_id, { name: "Uganda 2", site_code: "u g" }, "The site code cannot contain spaces or special characters.");
    await refused(t.uganda.location_id, { name: "Uganda 2", site_code: "KE" }, "another location already uses this site code");
  });

  it("name unique among siblings", async () => {
    const t = await kenyaTree();
    await refused(t.coast.location_id, { name: "Nairobi", site_code: "coast_x" }, "Location with same name and parent already exists.");
    await refused(t.uganda.location_id, { name: "Kenya" }, "Location with same name and parent already exists.");
  });

  it("a move next to a same-named sibling is refused", async () => {
    const t = await kenyaTree();
    await app.createLocation({ name: "Nairobi", location_type_code: "state", parent_location_id: t.uganda.location_id });
    await refused(t.nairobi.location_id, { parent_location_id: t.uganda.location_id }, "Location with same name and parent already exists.");
  });

  it("parent must exist in the domain", async () => {
    const t = await kenyaTree();
    await refused(
      t.nairobi.location_id,
      { parent_location_id: "00000000-0000-4000-8000-000000000000", name: "N" },
      "Could not find parent location with the given ID.",
    );
  });

  it("type must suit the parent: a new type under the same parent, a new parent for the same type, or a root with a non-root type", async () => {
    const t = await kenyaTree();
    const message = "Location type not valid for the selected parent.";
    await refused(t.coast.location_id, { location_type_code: "district" }, message);
    await refused(t.coast.location_id, { parent_location_id: t.nairobi.location_id }, message);
    await refused(t.coast.location_id, { parent_location_id: null }, message);
    await refused(t.kenya.location_id, { parent_location_id: t.uganda.location_id }, message);
  });

  it("a parent that cannot have children", async () => {
    const t = await kenyaTree();
    const zone = await app.createLocation({ name: "Zone 1", location_type_code: "zone" });
    await refused(t.coast.location_id, { parent_location_id: zone.location_id }, "The selected parent location cannot have child locations!");
  });

  it("an unknown type", async () => {
    const t = await kenyaTree();
    await refused(t.uganda.location_id, { location_type_code: "planet" }, "LocationType 'planet' not found");
  });

  it("a location with children cannot change type (a childless one can)", async () => {
    const t = await kenyaTree();
    const before = await row(t.kenya.location_id);
    const res = await app.put(t.kenya.location_id, { location_type_code: "zone" });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(await row(t.kenya.location_id)).toBe(before);
    expect((await app.put(t.kenya.location_id, { location_type_code: "country", name: "Kenya!" })).status).toBe(200);
    expect((await app.put(t.uganda.location_id, { location_type_code: "zone" })).status).toBe(200);
  });

  it("a location cannot move under itself or its own descendant", async () => {
    const t = await kenyaTree();
    for (const parent of [t.nairobi.location_id, t.westlands.location_id]) {
      const before = await row(t.nairobi.location_id);
      const res = await app.put(t.nairobi.location_id, { parent_location_id: parent });
      expect(res.status).toBe(400);
      expect(await row(t.nairobi.location_id)).toBe(before);
    }
  });

  it("location_data must be an object of string values", async () => {
    const t = await kenyaTree();
    const before = await row(t.kenya.location_id);
    for (const location_data of ["x", { a: 1 }, [], null]) {
      const res = await app.put(t.kenya.location_id, { name: "Changed", location_data });
      expect(res.status, JSON.stringify(location_data)).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
    expect(await row(t.kenya.location_id)).toBe(before);
  });

  it("each field is checked whole, type then value, in field order: the first field's mistake is answered", async () => {
    const t = await kenyaTree();
    for (const { body, error } of TWO_MISTAKES) await refused(t.kenya.location_id, body, error);
  });

  it("a valid change together with an invalid one: nothing changes", async () => {
    const t = await kenyaTree();
    await refused(t.kenya.location_id, { name: "Renamed", latitude: "5", location_type_code: "planet" }, "LocationType 'planet' not found");
  });
});

describe("payloads and permissions", () => {
  it("a body that is not JSON: 400 Payload must be valid JSON", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const before = await row(made.location_id);
    const res = await app
      .http()
      .put(`${LOCATIONS}${made.location_id}`)
      .set("Authorization", app.editor.authorization)
      .set("Content-Type", "application/json")
      .send("nope");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "Payload must be valid JSON" });
    expect(await row(made.location_id)).toBe(before);
  });

  it("a reader gets 403 and nothing changes", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const before = await row(made.location_id);
    const res = await app.http().put(`${LOCATIONS}${made.location_id}`).set("Authorization", app.reader.authorization).send({ name: "Hijacked" });
    expect(res.status).toBe(403);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(await row(made.location_id)).toBe(before);
  });

  it("PUT on the list path is a 405 with Allow", async () => {
    const res = await app.http().put(LOCATIONS).set("Authorization", app.editor.authorization).send({ name: "X" });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBeDefined();
    expect(Object.keys(res.body)).toEqual(["error"]);
  });
});
