/**
 * The JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of every REST body of CONTRACT §§2–4 and
 * the OAuth token endpoint. Objects whose keys the contract orders carry `x-key-order: true`: the
 * keys of a body appear in the order of `properties` (the test suite's response validator checks
 * it, so the listed order is the wire order).
 */

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** An object with exactly these keys, in this order; `optional` names those that may be absent. */
function ordered(description: string, properties: Record<string, Schema>, optional: string[] = []): Schema {
  return {
    type: "object",
    description,
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    additionalProperties: false,
    "x-key-order": true,
  };
}

const string = (description: string, extra: Schema = {}): Schema => ({ type: "string", description, ...extra });
const integer = (description: string, extra: Schema = {}): Schema => ({ type: "integer", minimum: 0, description, ...extra });
const boolean = (description: string): Schema => ({ type: "boolean", description });
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as string, "null"] });
const stringMap = (description: string): Schema => ({ type: "object", description, additionalProperties: { type: "string" } });

/** The same keys with none required (a field selection keeps any subset, in the same order). */
function partial(schema: Schema, description: string, replace: Record<string, Schema> = {}): Schema {
  const { required: _all, ...rest } = schema;
  return { ...rest, description, properties: { ...(schema.properties as Record<string, Schema>), ...replace } };
}

const CASE_DATE = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z$";
const caseDate = (description: string) => string(`${description} (UTC, six-digit microseconds, literal Z)`, { pattern: CASE_DATE });

const caseIndex = ordered("An index of a case: the case it points at.", {
  case_id: string("the referenced case"),
  case_type: string("the referenced case's type"),
  relationship: { type: "string", enum: ["child", "extension"], description: "the kind of index" },
});

const caseProperties: Record<string, Schema> = {
  domain: string("the project space"),
  case_id: string("server-generated UUID (lowercase, hyphenated)"),
  case_type: string("the case type"),
  case_name: string("the case name"),
  external_id: nullable(string("the external id; null when never set")),
  owner_id: string("the owner's id"),
  date_opened: caseDate("set at creation, never changed"),
  last_modified: caseDate("time of the last write"),
  server_last_modified: caseDate("time of the last write on the server"),
  indexed_on: caseDate("time of the last write; the paging key"),
  closed: boolean("whether the case is closed"),
  date_closed: nullable(caseDate("when the case was closed; null while open")),
  properties: stringMap("the case's user properties, each a string"),
  indices: { type: "object", description: "index name to index ({} when none)", additionalProperties: ref("CaseIndex") },
};

const fullCase = ordered("A case, every key in this order (CONTRACT §2 'Case serialization').", caseProperties);

const errorBody = ordered(
  "The error body of the Case and Location APIs (and of the server outside the API families).",
  {
    error: string("what went wrong"),
    xform_id: string("Case API submission errors only: the id of the generated form that failed"),
  },
  ["xform_id"],
);

const appsErrorBody = ordered("The error body of the Import App API.", {
  success: { const: false, description: "always false" },
  error: string("what went wrong"),
});

const matchedFile = ordered("A stored multimedia file matched to a path of the application.", {
  path: string("the application's own path (jr://file/…)"),
  original_path: string("the entry's path in the archive"),
  md5: string("MD5 of the content, hex", { pattern: "^[0-9a-f]{32}$" }),
  size: integer("bytes"),
  content_type: string("the media type sniffed from the content"),
});

const reasoned = ordered("An archive entry that was not stored, and why.", {
  path: string("the entry's path in the archive"),
  reason: string("why it was not stored"),
});

const statusAlways: Record<string, Schema> = {
  success: { const: true, description: "the status was read" },
  complete: boolean("whether processing has finished"),
  in_queue: boolean("true until complete"),
  progress: ordered("Entries done of entries in the archive.", {
    percent: integer("floor(100·current/total); 100 for an empty archive once complete", { maximum: 100 }),
    current: integer("entries done"),
    total: integer("entries in the archive"),
  }),
  errors: { type: "array", items: { type: "string" }, description: "errors met while processing" },
  processing_id: string("the id polled", { pattern: "^dl-[0-9a-f]{32}$" }),
};

