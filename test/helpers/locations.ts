import type { Response } from "supertest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "./app.ts";

/**
 * An app with domain "demo", a type hierarchy country → state → district → facility (facility
 * has no child types) plus a second root type "zone", an editor (edit_locations) and a reader
 * (view_locations).
 */
export interface LocationTestApp extends TestApp {
  editor: TestUser;
  reader: TestUser;
  /** JSON requests as the editor; `path` is relative to /a/demo/api/location/v2/ */
  post(body: unknown, path?: string): Promise<Response>;
  put(path: string, body: unknown): Promise<Response>;
  patch(body: unknown): Promise<Response>;
  get(path: string): Promise<Response>;
  /** creates a location through the API (JSON) and returns it */
  createLocation(fields: Record<string, unknown>): Promise<Record<string, any>>;
}

/** CONTRACT §3 location serialization keys, in order. */
export const LOCATION_KEYS = [
  "domain",
  "last_modified",
  "latitude",
  "location_data",
  "location_id",
  "location_type_code",
  "location_type_name",
  "longitude",
  "name",
  "parent_location_id",
  "site_code",
];

export const LOCATIONS = "/a/demo/api/location/v2/";

/** The location types of the tests: country > state > district > facility, and zone (a second root). */
const LOCATION_TYPES = [
  ["country", "Country", null],
  ["state", "State", "country"],
  ["district", "District", "state"],
  ["facility", "Facility", "district"],
  ["zone", "Zone", null],
] as const;

/** The location types, in an existing domain. */
export async function seedLocationTypes(app: Pick<TestApp, "services" | "root">, domain: string): Promise<void> {
  const types = await app.services.locationTypes.in(app.root, domain, "admin");
  for (const [code, name, parentCode] of LOCATION_TYPES) await types.create({ code, name, parentCode });
}

/** The "demo" domain with its location types. */
export async function seedLocationDomain(app: Pick<TestApp, "services" | "root">): Promise<void> {
  await createDomain(app, "demo");
  await seedLocationTypes(app, "demo");
}

export async function buildLocationApp(wrapDb?: Parameters<typeof build>[1]): Promise<LocationTestApp> {
  const app = await build({}, wrapDb);
  await seedLocationDomain(app);
  const editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_locations"] });
  const reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations"] });
  const auth = editor.authorization;
  const post = (body: unknown, path = "") =>
    app
      .http()
      .post(`${LOCATIONS}${path}`)
      .set("Authorization", auth)
      .send(body as object);
  return {
    ...app,
    editor,
    reader,
    post,
    put: (path, body) =>
      app
        .http()
        .put(`${LOCATIONS}${path}`)
        .set("Authorization", auth)
        .send(body as object),
    patch: (body) =>
      app
        .http()
        .patch(LOCATIONS)
        .set("Authorization", auth)
        .send(body as object),
    get: (path) => app.http().get(`${LOCATIONS}${path}`).set("Authorization", auth),
    async createLocation(fields) {
      const res = await post(fields);
      if (res.status !== 201) throw new Error(`createLocation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
  };
}
