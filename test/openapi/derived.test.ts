import { describe, expect, it, vi } from "vitest";
import { allowedFields, type WriteTarget } from "../../src/cases/case.actions.ts";
import { DATE_FIELDS, EXACT_FIELDS, RANGE_OPS } from "../../src/cases/case.query.ts";
import { parseListParams, parseSelection } from "../../src/cases/case.query.rest.ts";
import { parseLocationFields, parseLocationQuery } from "../../src/locations/location.request.rest.ts";
import { openApiDocument } from "../../src/gateway/openapi.ts";

/**
 * The OpenAPI document is derived from the grammar the REST faces run (src/openapi/document.ts):
 * what a parser accepts is what the document lists, name for name, and the other way round.
 */

type Json = Record<string, any>;
const doc = JSON.parse(JSON.stringify(openApiDocument)) as Json;
const opOf = (path: string, method: string) => doc.paths[path][method] as Json;

/** The query parameters of an operation: fixed names, and the patterns of its families. */
function queryOf(op: Json) {
  const query = (op.parameters as Json[]).filter((p) => p.in === "query");
  const names = query.filter((p) => !p.schema.propertyNames).map((p) => p.name as string);
  const patterns = query.filter((p) => p.schema.propertyNames).map((p) => new RegExp(p.schema.propertyNames.pattern, "u"));
  const documents = (name: string) => names.includes(name) || patterns.some((p) => p.test(name));
  return { query, names, documents };
}

/** A value each schema takes (the parsers then read it as valid). */
function sample(schema: Json): string {
  const one = schema.type === "array" ? schema.items : schema;
  if (one.enum) return String(one.enum.at(-1));
  if (one.type === "integer") return String(one.default ?? one.minimum ?? 1);
  return "2024-01-01";
}

const accepts = (parse: () => unknown) => {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
};

/** The names the contract gives the list's filters (CONTRACT §2 "List"), from the typed query's own lists. */
const CONTRACT_NAMES = ["limit", "closed", ...EXACT_FIELDS, ...DATE_FIELDS.flatMap((f) => RANGE_OPS.map((op) => `${f}.${op}`))];

/** The contract's names, names near the documented ones, and names no grammar takes. */
const probes = (names: string[]) => [
  ...CONTRACT_NAMES,
  ...names,
  ...names.flatMap((n) => [`${n}x`, `x${n}`, `${n}.gte`, `${n}.`, n.toUpperCase()]),
  ...["properties.x", "properties.", "indices.parent", "indices.", "fields.properties", "exclude.indices.parent", "fields.", "fieldsx"],
  ...["last_modified", "last_modified.eq", "date_closed.gte.x", "toString", "__proto__", "constructor", "cursorx", "", "colour"],
];

describe("the Case API's list parameters", () => {
  const list = queryOf(opOf("/a/{domain}/api/case/v2/", "get"));

  it("every parameter the document lists, with a value of its schema, parseListParams accepts (cursor is the route's)", () => {
    for (const p of list.query) {
      if (p.name === "cursor") continue;
      const name = p.schema.propertyNames ? (p.name === "filters" ? "properties.x" : "fields.properties") : p.name;
      const value = p.schema.propertyNames ? "x" : sample(p.schema);
      expect([name, accepts(() => parseListParams([[name, value]]))]).toEqual([name, true]);
    }
  });

  it("parseListParams accepts a name exactly when the document lists it", () => {
    const valueFor = (name: string) => sample(list.query.find((p) => p.name === name)?.schema ?? { type: "string" });
    for (const name of probes(list.names).filter((n) => n !== "cursor")) {
      expect([name, accepts(() => parseListParams([[name, valueFor(name)]]))]).toEqual([name, list.documents(name)]);
    }
  });

  it("single reads and writes take field selection only, as the document says", () => {
    const single = queryOf(opOf("/a/{domain}/api/case/v2/{case_id}", "get"));
    for (const name of probes([...single.names, ...list.names])) {
      expect([name, accepts(() => parseSelection([[name, "x"]]))]).toEqual([name, single.documents(name)]);
    }
  });
});

describe("the Case API's write keys", () => {
  it("the keys CaseWrite documents are the keys some write target allows", () => {
    const targets: [WriteTarget, unknown, unknown][] = [
      [{ kind: "create" }, undefined, undefined],
      [{ kind: "update", caseId: "c" }, undefined, undefined],
      [{ kind: "upsert", externalId: "e" }, undefined, undefined],
      [{ kind: "put" }, undefined, undefined],
      [{ kind: "bulk" }, true, undefined],
      [{ kind: "bulk" }, false, "c"],
    ];
    const allowed = new Set(targets.flatMap(([target, create, caseId]) => [...allowedFields(target, create, caseId)]));
    expect([...allowed].sort()).toEqual(Object.keys(doc.components.schemas.CaseWrite.properties).sort());
  });
});

describe("the Location API's list parameters and write keys", () => {
  const list = queryOf(opOf("/a/{domain}/api/location/v2/", "get"));

  it("parseLocationQuery reads exactly the parameters the document lists (format is the route's, read before it)", () => {
    const get = vi.spyOn(Map.prototype, "get");
    try {
      parseLocationQuery([]);
      const read = new Set(get.mock.calls.map(([name]) => String(name)));
      expect([...read].sort()).toEqual(list.names.filter((n) => n !== "format").sort());
    } finally {
      get.mockRestore();
    }
  });

  it("each listed parameter, with a value of its schema, changes the query", () => {
    const plain = parseLocationQuery([]);
    for (const p of list.query.filter((q) => q.name !== "format")) {
      const value = p.name === "limit" ? "7" : p.name === "offset" ? "3" : sample(p.schema);
      expect([p.name, parseLocationQuery([[p.name, value]])]).not.toEqual([p.name, plain]);
    }
  });

  it("a location body takes exactly the keys LocationWrite documents", () => {
    const properties = doc.components.schemas.LocationWrite.properties as Record<string, Json>;
    const valueFor = (schema: Json) => (schema.type === "object" ? {} : Array.isArray(schema.type) ? null : "a");
    for (const [key, schema] of Object.entries(properties)) {
      expect([key, accepts(() => parseLocationFields({ [key]: valueFor(schema) }, false))]).toEqual([key, true]);
    }
    expect(() => parseLocationFields({ colour: "red" }, false)).toThrow(/Invalid fields/);
  });
});

describe("the serializers' key tables", () => {
  it("the response schemas list the serializers' keys in their order", async () => {
    const { CASE_KEYS } = await import("../../src/cases/case.serializer.ts");
    const { LOCATION_KEYS } = await import("../../src/locations/location.serializer.ts");
    const { RESULT_KEYS, STATUS_KEYS } = await import("../../src/multimedia/job.serializer.ts");
    const { schemas } = doc.components;
    expect(Object.keys(schemas.Case.properties)).toEqual(Object.keys(CASE_KEYS));
    expect(Object.keys(schemas.Location.properties)).toEqual(Object.keys(LOCATION_KEYS));
    expect(Object.keys(schemas.MultimediaStatusComplete.properties)).toEqual([...Object.keys(STATUS_KEYS), ...Object.keys(RESULT_KEYS)]);
  });
});
