import { ref, schemas, type Schema } from "./schemas.ts";

/**
 * The OpenAPI 3.1 document of the REST API (CONTRACT §7.2): every path of §§2–4, the location types
 * and /oauth/token, every status each can answer with its body, and the four security schemes.
 * Built as code from the same schemas the test suite validates every REST response against
 * (test/helpers/openapi.ts), so that an undocumented status or body fails a test.
 *
 * Paths are written as the seeds write them, with their trailing slash; the server answers with or
 * without it. Any other method on a documented path is answered with the response named by the
 * path's `x-other-methods`: 405 with `Allow`, unless the request is refused before its method is
 * looked at (401 credentials, 403 a cross-site write, 429, 503).
 */

type Family = "plain" | "apps";

const FAMILY_ERROR: Record<Family, string> = { plain: "Error", apps: "AppsError" };
const FAMILY_PREFIX: Record<Family, string> = { plain: "", apps: "Apps" };

const json = (schema: Schema) => ({ "application/json": { schema } });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

const header = (description: string) => ({ description, required: true, schema: { type: "string" } });

/** The error responses of a family, named e.g. `NotFound` and `AppsNotFound`. */
function errorResponses(family: Family): Record<string, unknown> {
  const body = json(ref(FAMILY_ERROR[family]));
  const p = FAMILY_PREFIX[family];
  return {
    [`${p}BadRequest`]: { description: "The request is invalid: the message says why.", content: body },
    [`${p}Unauthorized`]: {
      description: "Missing or wrong credentials. Challenges for Basic, Digest and Bearer.",
      headers: { "WWW-Authenticate": header("the challenges") },
      content: body,
    },
    [`${p}Forbidden`]: {
      description: "Not a member of the domain, a permission missing, an unknown domain (non-superusers), or a cross-site write.",
      content: body,
    },
    [`${p}NotFound`]: { description: "The resource (or, for a superuser, the domain) does not exist.", content: body },
    [`${p}MethodNotAllowed`]: {
      description: "Any method the path does not take.",
      headers: { Allow: header("the methods the path takes") },
      content: body,
    },
    [`${p}PayloadTooLarge`]: { description: "The body is over its size limit.", content: body },
    [`${p}TooManyRequests`]: {
      description: "The caller's rate limit in the domain, too many failed logins, or (multimedia uploads) the domain's queue of archives is full.",
      headers: { "Retry-After": header("seconds to wait") },
      content: body,
    },
    [`${p}ServiceUnavailable`]: {
      description: "The database cannot be reached; retry later.",
      headers: { "Retry-After": header("seconds to wait") },
      content: body,
    },
  };
}

/** The statuses every request of a family can get besides its own, by response name. */
function commonErrors(family: Family, withBody: boolean): Record<string, unknown> {
  const p = FAMILY_PREFIX[family];
  return {
    "400": responseRef(`${p}BadRequest`),
    "401": responseRef(`${p}Unauthorized`),
    "403": responseRef(`${p}Forbidden`),
    "404": responseRef(`${p}NotFound`),
    ...(withBody ? { "413": responseRef(`${p}PayloadTooLarge`) } : {}),
    "429": responseRef(`${p}TooManyRequests`),
    "503": responseRef(`${p}ServiceUnavailable`),
  };
}

