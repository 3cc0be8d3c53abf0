import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { HostileSuite } from "../helpers/hostile-suite.ts";
import { seedLocationDomain } from "../helpers/locations.ts";
import {
  deepJson,
  deepValueText,
  hostileJsonValue,
  hostileString,
  mutatedObject,
  offsetMinutes,
  pathSegment,
  queryString,
  rawBody,
  runs,
  withOffset,
  wrongValue,
} from "../helpers/arbitraries.ts";
import { badAnswer, badGraphQLAnswer, changedTables, snapshot } from "../helpers/invariants.ts";
import { rawRequest, type RawResponse } from "../helpers/raw-http.ts";

/**
 * Issue #7 part 1, Location API v2 (and the location type list): hostile input to list, detail,
 * create, update and bulk PATCH. Each answer is below 500; JSON in the `{"error": …}` shape when
 * refused (successful reads may be XML, the API's default); a refused write changes no table.
 * One app for the file; numRuns are explicit and add up to LOCATION_INPUTS.
 */

const N = {
  list: 150,
  detail: 120,
  create: 150,
  update: 120,
  bulk: 100,
  rawBodies: 100,
  deepValues: 50,
  dateOffsets: 50,
};
const LOCATION_INPUTS = Object.values(N).reduce((a, b) => a + b, 0);

const BASE = "/a/demo/api/location/v2/";
const LIST_KEYS = [
  "limit",
  "offset",
  "format",
  "order_by",
  "site_code",
  "name",
  "location_type_code",
  "parent_location_id",
  "last_modified.gte",
  "last_modified.gt",
  "last_modified.lt",
  "last_modified.lte",
  "last_modified",
  "fields",
];

const suite = new HostileSuite(BASE);
const { tally } = suite;
let app: TestApp;
let editor: TestUser;
let base: string;
const ids: string[] = [];

function send(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return suite.send(method, path, body, { ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers });
}

async function checkWrite(method: string, path: string, body: string, headers: Record<string, string> = {}): Promise<void> {
  const label = `${method} ${path} ${body.slice(0, 300)}`;
  await suite.checkWrite(
    label,
    () => send(method, path, body, headers),
    (res) => badAnswer(res, "location", { allowXml: true }),
  );
}

const existingId = () => fc.constantFrom(...ids);
const decimal = fc.oneof(
  fc.double({ min: -180, max: 180, noNaN: true }).map(String),
  fc.constantFrom("0", "-0.5", "+1.25", " 12.5 ", "1e5", "12345678901.5", "1.12345678901", ".5", "5.", "--1", "NaN"),
);
const locationFields = (): Record<string, fc.Arbitrary<unknown>> => ({
  name: fc.string({ maxLength: 12 }),
  location_type_code: fc.constantFrom("country", "state", "district", "facility", "zone", "nosuch"),
  site_code: fc.oneof(fc.string({ unit: fc.constantFrom("a", "B", "_", "-", "1"), maxLength: 8 }), hostileString),
  latitude: fc.oneof(decimal, fc.constant(null)),
  longitude: fc.oneof(decimal, fc.constant(null)),
  location_data: fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string({ maxLength: 5 }), wrongValue), { maxKeys: 3 }),
  parent_location_id: fc.oneof(existingId(), fc.constant(""), fc.constant(null), fc.uuid().map(String)),
  location_id: fc.oneof(existingId(), fc.uuid().map(String)),
});
const formatHeaders = fc.constantFrom<Record<string, string>>(
  {},
  { Accept: "application/json" },
  { Accept: "application/xml" },
  { Accept: "text/xml;q=0.5, application/json;q=0.9" },
  { Accept: "application/json;q=abc" },
  { Accept: "*/*" },
  { Accept: "\u00ff\u00fe" },
);

