import fc from "fast-check";
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  getNamedType,
  isLeafType,
  type GraphQLField,
  type GraphQLInputType,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";
import { openApiDocument } from "../../src/gateway/openapi.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { encodeLoosely, hostileString, runs } from "../helpers/arbitraries.ts";
import { StatusTally } from "../helpers/invariants.ts";
import { NO_RATE_LIMIT, rawRequest, type RawResponse } from "../helpers/raw-http.ts";

/**
 * CONTRACT §7.5, property-based: every REST route of the OpenAPI document and every GraphQL query
 * and mutation of the schema, with generated values at the documented limits in every field (1 MB
 * strings, strings of every Unicode plane, NUL, lone surrogates, JSON nested to the depth limit and
 * beyond, objects with thousands of keys, long arrays). Each answer is below 500, and after each
 * one GET /livez answers within 1 second: no value makes the process (its log line included, at
 * the default level) stall. numRuns are explicit.
 */

const N = { rest: 160, graphql: 160 };
const LIVEZ_WITHIN_MS = 1_000;
/**
 * Node refuses a request head (request line and headers) over 16 KiB with a bare 431: the path
 * takes up to HEAD_ROOM characters of it, an extra header half as many
 */
const HEAD_ROOM = 9_000;

let app: TestApp;
let member: TestUser;
let base: string;
const tally = new StatusTally();

beforeAll(async () => {
  app = await build(NO_RATE_LIMIT);
  await createDomain(app, "demo");
  member = await createUser(app, {
    domain: "demo",
    permissions: ["access_api", "edit_data", "view_data", "edit_locations", "view_locations", "edit_apps"],
  });
  base = await app.server.listen(0, "127.0.0.1");
});

afterAll(async () => {
  console.log(`Liveness: ${tally.total()} hostile requests\n${tally}`);
  await app?.close();
});

// ---- values at the limits ------------------------------------------------------------------------

const MB = 1_000_000;
/** one code point from each of the 17 Unicode planes, the surrogate range's edges included */
const everyPlane = fc
  .array(
    fc.integer({ min: 0, max: 16 }).chain((plane) => fc.integer({ min: plane * 0x10000, max: plane * 0x10000 + 0xffff })),
    {
      minLength: 1,
      maxLength: 64,
    },
  )
  .map((points) => points.map((p) => (p >= 0xd800 && p <= 0xdfff ? String.fromCharCode(p) : String.fromCodePoint(p))).join(""));

const limitString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: hostileString },
  { weight: 2, arbitrary: everyPlane },
  {
    weight: 1,
    arbitrary: fc.constantFrom("v".repeat(MB), "a:".repeat(MB / 2), "x://u:".repeat(MB / 6), "password=".repeat(MB / 9), "\u0000".repeat(MB)),
  },
  { weight: 1, arbitrary: everyPlane.map((s) => s.repeat(Math.ceil(MB / (2 * s.length)))) },
);

const limitJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: limitString },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1e308, true, null) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 5_000 }).map((depth) => nested(depth)) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 100, max: 20_000 }).map((keys) => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, "v"]))),
  },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 100_000 }).map((length) => Array.from({ length }, (_, i) => String(i))) },
);

/**
 * JSON nested `depth` levels deep (objects and arrays in turn), written as text only when sent
 * (toJson): neither JSON.stringify nor fast-check's report of a counterexample could recurse
 * through such a value without overflowing the stack.
 */
class Nested {
  constructor(readonly depth: number) {}
  text(): string {
    const opens = Array.from({ length: this.depth }, (_, i) => (i % 2 ? "[" : '{"a":'));
    return `${opens.join("")}"leaf"${opens
      .reverse()
      .map((open) => (open === "[" ? "]" : "}"))
      .join("")}`;
  }
  [fc.toStringMethod](): string {
    return `nested(${this.depth})`;
  }
}
const nested = (depth: number) => new Nested(depth);

/** JSON text of a value that may hold Nested values anywhere. */
function toJson(value: unknown): string {
  const deep: Nested[] = [];
  const text = JSON.stringify(value, (_key, item: unknown) => (item instanceof Nested ? `@@nested-${deep.push(item) - 1}@@` : item));
  return text.replace(/"@@nested-(\d+)@@"/g, (_, i: string) => deep[Number(i)]!.text());
}