interface Operation {
  summary: string;
  description?: string;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

/**
 * An operation of a family: its own responses, then the family's common errors. `readsBody`: the
 * operation reads a body, so one over the limit is 413 (the Case and Location routers read any
 * request's body, a GET's too).
 */
function operation(family: Family, tag: string, id: string, op: Operation, readsBody = op.requestBody !== undefined) {
  return { tags: [tag], operationId: id, ...op, responses: { ...op.responses, ...commonErrors(family, readsBody) } };
}

/** Operations of the routers that read every request's body as JSON (rest/middleware.ts jsonBody). */
const jsonRouterOperation = (tag: string, id: string, op: Operation) => operation("plain", tag, id, op, true);

/**
 * What a method the path does not take gets: 405 with Allow, or what the family's admission
 * answers before any route (an undecodable domain or body encoding, credentials, cross-site
 * writes, rate limit, database).
 */
function otherMethods(family: Family, readsBody: boolean): Record<string, unknown> {
  const p = FAMILY_PREFIX[family];
  return {
    "400": responseRef(`${p}BadRequest`),
    "401": responseRef(`${p}Unauthorized`),
    "403": responseRef(`${p}Forbidden`),
    "405": responseRef(`${p}MethodNotAllowed`),
    ...(readsBody ? { "413": responseRef(`${p}PayloadTooLarge`) } : {}),
    "429": responseRef(`${p}TooManyRequests`),
    "503": responseRef(`${p}ServiceUnavailable`),
  };
}

/** `readsBody`: the path's router reads any request's body first (413 before 405). */
const pathItem = (family: Family, parameters: unknown[], operations: Record<string, unknown>, readsBody = false) => ({
  parameters,
  ...operations,
  "x-other-methods": otherMethods(family, readsBody),
});

/** A path of the Case or Location router, which read every request's body as JSON. */
const jsonRouterPath = (parameters: unknown[], operations: Record<string, unknown>) => pathItem("plain", parameters, operations, true);

const pathParam = (name: string, description: string, schema: Schema = { type: "string" }) => ({
  name,
  in: "path",
  required: true,
  description,
  schema,
});
const query = (name: string, description: string, schema: Schema = { type: "string" }) => ({ name, in: "query", description, schema });

const DOMAIN = pathParam("domain", "the project space");

const ok = (description: string, schemaName: string) => ({ description, content: json(ref(schemaName)) });

// --- Case Data API v2 (CONTRACT §2) ---

const CASE_TAG = "Case Data API v2";
const CASES = "/a/{domain}/api/case/v2";

const selection = [
  query("fields", "comma-separated keys to keep (dotted for nested: properties.x, indices.parent.case_id)"),
  query("exclude", "comma-separated keys to remove; not with fields"),
  query("fields.properties", "= properties.a,properties.b in fields"),
  query("exclude.properties", "= properties.a,properties.b in exclude"),
];

const DATE_FIELDS = ["last_modified", "server_last_modified", "indexed_on", "date_opened", "date_closed"];
const RANGES = ["gt", "gte", "lt", "lte"];

const caseListParams = [
  query("limit", "page size, default 20, at most 5000", { type: "integer", minimum: 1, maximum: 5000, default: 20 }),
  query("cursor", "the opaque cursor of a `next` link; with it, every other parameter is ignored"),
  ...["external_id", "case_type", "owner_id", "case_name"].map((name) =>
    query(name, "exact match; repeat the parameter (at most 100 times) to match any of several values"),
  ),
  query("closed", "'', false, f, no, n, 0 (any case) mean false; anything else true"),
  query("indices.parent", "cases whose `parent` index points at this case id"),
  query("indices.host", "cases whose `host` index points at this case id"),
  ...DATE_FIELDS.flatMap((field) =>
    RANGES.map((range) => query(`${field}.${range}`, "a date YYYY-MM-DD (the whole day) or an ISO 8601 datetime (naive = UTC)")),
  ),
  {
    name: "filters",
    in: "query",
    description:
      "`properties.{name}=value`: exact, case-sensitive match on a property (empty matches unset or empty); " +
      "`indices.{name}={case_id}`: cases whose index {name} points at that case. " +
      "Any filter takes at most 100 values; at most 20 property and index filters per request (400 beyond).",
    style: "form",
    explode: true,
    schema: { type: "object", additionalProperties: { type: "string" } },
  },
  ...selection,
];

const caseWriteBody = (description: string) => ({
  required: true,
  description,
  content: json(ref("CaseWriteRequest")),
});

const caseWritten = {
  "200": {
    description: "Written: `case` for an object body, `cases` for a list.",
    content: json({ oneOf: [ref("CaseWriteResult"), ref("BulkCaseWriteResult")] }),
  },
};

const casePaths = {
  [`${CASES}/`]: jsonRouterPath([DOMAIN], {
    get: jsonRouterOperation(CASE_TAG, "listCases", {
      summary: "List cases",
      description: "Keyset paging by indexed_on then case_id; follow `next` for the following page. Any other parameter: 400.",
      parameters: caseListParams,
      responses: { "200": ok("A page of cases.", "CaseList") },
    }),
    post: jsonRouterOperation(CASE_TAG, "createCases", {
      summary: "Create a case (object) or create/update many (list)",
      parameters: selection,
      requestBody: caseWriteBody("An object creates one case; a list of at most 100 is a bulk write (each item's `create` decides)."),
      responses: caseWritten,
    }),
    put: jsonRouterOperation(CASE_TAG, "putCases", {
      summary: "Upsert a case by its external_id or update it by its case_id (object), or a bulk write (list)",
      parameters: selection,
      requestBody: caseWriteBody("An object with external_id (upsert) or case_id (update), or a bulk list."),
      responses: caseWritten,
    }),
  }),
  [`${CASES}/bulk-fetch/`]: jsonRouterPath([DOMAIN], {
    post: jsonRouterOperation(CASE_TAG, "bulkFetchCases", {
      summary: "Fetch cases by case id and external id",
      parameters: selection,
      requestBody: { required: true, content: json(ref("BulkFetchRequest")) },
      responses: { "200": ok("One entry per requested id; a missing id is a stub.", "BulkFetchResult") },
    }),
  }),
  [`${CASES}/ext/{ext_id}/`]: jsonRouterPath(
    [DOMAIN, pathParam("ext_id", "the external id, percent-encoded (may hold / ? # & = + and unicode)", { type: "string", pattern: "^.+$" })],
    {
      get: jsonRouterOperation(CASE_TAG, "getCaseByExternalId", {
        summary: "One case by external id (the oldest when several share it)",
        parameters: selection,
        responses: { "200": ok("The case.", "CaseView") },
      }),
      put: jsonRouterOperation(CASE_TAG, "upsertCaseByExternalId", {
        summary: "Upsert the case with this external id",
        description: "Updates the case with this external id, or creates it (case_type, case_name, owner_id then required).",
        parameters: selection,
        requestBody: { required: true, content: json(ref("CaseWrite")) },
        responses: { "200": ok("Written.", "CaseWriteResult") },
      }),
    },
  ),
  [`${CASES}/{case_id}`]: jsonRouterPath(
    [DOMAIN, pathParam("case_id", "a case id, or several joined by commas (GET only)", { type: "string", pattern: "^[\\w\\-,]+$" })],
    {
      get: jsonRouterOperation(CASE_TAG, "getCases", {
        summary: "One case, or several by comma-separated ids",
        description: "A single id answers the case (404 when missing); ids joined by commas answer the bulk-fetch envelope, never 404.",
        parameters: selection,
        responses: {
          "200": { description: "The case, or the envelope for several ids.", content: json({ anyOf: [ref("BulkFetchResult"), ref("CaseView")] }) },
        },
      }),
      put: jsonRouterOperation(CASE_TAG, "updateCase", {
        summary: "Update this case",
        parameters: selection,
        requestBody: { required: true, content: json(ref("CaseWrite")) },
        responses: {
          "200": ok("Written.", "CaseWriteResult"),
          "405": { ...responseRef("MethodNotAllowed"), description: "Several ids (a multi-id segment takes GET only)." },
        },
      }),
    },
  ),
};

// --- Location API v2 and location types (CONTRACT §3) ---

const LOCATION_TAG = "Location API v2";
const LOCATIONS = "/a/{domain}/api/location/v2";

const formatParam = query("format", "json or xml; wins over Accept", { type: "string", enum: ["json", "xml"] });

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

/** JSON or XML (format, else Accept, else `fallback`). */
const locationOk = (status: string, description: string, schemaName: string, example: string) => ({
  [status]: { description, content: { ...json(ref(schemaName)), ...xml(example) } },
});

const locationPaths = {
  [`${LOCATIONS}/`]: jsonRouterPath([DOMAIN], {
    get: jsonRouterOperation(LOCATION_TAG, "listLocations", {
      summary: "List locations",
      description: "XML unless `format=json` or an Accept naming application/json.",
      parameters: [
        formatParam,
        query("site_code", "exact site code"),
        query("name", "exact name, case-sensitive"),
        query("location_type_code", "the type's code"),
        query("parent_location_id", "the direct parent"),
        ...RANGES.map((range) => query(`last_modified.${range}`, "a date or an ISO 8601 datetime")),
        query("order_by", "oldest or newest first", { type: "string", enum: ["last_modified", "-last_modified"] }),
        query("limit", "page size, default 20, at most 5000 (0 means 5000)", { type: "integer", minimum: 0, default: 20 }),
        query("offset", "index of the first object", { type: "integer", minimum: 0, default: 0 }),
      ],
      responses: locationOk("200", "A page of locations.", "LocationList", XML_EXAMPLE_LIST),
    }),
    post: jsonRouterOperation(LOCATION_TAG, "createLocation", {
      summary: "Create a location",
      parameters: [formatParam],
      requestBody: { required: true, content: json(ref("LocationWrite")) },
      responses: locationOk("201", "The location created.", "Location", XML_EXAMPLE_DETAIL),
    }),
    patch: jsonRouterOperation(LOCATION_TAG, "bulkLocations", {
      summary: "Create and update up to 100 locations at once (atomic)",
      requestBody: { required: true, content: json(ref("LocationBulkRequest")) },
      responses: { "202": ok("Every item written: the ids, in request order.", "LocationBulkResult") },
    }),
  }),
  [`${LOCATIONS}/{location_id}`]: jsonRouterPath([DOMAIN, pathParam("location_id", "the location's id")], {
    get: jsonRouterOperation(LOCATION_TAG, "getLocation", {
      summary: "One location",
      parameters: [formatParam],
      responses: locationOk("200", "The location.", "Location", XML_EXAMPLE_DETAIL),
    }),
    put: jsonRouterOperation(LOCATION_TAG, "updateLocation", {
      summary: "Update a location (partial)",
      parameters: [formatParam],
      requestBody: { required: true, content: json(ref("LocationWrite")) },
      responses: locationOk("200", "The location updated.", "Location", XML_EXAMPLE_DETAIL),
    }),
  }),
  "/a/{domain}/api/location_type/v1/": pathItem("plain", [DOMAIN], {
    get: operation("plain", LOCATION_TAG, "listLocationTypes", {
      summary: "The domain's location types",
      responses: { "200": ok("Every location type of the domain.", "LocationTypeList") },
    }),
  }),
};

// --- Import App API (CONTRACT §4) ---

const APPS_TAG = "Import App API";
const APPS = "/a/{domain}/apps/api";
const APP_ID = pathParam("app_id", "the application's id");

const multipart = (properties: Record<string, Schema>, required: string[], fileField: string, fileType: string) => ({
  required: true,
  content: {
    "multipart/form-data": {
      schema: { type: "object", required, properties },
      encoding: { [fileField]: { contentType: fileType } },
    },
  },
});

const appPaths = {
  [`${APPS}/import_app/`]: pathItem("apps", [DOMAIN], {
    post: operation("apps", APPS_TAG, "importApp", {
      summary: "Import an application (create, or update in place with app_id)",
      description: "Checked in order: app_file missing, app_name missing (create), the file not a JSON object.",
      requestBody: multipart(
        {
          app_file: { type: "string", contentMediaType: "application/json", description: "the application source (a JSON object)" },
          app_name: { type: "string", description: "required on create; renames on update" },
          app_id: { type: "string", description: "update this application in place" },
        },
        ["app_file"],
        "app_file",
        "application/json",
      ),
      responses: {
        "200": ok("Updated in place.", "ImportAppUpdated"),
        "201": ok("Created.", "ImportAppCreated"),
      },
    }),
  }),
  [`${APPS}/{app_id}/multimedia/`]: pathItem("apps", [DOMAIN, APP_ID], {
    post: operation("apps", APPS_TAG, "uploadMultimedia", {
      summary: "Upload a ZIP of multimedia files for processing",
      requestBody: multipart(
        { bulk_upload_file: { type: "string", contentMediaType: "application/zip", description: "a ZIP archive" } },
        ["bulk_upload_file"],
        "bulk_upload_file",
        "application/zip",
      ),
      description:
        "429 (with Retry-After) when the domain's archives waiting to be processed would pass MULTIMEDIA_QUEUE_LIMIT_BYTES; " +
        "507 when the server's disk lacks the space to spool the upload (UPLOAD_MIN_FREE_BYTES).",
      responses: {
        "200": ok("Accepted: poll the status with the processing id.", "MultimediaUploadResult"),
        "507": { description: "Not enough free disk space to accept the upload.", content: json(ref("AppsError")) },
      },
    }),
  }),
  [`${APPS}/{app_id}/multimedia/status/{processing_id}/`]: pathItem("apps", [DOMAIN, APP_ID, pathParam("processing_id", "the id of the upload")], {
    get: operation("apps", APPS_TAG, "multimediaStatus", {
      summary: "Progress and, once complete, the result of a multimedia upload",
      description: "404 `Processing ID not found or expired` for an unknown, foreign or expired id.",
      responses: {
        "200": ok("The status record.", "MultimediaStatus"),
        "500": {
          description: "The processing task failed: `Multimedia processing task failed`.",
          content: json({ allOf: [ref("AppsError"), { type: "object", properties: { error: { const: "Multimedia processing task failed" } } }] }),
        },
      },
    }),
  }),
  [`${APPS}/{app_id}/multimedia/file/{path}`]: pathItem(
    "apps",
    [DOMAIN, APP_ID, pathParam("path", "the application's media path after jr://file/ (may hold /)", { type: "string", pattern: "^.+$" })],
    {
      get: operation("apps", APPS_TAG, "multimediaFile", {
        summary: "The bytes of a stored multimedia file of the application",
        responses: {
          "200": {
            description:
              "The file, with its content type from its magic bytes or else its name; never to be sniffed, and sandboxed when a browser renders it.",
            headers: {
              "X-Content-Type-Options": header("nosniff"),
              "Content-Security-Policy": header("default-src 'none'; style-src 'unsafe-inline'; sandbox"),
            },
            content: { "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } },
          },
          "500": {
            description: "The stored file could not be read before its first byte was sent (after that the response is cut short instead).",
            content: json(ref("AppsError")),
          },
        },
      }),
    },
  ),
};

// --- OAuth 2.0 token endpoint ---

const oauthError = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: json(ref("OAuthError")),
});

