import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildLocationApp, LOCATIONS, type LocationTestApp } from "../helpers/locations.ts";
import { TWO_MISTAKES } from "./field-order.cases.ts";
import { countLocations, locationTexts } from "../helpers/rows.ts";

/**
 * CONTRACT §3 "Bulk `PATCH` {"objects": [...]}": missing objects 400; over 100 400; items with
 * location_id update, others create; atomic; 202 with the ids in request order; any failure: 400
 * {"error": "<first failure>"} and nothing is changed.
 */

let app: LocationTestApp;
beforeEach(async () => {
  app = await buildLocationApp();
});
afterEach(() => app.close());

type Loc = Record<string, any>;

/** Every location row, as PostgreSQL prints it, in id order: byte-for-byte comparable. */
const dump = () => locationTexts(app);

/** PATCHes `body`, expects 400 with exactly {"error": message} and an unchanged table. */
async function refused(body: unknown, message?: string) {
  const before = await dump();
  const res = await app.patch(body);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(Object.keys(res.body)).toEqual(["error"]);
  if (message !== undefined) expect(res.body.error).toBe(message);
  expect(await dump()).toEqual(before);
  return res;
}

const read = async (id: string): Promise<Loc> => (await app.get(`${id}?format=json`)).body;
const byName = async (name: string): Promise<Loc[]> => (await app.get(`?format=json&name=${encodeURIComponent(name)}`)).body.objects;

describe("the request: {objects: [...]}", () => {
  it("missing objects, or objects not a list, is a 400", async () => {
    await refused({});
    await refused({ objects: { name: "Kenya" } });
    await refused([{ name: "Kenya", location_type_code: "country" }]);
  });

  it("a body that is not JSON: 400 Payload must be valid JSON", async () => {
    const res = await app.http().patch(LOCATIONS).set("Authorization", app.editor.authorization).set("Content-Type", "application/json").send("{");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "Payload must be valid JSON" });
  });

  it("more than 100 objects is a 400 and nothing is created; exactly 100 is accepted", async () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `Country ${i}`, location_type_code: "country" }));
    await refused({ objects: items(101) });
    const res = await app.patch({ objects: items(100) });
    expect(res.status).toBe(202);
    expect(res.body).toHaveLength(100);
    expect(await countLocations(app)).toBe(100);
  });

  it("an empty list is 202 with []", async () => {
    const res = await app.patch({ objects: [] });
    expect(res.status).toBe(202);
    expect(res.body).toEqual([]);
  });
});

describe("202 with the JSON array of ids in request order; location_id updates, others create", () => {
  it("a mix of creates and updates", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    const uganda = await app.createLocation({ name: "Uganda", location_type_code: "country", site_code: "ug" });
    const res = await app.patch({
      objects: [
        { name: "Tanzania", location_type_code: "country", site_code: "tz" },
        { location_id: uganda.location_id, name: "Republic of Uganda", latitude: "1.37" },
        { name: "Coast", location_type_code: "state", parent_location_id: kenya.location_id },
        { location_id: kenya.location_id, location_data: { iso: "KE" } },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body).toHaveLength(4);
    const [tz, ug, coast, ke] = res.body as string[];
    expect(ug).toBe(uganda.location_id);
    expect(ke).toBe(kenya.location_id);
    expect(await read(tz)).toMatchObject({ name: "Tanzania", site_code: "tz", parent_location_id: null });
    expect(await read(ug)).toMatchObject({ name: "Republic of Uganda", latitude: "1.37", site_code: "ug" });
    expect(await read(coast)).toMatchObject({ name: "Coast", parent_location_id: kenya.location_id, location_type_code: "state" });
    expect(await read(ke)).toMatchObject({ name: "Kenya", location_data: { iso: "KE" } });
    expect(await countLocations(app)).toBe(4);
  });
});

describe("atomic: one bad item → 400 {error: <first failure>} and the database byte-for-byte unchanged", () => {
  it("a bad create after good creates and updates", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    await refused(
      {
        objects: [
          { name: "Tanzania", location_type_code: "country" },
          { location_id: kenya.location_id, name: "Renamed Kenya", site_code: "ken" },
          { name: "Nowhere", location_type_code: "planet" },
        ],
      },
      "LocationType 'planet' not found",
    );
  });

  it("the first of several failures is the one reported", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    await refused(
      {
        objects: [
          { name: "Fine", location_type_code: "country" },
          { name: "Orphan", location_type_code: "state" },
          { name: "X", location_type_code: "planet" },
          { location_id: kenya.location_id, site_code: "bad code" },
        ],
      },
      "Location type not valid for the selected parent.",
    );
  });

  it("each item is validated like create or update, with the same messages", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    const zone = await app.createLocation({ name: "Zone", location_type_code: "zone" });
    await refused(
      { objects: [{ location_type_code: "country" }] },
      "'name' and 'location_type_code' are required fields when creating a new location.",
    );
    await refused({ objects: [{ name: "A", location_type_code: "country", colour: "red" }] }, "Invalid fields were included in request: ['colour'].");
    await refused({ objects: [{ location_id: kenya.location_id, colour: "red" }] }, "Invalid fields were included in request: ['colour'].");
    await refused(
      { objects: [{ name: "A", location_type_code: "state", parent_location_id: "00000000-0000-4000-8000-000000000000" }] },
      "Could not find parent location with the given ID.",
    );
    await refused(
      { objects: [{ name: "A", location_type_code: "state", parent_location_id: zone.location_id }] },
      "The selected parent location cannot have child locations!",
    );
    await refused({ objects: [{ name: "Kenya", location_type_code: "zone" }] }, "Location with same name and parent already exists.");
    await refused({ objects: [{ name: "A", location_type_code: "country", site_code: "KE" }] }, "another location already uses this site code");
    await refused(
      { objects: [{ name: "A", location_type_code: "country", site_code: "a b" }] },
      "The site code cannot contain spaces or special characters.",
    );
    await refused({ objects: [{ name: "A", location_type_code: "country", location_data: "x" }] });
    await refused({ objects: [{ location_id: "00000000-0000-4000-8000-000000000000", name: "A" }] });
    await refused({ objects: ["not an object"] });
  });
});