/** a value for a URL: at the limit of what a request head may carry */
const urlValue = limitString.map((s) => encodeLoosely(s.slice(0, HEAD_ROOM)).slice(0, HEAD_ROOM));

// ---- the checks after every request ----------------------------------------------------------------

async function livezWithin(): Promise<number> {
  const started = performance.now();
  const res = await rawRequest(base, { method: "GET", path: "/livez" });
  expect(res.status).toBe(200);
  return performance.now() - started;
}

async function expectAnsweredAndLive(res: RawResponse, label: string): Promise<void> {
  tally.add(label, res.status);
  // the one documented 500: a multimedia job that failed (CONTRACT §4)
  const documentedFailure = res.status === 500 && String(res.text).includes("Multimedia processing task failed");
  expect(res.status < 500 || documentedFailure, `${label}: ${res.status} ${res.text.slice(0, 300)}`).toBe(true);
  expect(await livezWithin(), `${label}: /livez after it`).toBeLessThan(LIVEZ_WITHIN_MS);
}

// ---- REST: every route of the OpenAPI document ------------------------------------------------------

type Operation = { parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema?: unknown }> } };
interface Route {
  method: string;
  path: string;
  query: string[];
  body?: { type: string; fields: string[] };
}

const schemas = openApiDocument.components.schemas as Record<string, unknown>;
/** the property names a body schema documents, through $refs, arrays and alternatives */
function fieldsOf(schema: unknown, seen = new Set<unknown>()): string[] {
  if (!schema || typeof schema !== "object" || seen.has(schema)) return [];
  seen.add(schema);
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === "string") return fieldsOf(schemas[s.$ref.split("/").pop()!], seen);
  const own = Object.keys((s.properties as object) ?? {});
  const nestedFields = [s.items, ...((s.oneOf as unknown[]) ?? []), ...((s.anyOf as unknown[]) ?? []), ...((s.allOf as unknown[]) ?? [])].flatMap(
    (part) => fieldsOf(part, seen),
  );
  return [...new Set([...own, ...nestedFields])];
}

const ROUTES: Route[] = Object.entries(openApiDocument.paths).flatMap(([path, item]) =>
  Object.entries(item as Record<string, Operation>)
    .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
    .map(([method, op]) => {
      const [type, content] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
      return {
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
        ...(type ? { body: { type, fields: fieldsOf(content?.schema) } } : {}),
      };
    }),
);

function pathOf(route: Route, segments: string[]): string {
  let i = 0;
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === "domain" ? "demo" : segments[i++ % segments.length] || "x"));
}

function bodyOf(route: Route, values: unknown[], asList: boolean): { body: string | Buffer; type: string } {
  const fields = route.body!.fields.length ? route.body!.fields : ["value"];
  const object = Object.fromEntries(fields.map((field, i) => [field, values[i % values.length]]));
  if (route.body!.type === "application/json") return { body: toJson(asList ? [object, object] : object), type: "application/json" };
  if (route.body!.type === "application/x-www-form-urlencoded") {
    const form = Object.entries(object).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : toJson(v)]);
    return { body: new URLSearchParams(form).toString(), type: route.body!.type };
  }
  // multipart: every field as a text part, and a file whose name and content are hostile too
  const boundary = "----liveness";
  const parts = Object.entries({ ...object, app_name: values[0], bulk_upload_file: values[1] ?? "", file: values[2] ?? "" }).map(([name, value]) => {
    const text = typeof value === "string" ? value : toJson(value);
    const file =
      name === "bulk_upload_file" || name === "file"
        ? `; filename="${String(values[0])
            .slice(0, 200)
            .replace(/["\r\n]/g, "_")}"`
        : "";
    return `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file}\r\n\r\n${text}\r\n`;
  });
  return { body: Buffer.from(`${parts.join("")}--${boundary}--\r\n`, "utf8"), type: `multipart/form-data; boundary=${boundary}` };
}