const oauthPaths = {
  "/oauth/token": {
    post: {
      tags: ["OAuth 2.0"],
      operationId: "token",
      summary: "Issue an access token (password, refresh_token or client_credentials grant)",
      description: "The client authenticates with Basic (client_id:client_secret) or in the body. Scope `access_apis`.",
      security: [{ basic: [] }, {}],
      requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: ref("TokenRequest") } } },
      responses: {
        "200": {
          description: "The token.",
          headers: { "Cache-Control": header("no-store") },
          content: json(ref("Token")),
        },
        "400": {
          description: "An invalid request or grant (RFC 6749 §5.2), or a body that cannot be read.",
          content: json({ anyOf: [ref("OAuthError"), ref("Error")] }),
        },
        "401": oauthError("The client failed to authenticate.", { "WWW-Authenticate": { schema: { type: "string" } } }),
        "413": responseRef("PayloadTooLarge"),
        "429": oauthError("Too many failed logins from this address or for this user.", { "Retry-After": header("seconds to wait") }),
        "503": responseRef("ServiceUnavailable"),
      },
    },
    // the form is read before the method is looked at: an unreadable one is 400, a large one 413
    "x-other-methods": {
      "400": responseRef("BadRequest"),
      "405": responseRef("MethodNotAllowed"),
      "413": responseRef("PayloadTooLarge"),
    },
  },
};

