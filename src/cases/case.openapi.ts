import {
  DOMAIN,
  json,
  jsonBody,
  jsonRouterOperation,
  jsonRouterPath,
  ok,
  pathParam,
  responseRef,
  type FeatureDocument,
  type Operation,
} from "../openapi/operations.ts";
import {
  arrayOf,
  integer,
  nullable,
  ordered,
  queryParameter,
  queryParameterFamily,
  ref,
  string,
  tableSchema,
  type Schema,
} from "../openapi/schema.ts";
import { MAX_BULK } from "./case.actions.ts";
import { DOTTED_SELECTION, SELECTION_PARAMETERS } from "./case.fields.ts";
import { BULK_FETCH_KEYS, WRITE_KEYS } from "./case.payload.rest.ts";
import { LIST_FILTERS, LIST_PARAMETERS } from "./case.query.rest.ts";
import { MAX_BULK_IDS } from "./case.read.service.ts";
import { CASE_INDEX_KEYS, CASE_KEYS } from "./case.serializer.ts";

/**
 * The Case Data API v2 in the OpenAPI document (CONTRACT §2): its paths, built from the grammar
 * case.rest.ts runs (the list's parameters, field selection, the write and bulk-fetch keys) and
 * its bodies from the serializer's key table, so that a parameter or key added there is
 * documented here with no second edit.
 */

const TAG = "Case Data API v2";
const CASES = "/a/{domain}/api/case/v2";

const selection = [...SELECTION_PARAMETERS.map(queryParameter), queryParameterFamily(DOTTED_SELECTION)];

const listParameters = [
  ...LIST_PARAMETERS.map(queryParameter),
  {
    ...queryParameter({
      name: "cursor",
      description: "the opaque cursor of a `next` link; with it, every other parameter is ignored",
      schema: { type: "string" },
    }),
    // machine-readable for the same: any other parameter beside it may be anything
    "x-ignores-other-parameters": true,
  },
  queryParameterFamily(LIST_FILTERS),
  ...selection,
];

/** Every Case API operation checks every query parameter's name: one it does not list is 400. */
const caseOperation = (id: string, op: Operation) => jsonRouterOperation(TAG, id, { ...op, unknownParameters: "refused" });

const caseWriteBody = (description: string) => ({ required: true, description, content: jsonBody(ref("CaseWriteRequest")) });

const caseWritten = {
  "200": {
    description: "Written: `case` for an object body, `cases` for a list.",
    content: json({ oneOf: [ref("CaseWriteResult"), ref("BulkCaseWriteResult")] }),
  },
};

/** The same keys with none required (a field selection keeps any subset, in the same order). */
function partial(schema: Schema, description: string, replace: Record<string, Schema> = {}): Schema {
  const { required: _all, ...rest } = schema;
  return { ...rest, description, properties: { ...(schema.properties as Record<string, Schema>), ...replace } };
}

const caseIndex = tableSchema("An index of a case: the case it points at.", CASE_INDEX_KEYS);
const fullCase = tableSchema("A case, every key in this order (CONTRACT §2 'Case serialization').", CASE_KEYS);

const schemas: Record<string, Schema> = {
  CaseIndex: caseIndex,
  Case: fullCase,
  SelectedCase: partial(fullCase, "A case after field selection (`fields`/`exclude`): any subset of Case's keys, in Case's order.", {
    indices: { type: "object", additionalProperties: partial(caseIndex, "an index after field selection") },
  }),
  CaseView: {
    description: "A case: every key of Case without field selection, the selected ones with it.",
    anyOf: [ref("Case"), ref("SelectedCase")],
  },
  MissingCase: {
    description: "A bulk-fetch stub for an id that matched no case.",
    oneOf: [
      ordered("missing by case id", { case_id: string("the id requested"), error: { const: "not found" } }),
      ordered("missing by external id", { external_id: string("the id requested"), error: { const: "not found" } }),
    ],
  },
  CaseList: ordered(
    "A page of cases, indexed_on then case_id ascending.",
    {
      matching_records: integer("cases matching the query from this page on"),
      cases: arrayOf(ref("CaseView")),
      next: string("absolute URL of the next page; absent on the last page", { pattern: "^https?://" }),
    },
    ["next"],
  ),
  BulkFetchResult: ordered("One entry per requested id, in request order (case_ids first, then external_ids).", {
    matching_records: integer("ids found"),
    missing_records: integer("ids not found"),
    cases: arrayOf({ anyOf: [ref("MissingCase"), ref("CaseView")] }),
  }),
  CaseWriteResult: ordered("The result of a single write.", {
    xform_id: string("the generated form"),
    form_id: string("the same as xform_id"),
    case: ref("CaseView"),
  }),
  BulkCaseWriteResult: ordered("The result of a bulk write: cases in request order.", {
    xform_id: string("the one generated form"),
    form_id: string("the same as xform_id"),
    cases: arrayOf(ref("CaseView")),
  }),
  CaseWrite: {
    type: "object",
    description: "A case write payload (CONTRACT §2 'Writes'). Any other key: 400.",
    properties: WRITE_KEYS,
    additionalProperties: false,
  },
  CaseWriteRequest: {
    description: `An object (one case) or a list of at most ${MAX_BULK} (bulk, one form for all; each item with \`create\`).`,
    oneOf: [ref("CaseWrite"), { type: "array", maxItems: MAX_BULK, items: ref("CaseWrite") }],
  },
  BulkFetchRequest: {
    type: "object",
    description: `At least one of the two, at most ${MAX_BULK_IDS} ids in all.`,
    // null is taken as the key's absence (parseBulkFetch), as it always was
    properties: Object.fromEntries(BULK_FETCH_KEYS.map((key) => [key, nullable(arrayOf({ type: "string" }))])),
  },
};

