import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDomain, createUser } from "../helpers/app.ts";
import { buildLocationApp, LOCATIONS, type LocationTestApp, LOCATION_KEYS } from "../helpers/locations.ts";

/**
 * CONTRACT §3 serialization and "Detail `GET {location_id}`: 404 when not in the domain";
 * §1 Dates (Location API: ISO 8601 with microseconds, no timezone suffix); read permissions.
 */

let app: LocationTestApp;
beforeEach(async () => {
  app = await buildLocationApp();
});
afterEach(() => app.close());

const NAIVE_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;
const detail = (id: string) => app.get(`${id}?format=json`);

describe("serialization: keys in contract order, formats", () => {
  it("a root: keys in order, parent_location_id null, null coordinates, last_modified ISO with microseconds and no timezone", async () => {
    const before = Date.now();
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    const res = await detail(made.location_id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(LOCATION_KEYS);
    expect(res.body).toEqual({
      domain: "demo",
      last_modified: made.last_modified,
      latitude: null,
      location_data: {},
      location_id: made.location_id,
      location_type_code: "country",
      location_type_name: "Country",
      longitude: null,
      name: "Kenya",
      parent_location_id: null,
      site_code: "ke",
    });
    expect(res.body.last_modified).toMatch(NAIVE_MICROS);
    // naive = UTC: reading it as UTC gives the write time
    const at = Date.parse(`${res.body.last_modified.slice(0, 23)}Z`);
    expect(at).toBeGreaterThanOrEqual(before - 1);
    expect(at).toBeLessThanOrEqual(Date.now());
  });

  it("latitude/longitude are decimal strings read back exactly as written; location_data round-trips", async () => {
    const made = await app.createLocation({
      name: "Nairobi HQ",
      location_type_code: "country",
      latitude: "-1.2863890",
      longitude: "36.8172230",
      location_data: { region: "east", code: "001" },
    });
    const res = await detail(made.location_id);
    expect(res.body.latitude).toBe("-1.2863890");
    expect(res.body.longitude).toBe("36.8172230");
    expect(res.body.location_data).toEqual({ region: "east", code: "001" });
  });

  it("parent_location_id is the id of the direct parent", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const nairobi = await app.createLocation({ name: "Nairobi", location_type_code: "state", parent_location_id: kenya.location_id });
    const res = await detail(nairobi.location_id);
    expect(res.body.parent_location_id).toBe(kenya.location_id);
    expect(res.body.location_type_name).toBe("State");
  });
});

describe("404 when not in the domain", () => {
  it("an unknown id is 404 with a JSON error body", async () => {
    const res = await detail("00000000-0000-4000-8000-000000000000");
    expect(res.status).toBe(404);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(["error"]);
  });

  it("a malformed id is 404, never a 500 (also without format=json)", async () => {
    for (const id of ["not-a-uuid", "123", "%E2%9C%93", "0000000-0000-4000-8000-000000000000x"]) {
      const res = await app.get(id);
      expect(res.status, id).toBe(404);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
  });

  it("another domain's location is 404", async () => {
    await createDomain(app, "other");
    await (await app.services.locationTypes.in(app.root, "other", "admin")).create({ code: "country", name: "Country" });
    const elsewhere = await (await app.services.locations.in(app.root, "other", "write")).create({ name: "Elsewhere", typeCode: "country" });
    const res = await detail(elsewhere.id);
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["error"]);
  });
});

describe("paths (CONTRACT §1): trailing slash optional; wrong method 405", () => {
  it("list, detail, create and update answer with or without the trailing slash, never a redirect", async () => {
    const created = await app
      .http()
      .post("/a/demo/api/location/v2")
      .set("Authorization", app.editor.authorization)
      .send({ name: "Kenya", location_type_code: "country" });
    expect(created.status).toBe(201);
    const id = created.body.location_id;
    const list = await app.http().get("/a/demo/api/location/v2?format=json").set("Authorization", app.editor.authorization);
    expect(list.status).toBe(200);
    expect(list.body.meta.total_count).toBe(1);
    expect((await app.get(`${id}/?format=json`)).body.location_id).toBe(id);
    const updated = await app.put(`${id}/`, { name: "Kenia" });
    expect(updated.status).toBe(200);
    expect(updated.body.name).toBe("Kenia");
  });

  it("DELETE on a location is 405 with Allow and a JSON error body", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const res = await app.http().delete(`${LOCATIONS}${made.location_id}`).set("Authorization", app.editor.authorization);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain("GET");
    expect(res.headers.allow).toContain("PUT");
    expect(Object.keys(res.body)).toEqual(["error"]);
  });
});

describe("permissions", () => {
  it("a reader (view_locations) may read a location", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const res = await app.http().get(`${LOCATIONS}${made.location_id}?format=json`).set("Authorization", app.reader.authorization);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(made);
  });

  it("a non-member gets 403 and anonymous gets 401, for an existing id too", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    await createDomain(app, "other");
    const outsider = await createUser(app, { domain: "other", permissions: ["access_api", "edit_locations"] });
    const forbidden = await app.http().get(`${LOCATIONS}${made.location_id}?format=json`).set("Authorization", outsider.authorization);
    expect(forbidden.status).toBe(403);
    expect(Object.keys(forbidden.body)).toEqual(["error"]);
    const anonymous = await app.http().get(`${LOCATIONS}${made.location_id}?format=json`);
    expect(anonymous.status).toBe(401);
  });
});