export const openApiDocument = {
  openapi: "3.1.0",
  info: {
    title: "Field data gateway: REST API",
    version: "2.0.0",
    description:
      "The REST compatibility layer: Case Data API v2, Location API v2 (and location types), Import App API, and the " +
      "OAuth 2.0 token endpoint. GraphQL is served at /graphql and described by its own schema.\n\n" +
      "Every path takes a trailing slash or not. Any method a path does not take is answered 405 with `Allow` " +
      '(the path\'s `x-other-methods` lists what else such a request may get). Error bodies: `{"error"}` for the Case and Location APIs (Case API ' +
      'submission errors add `xform_id`), `{"success": false, "error"}` for the Import App API. Objects marked ' +
      "`x-key-order` have their keys in the listed order.",
  },
  tags: [
    { name: CASE_TAG, description: "Cases under /a/{domain}/api/case/v2/" },
    { name: LOCATION_TAG, description: "Locations under /a/{domain}/api/location/v2/, types under location_type/v1/" },
    { name: APPS_TAG, description: "Applications and their multimedia under /a/{domain}/apps/api/" },
    { name: "OAuth 2.0", description: "Tokens for Bearer authentication" },
  ],
  security: [{ apiKey: [] }, { basic: [] }, { digest: [] }, { bearer: [] }],
  paths: { ...casePaths, ...locationPaths, ...appPaths, ...oauthPaths },
  components: {
    schemas,
    responses: { ...errorResponses("plain"), ...errorResponses("apps") },
    securitySchemes: {
      apiKey: {
        type: "apiKey",
        in: "header",
        name: "Authorization",
        description: "`Authorization: ApiKey {username}:{api_key}` (scheme name case-insensitive).",
      },
      basic: { type: "http", scheme: "basic", description: "`Authorization: Basic base64({username}:{password})`." },
      digest: { type: "http", scheme: "digest", description: "RFC 7616 Digest, MD5 or SHA-256, qop=auth; challenged on 401." },
      bearer: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "opaque",
        description: "OAuth 2.0 access token from POST /oauth/token (scope `access_apis`).",
      },
    },
  },
} as const;

export type OpenApiDocument = typeof openApiDocument;
