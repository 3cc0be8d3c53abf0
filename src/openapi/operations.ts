import { ordered, ref, string, type Schema } from "./schema.ts";

/**
 * The shared pieces of the OpenAPI document's paths: the two error families (`{"error"}` and the
 * Import App API's `{"success": false, "error"}`), the statuses every operation of a family can
 * get besides its own, what a method a path does not take gets (`x-other-methods`), and path
 * parameters. Each feature describes its own routes with these (`*.openapi.ts`);
 * src/gateway/openapi.ts assembles them.
 */

export type Family = "plain" | "apps";

const FAMILY_ERROR: Record<Family, string> = { plain: "Error", apps: "AppsError" };
const FAMILY_PREFIX: Record<Family, string> = { plain: "", apps: "Apps" };

export const json = (schema: Schema) => ({ "application/json": { schema } });
/**
 * A JSON request body: the REST faces read the body as JSON whatever its Content-Type (legacy
 * clients send text/plain, or none), so every media type is documented with the same schema.
 */
export const jsonBody = (schema: Schema) => ({ "application/json": { schema }, "*/*": { schema } });
export const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

export const header = (description: string) => ({ description, required: true, schema: { type: "string" } });

/** A 2xx (or other) response whose JSON body is the named schema. */
export const ok = (description: string, schemaName: string) => ({ description, content: json(ref(schemaName)) });

/** The error bodies of both families. */
export const errorSchemas: Record<string, Schema> = {
  Error: ordered(
    "The error body of the Case and Location APIs (and of the server outside the API families).",
    {
      error: string("what went wrong"),
      xform_id: string("Case API submission errors only: the id of the generated form that failed"),
    },
    ["xform_id"],
  ),
  AppsError: ordered("The error body of the Import App API.", {
    success: { const: false, description: "always false" },
    error: string("what went wrong"),
  }),
};

/** The error responses of a family, named e.g. `NotFound` and `AppsNotFound`. */
export function errorResponses(family: Family): Record<string, unknown> {
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

export interface Operation {
  summary: string;
  description?: string;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  /**
   * Whether a query parameter the operation does not list is refused (400: the Case API's grammar
   * checks every name) or ignored, as every other face does (`x-unknown-parameters: ignored`).
   */
  unknownParameters?: "refused" | "ignored";
}

/**
 * An operation of a family: its own responses, then the family's common errors. `readsBody`: the
 * operation reads a body, so one over the limit is 413 (the Case and Location routers read any
 * request's body, a GET's too).
 */
export function operation(family: Family, tag: string, id: string, op: Operation, readsBody = op.requestBody !== undefined) {
  const { unknownParameters = "ignored", ...described } = op;
  return {
    tags: [tag],
    operationId: id,
    ...described,
    ...(unknownParameters === "ignored" ? { "x-unknown-parameters": "ignored" } : {}),
    responses: { ...op.responses, ...commonErrors(family, readsBody) },
  };
}

/** Operations of the routers that read every request's body as JSON (rest/middleware.ts jsonBody). */
export const jsonRouterOperation = (tag: string, id: string, op: Operation) => operation("plain", tag, id, op, true);

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
export const pathItem = (family: Family, parameters: unknown[], operations: Record<string, unknown>, readsBody = false) => ({
  parameters,
  ...operations,
  "x-other-methods": otherMethods(family, readsBody),
});

/** A path of the Case or Location router, which read every request's body as JSON. */
export const jsonRouterPath = (parameters: unknown[], operations: Record<string, unknown>) => pathItem("plain", parameters, operations, true);

export const pathParam = (name: string, description: string, schema: Schema = { type: "string" }) => ({
  name,
  in: "path",
  required: true,
  description,
  schema,
});

export const DOMAIN = pathParam("domain", "the project space");

/** Paging of a Tastypie list (the Location API's and location types'). */
export const tastypieMeta = (what: string) =>
  ordered(`Paging of the ${what}.`, {
    limit: { type: "integer", minimum: 0, description: "page size" },
    next: { type: ["string", "null"], description: "relative URL of the next page" },
    offset: { type: "integer", minimum: 0, description: "index of the first object" },
    previous: { type: ["string", "null"], description: "relative URL of the previous page" },
    total_count: { type: "integer", minimum: 0, description: "objects matching the query" },
  });

/** The paths and component schemas a feature contributes to the document. */
export interface FeatureDocument {
  tag: { name: string; description: string };
  paths: Record<string, unknown>;
  schemas: Record<string, Schema>;
}
