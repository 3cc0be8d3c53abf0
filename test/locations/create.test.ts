import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDomain } from "../helpers/app.ts";
import { buildLocationApp, LOCATIONS, type LocationTestApp, LOCATION_KEYS } from "../helpers/locations.ts";
import { TWO_MISTAKES } from "./field-order.cases.ts";
import { countLocations } from "../helpers/rows.ts";

/**
 * CONTRACT §3 "Create `POST`" and "Rules (create, update and each bulk item)": 201 with the full
 * location; required fields; unknown keys; every validation rule with its exact message; a refused
 * create writes nothing; only edit_locations may create.
 */

let app: LocationTestApp;
beforeEach(async () => {
  app = await buildLocationApp();
});
afterEach(() => app.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NAIVE_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;
const REQUIRED = "'name' and 'location_type_code' are required fields when creating a new location.";

const count = () => countLocations(app);

/** POSTs `body`, expects 400 with exactly {"error": message}, and that nothing was written. */
async function refused(body: unknown, message: string) {
  const before = await count();
  const res = await app.post(body);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toEqual({ error: message });
  expect(await count()).toBe(before);
}

describe("201 with the full location", () => {
  it("answers 201 with every key in contract order, as then read back", async () => {
    const res = await app.post({
      name: "Kenya",
      location_type_code: "country",
      site_code: "ke",
      latitude: "0.0236",
      longitude: "37.9062",
      location_data: { iso: "KE" },
    });
    expect(res.status).toBe(201);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(LOCATION_KEYS);
    expect(res.body).toMatchObject({
      domain: "demo",
      latitude: "0.0236",
      location_data: { iso: "KE" },
      location_type_code: "country",
      location_type_name: "Country",
      longitude: "37.9062",
      name: "Kenya",
      parent_location_id: null,
      site_code: "ke",
    });
    expect(res.body.location_id).toMatch(UUID);
    expect(res.body.last_modified).toMatch(NAIVE_MICROS);
    const read = await app.get(`${res.body.location_id}?format=json`);
    expect(read.body).toEqual(res.body);
  });

  it("optional fields default: coordinates null, location_data {}, parent null, site_code generated", async () => {
    const res = await app.post({ name: "Kenya", location_type_code: "country" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ latitude: null, longitude: null, location_data: {}, parent_location_id: null, site_code: "kenya" });
  });

  it("latitude/longitude read back exactly as written, including zeros and signs; null stays null", async () => {
    const res = await app.post({ name: "A", location_type_code: "country", latitude: "-0.50000", longitude: "180.0" });
    expect(res.body.latitude).toBe("-0.50000");
    expect(res.body.longitude).toBe("180.0");
    const nulls = await app.post({ name: "B", location_type_code: "country", latitude: null, longitude: null });
    expect(nulls.status).toBe(201);
    expect(nulls.body.latitude).toBeNull();
    expect(nulls.body.longitude).toBeNull();
  });

  it("a coordinate that is not a decimal is a 400 and nothing is created", async () => {
    const before = await count();
    for (const latitude of ["north", "1.2.3", "", {}, true]) {
      const res = await app.post({ name: "A", location_type_code: "country", latitude });
      expect(res.status, JSON.stringify(latitude)).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
    expect(await count()).toBe(before);
  });
});

describe(`required: ${REQUIRED}`, () => {
  it("missing name, missing location_type_code, both missing, or an empty/null value", async () => {
    await refused({ location_type_code: "country" }, REQUIRED);
    await refused({ name: "Kenya" }, REQUIRED);
    await refused({}, REQUIRED);
    await refused({ name: "", location_type_code: "country" }, REQUIRED);
    await refused({ name: "Kenya", location_type_code: null }, REQUIRED);
  });
});

describe("unknown keys: Invalid fields were included in request: [<keys>].", () => {
  it("names every unknown key, in request order", async () => {
    await refused(
      { name: "Kenya", location_type_code: "country", colour: "red", size: "L" },
      "Invalid fields were included in request: ['colour', 'size'].",
    );
  });

  it("location_id is not a create field", async () => {
    await refused(
      { name: "Kenya", location_type_code: "country", location_id: "00000000-0000-4000-8000-000000000000" },
      "Invalid fields were included in request: ['location_id'].",
    );
  });
});

describe("parent must exist in the domain: Could not find parent location with the given ID.", () => {
  it("an unknown, malformed or other-domain parent id", async () => {
    await createDomain(app, "other");
    await (await app.services.locationTypes.in(app.root, "other", "admin")).create({ code: "country", name: "Country" });
    const elsewhere = await (await app.services.locations.in(app.root, "other", "write")).create({ name: "Elsewhere", typeCode: "country" });
    for (const parent of ["00000000-0000-4000-8000-000000000000", "nope", elsewhere.id]) {
      await refused(
        { name: "Nairobi", location_type_code: "state", parent_location_id: parent },
        "Could not find parent location with the given ID.",
      );
    }
  });
});

describe("type must be a valid child type of the parent's type: Location type not valid for the selected parent.", () => {
  it("a child of the wrong type; a root of a non-root type; a root type under a parent", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const message = "Location type not valid for the selected parent.";
    await refused({ name: "X", location_type_code: "district", parent_location_id: kenya.location_id }, message);
    await refused({ name: "X", location_type_code: "country", parent_location_id: kenya.location_id }, message);
    await refused({ name: "X", location_type_code: "zone", parent_location_id: kenya.location_id }, message);
    await refused({ name: "X", location_type_code: "state" }, message);
    await refused({ name: "X", location_type_code: "state", parent_location_id: null }, message);
    const ok = await app.post({ name: "X", location_type_code: "state", parent_location_id: kenya.location_id });
    expect(ok.status).toBe(201);
  });

  it("a parent whose type has no child types: The selected parent location cannot have child locations!", async () => {
    const zone = await app.createLocation({ name: "Zone 1", location_type_code: "zone" });
    await refused(
      { name: "X", location_type_code: "state", parent_location_id: zone.location_id },
      "The selected parent location cannot have child locations!",
    );
  });
});

describe("type matched by code; unknown: LocationType '<x>' not found", () => {
  it("an unknown code, and a type's name or a differently cased code, are not found", async () => {
    await refused({ name: "X", location_type_code: "planet" }, "LocationType 'planet' not found");
    await refused({ name: "X", location_type_code: "Country" }, "LocationType 'Country' not found");
  });

  it("a type of another domain is not found", async () => {
    await createDomain(app, "other");
    await (await app.services.locationTypes.in(app.root, "other", "admin")).create({ code: "island", name: "Island" });
    await refused({ name: "X", location_type_code: "island" }, "LocationType 'island' not found");
  });
});

describe("name unique among siblings: Location with same name and parent already exists.", () => {
  it("a second root of the same name (any root type) is refused; the same name under another parent is fine", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const uganda = await app.createLocation({ name: "Uganda", location_type_code: "country" });
    const message = "Location with same name and parent already exists.";
    await refused({ name: "Kenya", location_type_code: "country" }, message);
    await refused({ name: "Kenya", location_type_code: "zone" }, message);
    await app.createLocation({ name: "Central", location_type_code: "state", parent_location_id: kenya.location_id });
    await refused({ name: "Central", location_type_code: "state", parent_location_id: kenya.location_id }, message);
    const other = await app.post({ name: "Central", location_type_code: "state", parent_location_id: uganda.location_id });
    expect(other.status).toBe(201);
  });
});