describe(`Location API v2 under hostile input (${LOCATION_INPUTS} inputs)`, () => {
  beforeAll(async () => {
    await suite.start(async (built) => {
      await seedLocationDomain(built);
      return createUser(built, { domain: "demo", permissions: ["access_api", "edit_locations"] });
    });
    ({ app, base, user: editor } = suite);
    const create = async (fields: Record<string, unknown>) => {
      const res = await send("POST", "", JSON.stringify(fields));
      expect(res.status, res.text).toBe(201);
      return (res.json as { location_id: string }).location_id;
    };
    const country = await create({ name: "Land", location_type_code: "country" });
    const state = await create({ name: "State", location_type_code: "state", parent_location_id: country });
    const district = await create({ name: "District", location_type_code: "district", parent_location_id: state });
    const facility = await create({ name: "Clinic", location_type_code: "facility", parent_location_id: district });
    ids.push(country, state, district, facility);
  });
  afterAll(() => suite.close());

  it(`list: ${N.list} odd query strings and Accept headers`, async () => {
    suite.current = "list";
    await fc.assert(
      fc.asyncProperty(queryString(LIST_KEYS), formatHeaders, async (query, headers) => {
        const res = await send("GET", query, undefined, headers);
        expect(badAnswer(res, "location", { allowXml: true }), `GET ${query}`).toBeUndefined();
      }),
      runs(N.list),
    );
  });

  it(`detail and location types: ${N.detail} odd path segments and query strings`, async () => {
    suite.current = "detail";
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          pathSegment,
          existingId(),
          fc.array(pathSegment, { minLength: 2, maxLength: 3 }).map((s) => s.join("/")),
        ),
        queryString(["format", "limit", "fields"]),
        formatHeaders,
        fc.boolean(),
        async (segment, query, headers, types) => {
          const res = types
            ? await rawRequest(base, {
                method: "GET",
                path: `/a/demo/api/location_type/v1/${segment}${query}`,
                headers: { Authorization: editor.authorization, ...headers },
              }).then((r) => (tally.add(suite.current, r.status), r))
            : await send("GET", `${segment}${query}`, undefined, headers);
          expect(badAnswer(res, "location", { allowXml: true }), `GET ${types ? "location_type/v1/" : ""}${segment}${query}`).toBeUndefined();
        },
      ),
      runs(N.detail),
    );
  });

  it(`create (POST): ${N.create} payloads with wrong types, odd strings and unknown keys`, async () => {
    suite.current = "create";
    await fc.assert(
      fc.asyncProperty(
        mutatedObject({ name: "Place", location_type_code: "state", parent_location_id: ids[0] }, locationFields()),
        fc.oneof(fc.constant(""), queryString(["format"])),
        async (body, query) => checkWrite("POST", query, JSON.stringify(body)),
      ),
      runs(N.create),
    );
  });

  it(`update (PUT {location_id}): ${N.update} hostile payloads and ids`, async () => {
    suite.current = "update";
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 3, arbitrary: existingId() }, { weight: 1, arbitrary: pathSegment }),
        mutatedObject({ name: "Renamed" }, locationFields()),
        async (id, body) => checkWrite("PUT", id, JSON.stringify(body)),
      ),
      runs(N.update),
    );
  });

  it(`bulk PATCH: ${N.bulk} lists of hostile items, all or nothing`, async () => {
    suite.current = "bulk PATCH";
    const item = fc.oneof(
      mutatedObject({ name: "Bulk", location_type_code: "zone" }, locationFields()),
      mutatedObject({ name: "Renamed" }, locationFields()).map((o) => ({ location_id: ids[1], ...o })),
      hostileJsonValue,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 5, arbitrary: fc.array(item, { minLength: 1, maxLength: 5 }).map((objects) => ({ objects })) },
          { weight: 2, arbitrary: item.map((bad) => ({ objects: [{ name: "First", location_type_code: "zone" }, bad] })) },
          {
            weight: 1,
            arbitrary: fc
              .integer({ min: 99, max: 102 })
              .map((n) => ({ objects: Array.from({ length: n }, (_, i) => ({ name: `z${i}`, location_type_code: "zone", latitude: "x" })) })),
          },
          { weight: 1, arbitrary: mutatedObject({ objects: [] }, { objects: fc.array(item, { maxLength: 2 }) }) },
        ),
        async (body) => checkWrite("PATCH", "", JSON.stringify(body)),
      ),
      runs(N.bulk),
    );
  });

  it(`raw bodies: ${N.rawBodies} malformed JSON, deep nesting, huge and binary bodies on every write`, async () => {
    suite.current = "raw bodies";
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<[string, () => string]>(["POST", () => ""], ["PATCH", () => ""], ["PUT", () => ids[2]]),
        fc.oneof(rawBody, deepJson),
        async ([method, path], body) => checkWrite(method, path(), body),
      ),
      runs(N.rawBodies),
    );
  });

  it(`F8: ${N.deepValues} values nested 1 to 10,000 deep in every JSON-valued field (REST and GraphQL): 400, echo cut, nothing saved`, async () => {
    suite.current = "F8 deep values";
    const bodies = (deep: string): [string, string, string][] => [
      ["POST", "", `{"name":${deep},"location_type_code":"country"}`],
      ["POST", "", `{"name":"N","location_type_code":${deep}}`],
      ["POST", "", `{"name":"N","location_type_code":"country","latitude":${deep}}`],
      ["POST", "", `{"name":"N","location_type_code":"country","longitude":${deep}}`],
      ["POST", "", `{"name":"N","location_type_code":"country","site_code":${deep}}`],
      ["POST", "", `{"name":"N","location_type_code":"country","location_data":${deep}}`],
      ["POST", "", `{"name":"N","location_type_code":"country","location_data":{"k":${deep}}}`],
      ["PUT", ids[1], `{"parent_location_id":${deep}}`],
      ["PUT", ids[1], `{"latitude":${deep}}`],
      ["PATCH", "", `{"objects":[{"location_id":${deep}}]}`],
      ["PATCH", "", `{"objects":[{"name":"N","location_type_code":"zone","site_code":${deep}}]}`],
      ["PATCH", "", `{"objects":[${deep}]}`],
    ];
    await fc.assert(
      fc.asyncProperty(deepValueText, fc.nat(bodies("").length - 1), fc.boolean(), async ({ text }, which, nested) => {
        const before = await snapshot(app.db);
        const [method, path, body] = bodies(text)[which];
        const res = await send(method, path, body);
        const shown = `${method} ${path} ${body.slice(0, 200)}`;
        expect(badAnswer(res, "location"), shown).toBeUndefined();
        expect(res.status, shown).toBe(400);
        expect(res.text.length, shown).toBeLessThan(2_000);
        const variable = nested ? `{"k":${text}}` : text;
        const gql = await rawRequest(base, {
          method: "POST",
          path: "/graphql",
          headers: { Authorization: editor.authorization, "Content-Type": "application/json" },
          body: `{"query":"mutation($d: JSONObject) { createLocation(domain: \\"demo\\", input: {name: \\"N\\", locationTypeCode: \\"country\\", locationData: $d}) { locationId } }","variables":{"d":${variable}}}`,
        });
        tally.add(suite.current, gql.status);
        expect(badGraphQLAnswer(gql), variable.slice(0, 200)).toBeUndefined();
        expect((gql.json as { errors?: unknown[] }).errors?.length, gql.text.slice(0, 300)).toBe(1);
        expect(changedTables(before, await snapshot(app.db))).toEqual([]);
      }),
      runs(N.deepValues),
    );
  });

  it(`F10: ${N.dateOffsets} last_modified filters at any offset from -23:59 to +23:59 bound the instants exactly (REST and GraphQL)`, async () => {
    suite.current = "F10 date offsets";
    const all = await send("GET", "?format=json&limit=0");
    const locations = (all.json as { objects: { location_id: string; last_modified: string }[] }).objects;
    const instant = (naive: string) => Date.parse(`${naive.slice(0, 23)}Z`);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...locations),
        offsetMinutes,
        fc.constantFrom(-1, 0, 1),
        fc.constantFrom("gt", "gte", "lt", "lte"),
        async (pivot, minutes, deltaMs, op) => {
          const at = instant(pivot.last_modified) + deltaMs;
          const value = withOffset(at, minutes);
          const holds = (t: number) => (op === "gt" ? t > at : op === "gte" ? t >= at : op === "lt" ? t < at : t <= at);
          const expected = locations.filter((l) => holds(instant(l.last_modified))).map((l) => l.location_id);
          const known = (id: string) => locations.some((l) => l.location_id === id);
          const res = await send("GET", `?format=json&limit=0&last_modified.${op}=${encodeURIComponent(value)}`);
          expect(res.status, `last_modified.${op}=${value}: ${res.text.slice(0, 200)}`).toBe(200);
          const got = (res.json as { objects: { location_id: string }[] }).objects.map((l) => l.location_id).filter(known);
          expect(got.sort(), `last_modified.${op}=${value}`).toEqual([...expected].sort());
          const gql = await rawRequest(base, {
            method: "POST",
            path: "/graphql",
            headers: { Authorization: editor.authorization, "Content-Type": "application/json" },
            body: JSON.stringify({
              query: 'query($r: DateRange) { locations(domain: "demo", filter: {lastModified: $r}, first: 5000) { nodes { locationId } } }',
              variables: { r: { [op]: value } },
            }),
          });
          tally.add(suite.current, gql.status);
          expect(badGraphQLAnswer(gql)).toBeUndefined();
          const nodes = (gql.json as { data: { locations: { nodes: { locationId: string }[] } } }).data.locations.nodes.map((n) => n.locationId);
          expect(nodes.filter(known).sort(), `GraphQL lastModified.${op}=${value}`).toEqual([...expected].sort());
        },
      ),
      runs(N.dateOffsets),
    );
  });

  it(`summary: ${LOCATION_INPUTS} inputs planned, all sent`, () => {
    console.log(`Location API: ${tally.total()} hostile requests\n${tally}`);
    expect(tally.total()).toBeGreaterThanOrEqual(LOCATION_INPUTS);
  });
});
