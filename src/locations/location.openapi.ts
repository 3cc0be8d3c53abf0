import {
  DOMAIN,
  json,
  jsonBody,
  jsonRouterOperation,
  jsonRouterPath,
  ok,
  operation,
  pathItem,
  pathParam,
  tastypieMeta,
  type FeatureDocument,
} from "../openapi/operations.ts";
import { arrayOf, nullable, ordered, queryParameter, ref, string, tableSchema, type Schema } from "../openapi/schema.ts";
import { FORMAT_PARAMETER, LIST_PARAMETERS, WRITE_KEYS } from "./location.request.rest.ts";
import { MAX_BULK_LOCATIONS } from "./location.rules.ts";
import { LOCATION_KEYS } from "./location.serializer.ts";

/**
 * The Location API v2 and the location types in the OpenAPI document (CONTRACT §3): parameters and
 * write keys from the grammar location.rest.ts runs, the location's keys from its serializer.
 */

const TAG = "Location API v2";
const LOCATIONS = "/a/{domain}/api/location/v2";

const formatParam = queryParameter(FORMAT_PARAMETER);

const XML_EXAMPLE_DETAIL =
  "<?xml version='1.0' encoding='utf-8'?>\n<object><domain>demo</domain><last_modified>2024-03-11T19:29:16.845849</last_modified>" +
  '<latitude type="null"/><location_data type="hash"/>…</object>';
const XML_EXAMPLE_LIST =
  "<?xml version='1.0' encoding='utf-8'?>\n<response><meta><limit type=\"integer\">20</limit>…</meta>" +
  '<objects type="list"><object>…</object></objects></response>';

const xml = (example: string) => ({
  "application/xml": {
    schema: {
      type: "string",
      description:
        'Tastypie XML: one child element per field, in the JSON order; null is an empty element with type="null"; ' +
        'objects carry type="hash", lists type="list", integers type="integer".',
    },
    example,
  },
});

/** JSON or XML (format, else Accept, else the route's own default). */
const locationOk = (status: string, description: string, schemaName: string, example: string) => ({
  [status]: { description, content: { ...json(ref(schemaName)), ...xml(example) } },
});

const locationWrite: Schema = {
  type: "object",
  description: "A location create (name and location_type_code required) or partial update. Any other key: 400.",
  properties: WRITE_KEYS,
  additionalProperties: false,
};

const schemas: Record<string, Schema> = {
  Location: tableSchema("A location, every key in this order (CONTRACT §3).", LOCATION_KEYS),
  LocationList: ordered("A page of locations.", { meta: tastypieMeta("locations"), objects: arrayOf(ref("Location")) }),
  LocationWrite: locationWrite,
  LocationBulkRequest: {
    type: "object",
    required: ["objects"],
    properties: {
      objects: {
        type: "array",
        maxItems: MAX_BULK_LOCATIONS,
        description: "items with location_id update that location, others create one",
        items: {
          type: "object",
          properties: { location_id: { type: "string" }, ...WRITE_KEYS },
          additionalProperties: false,
        },
      },
    },
  },
  LocationBulkResult: { type: "array", description: "The location ids, in request order.", items: { type: "string" } },
  LocationType: ordered("A location type of the domain.", {
    code: string("the code"),
    domain: string("the project space"),
    id: string("the id"),
    name: string("the name"),
    parent: nullable(string("the parent type's code; null for a root type")),
  }),
  LocationTypeList: ordered("Every location type of the domain.", {
    meta: tastypieMeta("location types"),
    objects: arrayOf(ref("LocationType")),
  }),
};

const paths = {
  [`${LOCATIONS}/`]: jsonRouterPath([DOMAIN], {
    get: jsonRouterOperation(TAG, "listLocations", {
      summary: "List locations",
      description: "XML unless `format=json` or an Accept naming application/json. Any other parameter is ignored.",
      parameters: [formatParam, ...LIST_PARAMETERS.map(queryParameter)],
      responses: locationOk("200", "A page of locations.", "LocationList", XML_EXAMPLE_LIST),
    }),
    post: jsonRouterOperation(TAG, "createLocation", {
      summary: "Create a location",
      parameters: [formatParam],
      requestBody: { required: true, content: jsonBody(ref("LocationWrite")) },
      responses: locationOk("201", "The location created.", "Location", XML_EXAMPLE_DETAIL),
    }),
    patch: jsonRouterOperation(TAG, "bulkLocations", {
      summary: `Create and update up to ${MAX_BULK_LOCATIONS} locations at once (atomic)`,
      requestBody: { required: true, content: jsonBody(ref("LocationBulkRequest")) },
      responses: { "202": ok("Every item written: the ids, in request order.", "LocationBulkResult") },
    }),
  }),
  [`${LOCATIONS}/{location_id}`]: jsonRouterPath([DOMAIN, pathParam("location_id", "the location's id")], {
    get: jsonRouterOperation(TAG, "getLocation", {
      summary: "One location",
      parameters: [formatParam],
      responses: locationOk("200", "The location.", "Location", XML_EXAMPLE_DETAIL),
    }),
    put: jsonRouterOperation(TAG, "updateLocation", {
      summary: "Update a location (partial)",
      parameters: [formatParam],
      requestBody: { required: true, content: jsonBody(ref("LocationWrite")) },
      responses: locationOk("200", "The location updated.", "Location", XML_EXAMPLE_DETAIL),
    }),
  }),
  "/a/{domain}/api/location_type/v1/": pathItem("plain", [DOMAIN], {
    get: operation("plain", TAG, "listLocationTypes", {
      summary: "The domain's location types",
      description: "Takes no parameter; any is ignored (Tastypie).",
      responses: { "200": ok("Every location type of the domain.", "LocationTypeList") },
    }),
  }),
};

export const locationDocument: FeatureDocument = {
  tag: { name: TAG, description: "Locations under /a/{domain}/api/location/v2/, types under location_type/v1/" },
  paths,
  schemas,
};