describe("site_code: lowercased, ^[-_\\w]+$, unique in the domain case-insensitively", () => {
  it("is stored and returned lowercased", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "KE-Main_01" });
    expect(made.site_code).toBe("ke-main_01");
    const listed = await app.get("?format=json&site_code=ke-main_01");
    expect(listed.body.objects.map((o: { name: string }) => o.name)).toEqual(["Kenya"]);
  });

  it("spaces or special characters: The site code cannot contain spaces or special characters.", async () => {
    for (const site_code of ["ke main", "ke.main", "ke/main", "ke!", "", "tab\there"]) {
      await refused({ name: "Kenya", location_type_code: "country", site_code }, "The site code cannot contain spaces or special characters.");
    }
  });

  it("a code used by another location, in any case: another location already uses this site code", async () => {
    await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    await refused({ name: "Kenia", location_type_code: "country", site_code: "ke" }, "another location already uses this site code");
    await refused({ name: "Kenia", location_type_code: "country", site_code: "KE" }, "another location already uses this site code");
  });

  it("the same code in another domain does not clash", async () => {
    await createDomain(app, "other");
    await (await app.services.locationTypes.in(app.root, "other", "admin")).create({ code: "country", name: "Country" });
    await (await app.services.locations.in(app.root, "other", "write")).create({ name: "Elsewhere", typeCode: "country", siteCode: "ke" });
    const res = await app.post({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    expect(res.status).toBe(201);
  });
});