describe("CONTRACT §7.5 property: no REST request, whatever it carries within the limits, stalls the server", () => {
  it("every route of the OpenAPI document: answered below 500, and /livez within 1 s after it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.array(urlValue, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), urlValue), { maxLength: 3 }),
        fc.array(limitJson, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        fc.option(
          urlValue.map((v) => v.slice(0, HEAD_ROOM / 2)),
          { nil: undefined },
        ),
        async (route, segments, queryPairs, values, asList, headerValue) => {
          const query = route.query.length ? queryPairs.map(([i, v]) => `${route.query[i % route.query.length]}=${v}`).join("&") : "";
          const path = `${pathOf(route, segments.map(encodeLoosely))}${query ? `?${query}` : ""}`.slice(0, HEAD_ROOM);
          const body = route.body ? bodyOf(route, values, asList) : undefined;
          const res = await rawRequest(base, {
            method: route.method,
            path,
            headers: {
              Authorization: member.authorization,
              ...(body ? { "Content-Type": body.type } : {}),
              ...(headerValue ? { "X-Note": headerValue.replace(/[^\x20-\x7e]/g, "?") } : {}),
            },
            body: body?.body,
          });
          await expectAnsweredAndLive(res, `${route.method} ${route.path}`);
        },
      ),
      runs(N.rest),
    );
  });
});

// ---- GraphQL: every query and mutation ------------------------------------------------------------

const schema = await buildGatewaySchema();
const FIELDS = [
  ...Object.values(schema.getQueryType()!.getFields()).map((field) => ({ kind: "query" as const, field })),
  ...Object.values(schema.getMutationType()!.getFields()).map((field) => ({ kind: "mutation" as const, field })),
].filter(({ field }) => !field.args.some((a) => getNamedType(a.type).name === "Upload"));

/** a value of an input type, at the limits: strings and JSON as above, lists long, numbers odd */
function valueFor(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  if (type instanceof GraphQLNonNull) return valueFor(type.ofType, depth);
  if (type instanceof GraphQLList) {
    return fc.oneof(
      { weight: 4, arbitrary: fc.array(valueFor(type.ofType, depth + 1), { maxLength: depth > 1 ? 1 : 3 }) },
      { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 100_000 }).map((n) => Array.from({ length: n }, (_, i) => `v${i}`)) },
    );
  }
  if (type instanceof GraphQLInputObjectType) {
    const fields = Object.values(type.getFields());
    return fc.record(Object.fromEntries(fields.map((f) => [f.name, valueFor(f.type, depth + 1)])), {
      requiredKeys: fields.filter((f) => f.type instanceof GraphQLNonNull).map((f) => f.name),
    });
  }
  if (type instanceof GraphQLEnumType) return fc.constantFrom(...type.getValues().map((v) => v.name));
  switch (type.name) {
    case "Int":
      return fc.constantFrom(0, -1, 1, 5000, 5001, 2 ** 31 - 1, -(2 ** 31));
    case "Float":
      return fc.constantFrom(0, -1, 1e308, 0.5);
    case "Boolean":
      return fc.boolean();
    case "JSONObject":
    case "JSON":
      return fc.dictionary(
        limitString.map((s) => s.slice(0, 64)),
        limitJson,
        { maxKeys: 4 },
      );
    default:
      return fc.oneof({ weight: 1, arbitrary: fc.constant("demo") }, { weight: 4, arbitrary: limitString });
  }
}

function documentFor(kind: "query" | "mutation", field: GraphQLField<unknown, unknown>): string {
  const vars = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(", ");
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(", ");
  const selection = isLeafType(getNamedType(field.type)) ? "" : " { __typename }";
  return `${kind} Op${vars ? `(${vars})` : ""} { ${field.name}${args ? `(${args})` : ""}${selection} }`;
}

describe("CONTRACT §7.5 property: no GraphQL operation, whatever it carries within the limits, stalls the server", () => {
  it("every query and mutation of the schema: answered below 500, and /livez within 1 s after it", async () => {
    const operation = fc.constantFrom(...FIELDS).chain(({ kind, field }) =>
      fc.record(Object.fromEntries(field.args.map((a) => [a.name, valueFor(a.type)])), { requiredKeys: [] }).map((variables) => ({
        label: `${kind} ${field.name}`,
        body: toJson({ query: documentFor(kind, field), variables }),
      })),
    );
    await fc.assert(
      fc.asyncProperty(operation, async ({ label, body }) => {
        const res = await rawRequest(base, {
          method: "POST",
          path: "/graphql",
          headers: { Authorization: member.authorization, "Content-Type": "application/json" },
          body,
        });
        await expectAnsweredAndLive(res, label);
      }),
      runs(N.graphql),
    );
  });
});