const paths = {
  [`${CASES}/`]: jsonRouterPath([DOMAIN], {
    get: caseOperation("listCases", {
      summary: "List cases",
      description: "Keyset paging by indexed_on then case_id; follow `next` for the following page. Any other parameter: 400.",
      parameters: listParameters,
      responses: { "200": ok("A page of cases.", "CaseList") },
    }),
    post: caseOperation("createCases", {
      summary: "Create a case (object) or create/update many (list)",
      parameters: selection,
      requestBody: caseWriteBody(`An object creates one case; a list of at most ${MAX_BULK} is a bulk write (each item's \`create\` decides).`),
      responses: caseWritten,
    }),
    put: caseOperation("putCases", {
      summary: "Upsert a case by its external_id or update it by its case_id (object), or a bulk write (list)",
      parameters: selection,
      requestBody: caseWriteBody("An object with external_id (upsert) or case_id (update), or a bulk list."),
      responses: caseWritten,
    }),
  }),
  [`${CASES}/bulk-fetch/`]: jsonRouterPath([DOMAIN], {
    post: caseOperation("bulkFetchCases", {
      summary: "Fetch cases by case id and external id",
      parameters: selection,
      requestBody: { required: true, content: jsonBody(ref("BulkFetchRequest")) },
      responses: { "200": ok("One entry per requested id; a missing id is a stub.", "BulkFetchResult") },
    }),
  }),
  [`${CASES}/ext/{ext_id}/`]: jsonRouterPath(
    [DOMAIN, pathParam("ext_id", "the external id, percent-encoded (may hold / ? # & = + and unicode)", { type: "string", pattern: "^.+$" })],
    {
      get: caseOperation("getCaseByExternalId", {
        summary: "One case by external id (the oldest when several share it)",
        parameters: selection,
        responses: { "200": ok("The case.", "CaseView") },
      }),
      put: caseOperation("upsertCaseByExternalId", {
        summary: "Upsert the case with this external id",
        description: "Updates the case with this external id, or creates it (case_type, case_name, owner_id then required).",
        parameters: selection,
        requestBody: { required: true, content: jsonBody(ref("CaseWrite")) },
        responses: { "200": ok("Written.", "CaseWriteResult") },
      }),
    },
  ),
  [`${CASES}/{case_id}`]: jsonRouterPath(
    [DOMAIN, pathParam("case_id", "a case id, or several joined by commas (GET only)", { type: "string", pattern: "^[\\w\\-,]+$" })],
    {
      get: caseOperation("getCases", {
        summary: "One case, or several by comma-separated ids",
        description: "A single id answers the case (404 when missing); ids joined by commas answer the bulk-fetch envelope, never 404.",
        parameters: selection,
        responses: {
          "200": { description: "The case, or the envelope for several ids.", content: json({ anyOf: [ref("BulkFetchResult"), ref("CaseView")] }) },
        },
      }),
      put: caseOperation("updateCase", {
        summary: "Update this case",
        parameters: selection,
        requestBody: { required: true, content: jsonBody(ref("CaseWrite")) },
        responses: {
          "200": ok("Written.", "CaseWriteResult"),
          "405": { ...responseRef("MethodNotAllowed"), description: "Several ids (a multi-id segment takes GET only)." },
        },
      }),
    },
  ),
};

export const caseDocument: FeatureDocument = {
  tag: { name: TAG, description: "Cases under /a/{domain}/api/case/v2/" },
  paths,
  schemas,
};