describe("location_data must be an object of string values", () => {
  it("a string, a list, or non-string values are a 400 and nothing is created", async () => {
    const before = await count();
    for (const location_data of ["{}", ["a"], { a: 1 }, { a: null }, { a: { b: "c" } }, { a: true }]) {
      const res = await app.post({ name: "Kenya", location_type_code: "country", location_data });
      expect(res.status, JSON.stringify(location_data)).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
    expect(await count()).toBe(before);
  });

  it("a NUL character in a key or value is a 400, never a 500", async () => {
    for (const location_data of [{ a: "x\u0000y" }, { "k\u0000": "v" }]) {
      const res = await app.post({ name: "Kenya", location_type_code: "country", location_data });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
  });

  it("every key is kept as sent, __proto__ included", async () => {
    const res = await app
      .http()
      .post(LOCATIONS)
      .set("Authorization", app.editor.authorization)
      .set("Content-Type", "application/json")
      .send('{"name": "Kenya", "location_type_code": "country", "location_data": {"__proto__": "p", "ok": "1"}}');
    expect(res.status).toBe(201);
    const read = await app.get(`${res.body.location_id}?format=json`);
    expect(Object.entries(read.body.location_data).sort()).toEqual([
      ["__proto__", "p"],
      ["ok", "1"],
    ]);
    expect(read.text).toContain('"__proto__":"p"');
    // and an update that does not touch location_data keeps it
    const renamed = await app.put(res.body.location_id, { name: "Kenia" });
    expect(renamed.text).toContain('"__proto__":"p"');
  });
});

describe("lengths: name and site_code are index keys", () => {
  it("a 255-character name (multi-byte too) is accepted, with a short generated site code; 256 is a 400, never a 500", async () => {
    const name = "爫".repeat(255);
    const res = await app.post({ name, location_type_code: "country" });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name);
    expect(res.body.site_code.length).toBeLessThanOrEqual(255);
    expect(res.body.site_code).toMatch(/^[a-z_]+$/);
    const long = await app.post({ name: "爫".repeat(256), location_type_code: "country" });
    expect(long.status).toBe(400);
    expect(Object.keys(long.body)).toEqual(["error"]);
  });

  it("a site_code over 255 characters is a 400, never a 500", async () => {
    const res = await app.post({ name: "Kenya", location_type_code: "country", site_code: "k".repeat(3000) });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(await count()).toBe(0);
  });
});

describe("payloads", () => {
  it("a body that is not JSON: 400 Payload must be valid JSON", async () => {
    const res = await app.http().post(LOCATIONS).set("Authorization", app.editor.authorization).set("Content-Type", "application/json").send("{nope");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "Payload must be valid JSON" });
  });

  it("a JSON body that is not an object, or a non-string name, is a 400 with an error body", async () => {
    for (const body of [[], "Kenya", 5, { name: 5, location_type_code: "country" }, { name: "K", location_type_code: ["country"] }]) {
      const res = await app
        .http()
        .post(LOCATIONS)
        .set("Authorization", app.editor.authorization)
        .set("Content-Type", "application/json")
        .send(JSON.stringify(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
    expect(await count()).toBe(0);
  });
});

describe("each field is checked whole, type then value, in field order", () => {
  it("of two mistakes in different fields, the first field's is answered, whether of type or of value", async () => {
    for (const { body, error } of TWO_MISTAKES) await refused(body, error);
  });
});

describe("permissions: only edit_locations writes", () => {
  it("a reader gets 403 and nothing is created; no credentials is 401", async () => {
    const res = await app
      .http()
      .post(LOCATIONS)
      .set("Authorization", app.reader.authorization)
      .send({ name: "Kenya", location_type_code: "country" });
    expect(res.status).toBe(403);
    expect(Object.keys(res.body)).toEqual(["error"]);
    const anonymous = await app.http().post(LOCATIONS).send({ name: "Kenya", location_type_code: "country" });
    expect(anonymous.status).toBe(401);
    expect(await count()).toBe(0);
  });
});