describe("each item's fields are checked whole, type then value, in field order", () => {
  it("of two mistakes in different fields of a create or an update item, the first field's is answered", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    for (const { body, error } of TWO_MISTAKES) {
      await refused({ objects: [{ name: "Fine", location_type_code: "country" }, body] }, error);
      await refused({ objects: [{ location_id: kenya.location_id, ...body }] }, error);
    }
  });
});

describe("items see the effects of the items before them", () => {
  it("site_code uniqueness across items, case-insensitively", async () => {
    await refused(
      {
        objects: [
          { name: "A", location_type_code: "country", site_code: "dup" },
          { name: "B", location_type_code: "country", site_code: "DUP" },
        ],
      },
      "another location already uses this site code",
    );
  });

  it("sibling names across items", async () => {
    await refused(
      {
        objects: [
          { name: "A", location_type_code: "country" },
          { name: "A", location_type_code: "zone" },
        ],
      },
      "Location with same name and parent already exists.",
    );
  });

  it("a site code freed by an earlier update may be taken by a later create", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    const res = await app.patch({
      objects: [
        { location_id: kenya.location_id, site_code: "ken" },
        { name: "Kenia", location_type_code: "zone", site_code: "ke" },
      ],
    });
    expect(res.status).toBe(202);
    expect((await read(res.body[1])).site_code).toBe("ke");
    expect((await read(kenya.location_id)).site_code).toBe("ken");
  });

  it("generated site codes count earlier items: denver, denver1", async () => {
    const res = await app.patch({
      objects: [
        { name: "Denver", location_type_code: "country" },
        { name: "DENVER", location_type_code: "zone" },
      ],
    });
    expect(res.status).toBe(202);
    expect((await read(res.body[0])).site_code).toBe("denver");
    expect((await read(res.body[1])).site_code).toBe("denver1");
  });

  it("two updates of one location apply in order", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const res = await app.patch({
      objects: [
        { location_id: kenya.location_id, name: "First" },
        { location_id: kenya.location_id, latitude: "2.0" },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual([kenya.location_id, kenya.location_id]);
    expect(await read(kenya.location_id)).toMatchObject({ name: "First", latitude: "2.0" });
  });

  it("a type change refused because an earlier item gave the location a child", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    await refused({
      objects: [
        { name: "Coast", location_type_code: "state", parent_location_id: kenya.location_id },
        { location_id: kenya.location_id, location_type_code: "zone" },
      ],
    });
    expect(await byName("Coast")).toEqual([]);
  });
});

describe("permissions", () => {
  it("a reader gets 403 and nothing changes", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const before = await dump();
    const res = await app
      .http()
      .patch(LOCATIONS)
      .set("Authorization", app.reader.authorization)
      .send({
        objects: [
          { name: "New", location_type_code: "country" },
          { location_id: kenya.location_id, name: "X" },
        ],
      });
    expect(res.status).toBe(403);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(await dump()).toEqual(before);
  });

  it("no credentials is 401", async () => {
    const res = await app.http().patch(LOCATIONS).send({ objects: [] });
    expect(res.status).toBe(401);
  });
});