const statusResult: Record<string, Schema> = {
  matched_count: integer("files matched to the application"),
  unmatched_count: integer("files not matched"),
  total_files: integer("entries in the archive, directories included"),
  processed_files: integer("entries processed"),
  image_count: integer("images matched"),
  audio_count: integer("audio files matched"),
  video_count: integer("video files matched"),
  matched_files: ordered("Matched files by media class.", {
    AppImage: { type: "array", items: ref("MatchedFile") },
    AppAudio: { type: "array", items: ref("MatchedFile") },
    AppVideo: { type: "array", items: ref("MatchedFile") },
  }),
  unmatched_files: { type: "array", items: ref("ReasonedEntry"), description: "media files that matched no path of the application" },
  skipped_files: { type: "array", items: ref("ReasonedEntry"), description: "entries that are not media" },
};

const locationProperties: Record<string, Schema> = {
  domain: string("the project space"),
  last_modified: string("ISO 8601 without timezone suffix (UTC)", { pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}$" }),
  latitude: nullable(string("a decimal number")),
  location_data: stringMap("custom data, name to string value"),
  location_id: string("the location's id"),
  location_type_code: string("the type's code"),
  location_type_name: string("the type's name"),
  longitude: nullable(string("a decimal number")),
  name: string("the name, unique among siblings"),
  parent_location_id: nullable(string("the direct parent; null for a root")),
  site_code: string("lowercase letters (any script), digits, `_` and `-`; unique in the domain", { pattern: "^[-_\\p{L}\\p{M}\\p{N}\\p{Pc}]+$" }),
};

const tastypieMeta = (what: string) =>
  ordered(`Paging of the ${what}.`, {
    limit: integer("page size"),
    next: nullable(string("relative URL of the next page")),
    offset: integer("index of the first object"),
    previous: nullable(string("relative URL of the previous page")),
    total_count: integer("objects matching the query"),
  });

const caseWriteProperties: Record<string, Schema> = {
  case_id: string("bulk updates and PUT '' only: the case to update"),
  case_type: string("required on create", { maxLength: 255 }),
  case_name: string("required on create", { maxLength: 255 }),
  owner_id: string("required on create", { maxLength: 255 }),
  external_id: string("'' clears it", { maxLength: 255 }),
  temporary_id: string("bulk creations only: a name other items' indices may reference; not stored"),
  properties: stringMap("properties to merge; names are XML element names"),
  indices: {
    type: "object",
    description: "index name to index; an empty id removes the index",
    additionalProperties: {
      type: "object",
      description: "exactly one of case_id, external_id, temporary_id",
      properties: {
        case_id: { type: "string" },
        external_id: { type: "string" },
        temporary_id: { type: "string" },
        case_type: { type: "string" },
        relationship: { type: "string", enum: ["child", "extension"] },
      },
    },
  },
  close: boolean("true closes the case; false never reopens it"),
  create: nullable(boolean("bulk only: true creates, false updates, null or omitted upserts by external_id")),
};

const caseWrite: Schema = {
  type: "object",
  description: "A case write payload (CONTRACT §2 'Writes'). Any other key: 400.",
  properties: caseWriteProperties,
};

const locationWriteProperties: Record<string, Schema> = {
  name: string("required on create"),
  location_type_code: string("required on create"),
  site_code: string("generated from the name when omitted on create"),
  latitude: { type: ["string", "number", "null"], description: "a decimal number" },
  longitude: { type: ["string", "number", "null"], description: "a decimal number" },
  location_data: stringMap("custom data (replaces the stored data)"),
  parent_location_id: { type: ["string", "null"], description: "the parent; null or '' for a root" },
};

export const schemas: Record<string, Schema> = {
  Error: errorBody,
  AppsError: appsErrorBody,
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
      cases: { type: "array", items: ref("CaseView") },
      next: string("absolute URL of the next page; absent on the last page", { pattern: "^https?://" }),
    },
    ["next"],
  ),
  BulkFetchResult: ordered("One entry per requested id, in request order (case_ids first, then external_ids).", {
    matching_records: integer("ids found"),
    missing_records: integer("ids not found"),
    cases: { type: "array", items: { anyOf: [ref("MissingCase"), ref("CaseView")] } },
  }),
  CaseWriteResult: ordered("The result of a single write.", {
    xform_id: string("the generated form"),
    form_id: string("the same as xform_id"),
    case: ref("CaseView"),
  }),
  BulkCaseWriteResult: ordered("The result of a bulk write: cases in request order.", {
    xform_id: string("the one generated form"),
    form_id: string("the same as xform_id"),
    cases: { type: "array", items: ref("CaseView") },
  }),
  CaseWrite: caseWrite,
  CaseWriteRequest: {
    description: "An object (one case) or a list of at most 100 (bulk, one form for all; each item with `create`).",
    oneOf: [ref("CaseWrite"), { type: "array", maxItems: 100, items: ref("CaseWrite") }],
  },
  BulkFetchRequest: {
    type: "object",
    description: "At least one of the two, at most 5000 ids in all.",
    properties: {
      case_ids: { type: "array", items: { type: "string" } },
      external_ids: { type: "array", items: { type: "string" } },
    },
  },
  Location: ordered("A location, every key in this order (CONTRACT §3).", locationProperties),
  LocationList: ordered("A page of locations.", { meta: tastypieMeta("locations"), objects: { type: "array", items: ref("Location") } }),
  LocationWrite: {
    type: "object",
    description: "A location create (name and location_type_code required) or partial update. Any other key: 400.",
    properties: locationWriteProperties,
  },
  LocationBulkRequest: {
    type: "object",
    required: ["objects"],
    properties: {
      objects: {
        type: "array",
        maxItems: 100,
        description: "items with location_id update that location, others create one",
        items: { type: "object", properties: { location_id: { type: "string" }, ...locationWriteProperties } },
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
    objects: { type: "array", items: ref("LocationType") },
  }),
  ImportAppCreated: ordered(
    "A new application.",
    {
      success: { const: true },
      app_id: string("the application's id"),
      warnings: { type: "array", items: { type: "string" }, minItems: 1, description: "only when non-empty" },
    },
    ["warnings"],
  ),
  ImportAppUpdated: ordered(
    "An application updated in place.",
    {
      success: { const: true },
      app_id: string("the application's id"),
      version: integer("the new version", { minimum: 1 }),
      warnings: { type: "array", items: { type: "string" }, minItems: 1, description: "only when non-empty" },
    },
    ["warnings"],
  ),
  MultimediaUploadResult: ordered("A multimedia upload accepted for processing.", {
    success: { const: true },
    processing_id: string("the id to poll", { pattern: "^dl-[0-9a-f]{32}$" }),
  }),
  MatchedFile: matchedFile,
  ReasonedEntry: reasoned,
  MultimediaStatus: {
    description: "The status record: the result keys only once complete.",
    oneOf: [ref("MultimediaStatusInProgress"), ref("MultimediaStatusComplete")],
  },
  MultimediaStatusInProgress: ordered("Queued or running.", {
    ...statusAlways,
    complete: { const: false },
    in_queue: { const: true },
  }),
  MultimediaStatusComplete: ordered("Finished: the result follows.", {
    ...statusAlways,
    complete: { const: true },
    in_queue: { const: false },
    ...statusResult,
  }),
  TokenRequest: {
    type: "object",
    description: "RFC 6749 token request; each parameter at most once.",
    required: ["grant_type"],
    properties: {
      grant_type: { type: "string", enum: ["password", "refresh_token", "client_credentials"] },
      username: string("password grant"),
      password: string("password grant"),
      refresh_token: string("refresh_token grant"),
      scope: string("`access_apis`"),
      client_id: string("when the client does not authenticate with Basic"),
      client_secret: string("when the client does not authenticate with Basic"),
    },
  },
  Token: {
    type: "object",
    description: "An issued access token (RFC 6749 §5.1).",
    required: ["access_token", "token_type", "expires_in"],
    properties: {
      access_token: string("send as `Authorization: Bearer …`"),
      token_type: { type: "string", description: "Bearer" },
      expires_in: integer("seconds the access token lives", { minimum: 1 }),
      refresh_token: string("for the refresh_token grant"),
      scope: string("the granted scope"),
    },
    additionalProperties: false,
  },
  OAuthError: ordered("RFC 6749 §5.2 error.", { error: string("the error code"), error_description: string("what went wrong") }),
};
