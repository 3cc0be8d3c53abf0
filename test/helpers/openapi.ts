import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { openApiDocument } from "../../src/gateway/openapi.ts";

/**
 * Checks REST requests and responses against the OpenAPI document the server serves (CONTRACT
 * §7.2), so that the document cannot drift from the code.
 *
 * Every response the test suite gets from a documented path must have a status documented for that
 * path and method (405 with the path's `x-other-methods` for a method it does not take), the
 * documented required headers, a documented content type, and a body that matches the schema
 * (keys in the listed order where the schema says `x-key-order`).
 *
 * Every request the server accepts (a 2xx answer) must be one the document describes: each query
 * parameter documented (by name, or by a family's `propertyNames` pattern) with a value its schema
 * takes, and a JSON or form body that matches the operation's request body. A request answered
 * otherwise is exempt: tests send requests outside the contract on purpose to see them refused,
 * and what the refusal looks like is held to the document by the response check. So a parameter
 * or key the grammar accepts but the document omits fails the first test that uses it.
 *
 * Paths the document does not name are not checked.
 */

type Json = Record<string, unknown>;

export interface CheckedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text?: string;
  body?: unknown;
  /** a body was sent but not read (a download checked on its status and headers only) */
  unreadBody?: boolean;
}

/** What the request sent, as far as its document check needs it. */
export interface CheckedRequest {
  /** the Content-Type it sent */
  contentType?: string;
  /** its body as text (JSON or a form); absent when none was sent */
  text?: string;
  /** a body was sent that is not text (multipart, a stream): checked on its content type only */
  opaqueBody?: boolean;
}

export class OpenApiMismatch extends Error {
  constructor(method: string, url: string, status: number, problem: string) {
    super(`OpenAPI: ${method} ${url} → ${status}: ${problem}`);
    this.name = "OpenApiMismatch";
  }
}

const SCHEMA_REF = "#/components/schemas/";
const schemaId = (name: string) => `urn:openapi:schema:${name}`;

/** The document's schema refs turned into ids ajv resolves (the schemas are added under them). */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = key === "$ref" && typeof v === "string" && v.startsWith(SCHEMA_REF) ? schemaId(v.slice(SCHEMA_REF.length)) : rewriteRefs(v);
  }
  return out;
}

/** Keys in the order of `properties` (a subset, as a field selection leaves). */
function keysInOrder(data: unknown, parent: Json): boolean {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return true;
  const order = Object.keys((parent.properties as Json) ?? {});
  const positions = Object.keys(data).map((k) => order.indexOf(k));
  return positions.every((p, i) => i === 0 || p > positions[i - 1]);
}

function createAjv(document: Json = openApiDocument as unknown as Json): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  // OpenAPI's own schema keywords (annotations for this purpose)
  ajv.addVocabulary(["xml", "example", "discriminator", "externalDocs"]);
  ajv.addKeyword({
    keyword: "x-key-order",
    schemaType: "boolean",
    validate: (on: boolean, data: unknown, parent?: Json) => !on || keysInOrder(data, parent ?? {}),
    errors: false,
  });
  const schemas = ((document.components as Json).schemas ?? {}) as Json;
  for (const [name, schema] of Object.entries(schemas)) ajv.addSchema(rewriteRefs(schema) as Json, schemaId(name));
  return ajv;
}

interface Route {
  template: string;
  pattern: RegExp;
  item: Json;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A path template as a regex: each `{param}` by its schema's pattern (unanchored) or one segment;
 * the trailing slash optional, as the server takes it. Fixed paths are tried before templated ones.
 */
function routesOf(document: Json): Route[] {
  const routes = Object.entries(document.paths as Json).map(([template, item]) => {
    const params = (((item as Json).parameters as Json[]) ?? []).filter((p) => p.in === "path");
    const source = template
      .replace(/\/$/, "")
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const name = /^\{([^}]+)\}$/.exec(part)?.[1];
        if (!name) return escapeRegExp(part);
        const pattern = ((params.find((p) => p.name === name)?.schema as Json | undefined)?.pattern as string | undefined) ?? "[^/]+";
        return `(?:${pattern.replace(/^\^/, "").replace(/\$$/, "")})`;
      })
      .join("");
    return { template, pattern: new RegExp(`^${source}/?$`), item: item as Json };
  });
  const templated = (r: Route) => (r.template.includes("{") ? (r.template.match(/\{/g)?.length ?? 0) : 0);
  return routes.sort((a, b) => templated(a) - templated(b));
}

/** The query of a URL as the server reads it (rest/params.ts): every name and value, in order. */
function queryOf(url: string): [string, string][] {
  const q = url.indexOf("?");
  return q < 0 ? [] : [...new URLSearchParams(url.slice(q + 1).split("#", 1)[0])];
}

/** A query value as its schema's type: a number where a number is documented and the text is one. */
function coerce(schema: Json, value: string): unknown {
  const type = schema.type;
  if ((type === "integer" || type === "number") && /^\s*[-+]?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return value;
}

const mediaType = (contentType: string) => contentType.split(";")[0].trim().toLowerCase();
const isJson = (media: string) => /[/+]json$/.test(media);

function mediaMatches(range: string, actual: string): boolean {
  if (range === "*/*") return true;
  if (range.endsWith("/*")) return actual.startsWith(range.slice(0, -1));
  return range === actual;
}

export interface ResponseValidator {
  /**
   * Throws OpenApiMismatch when the response is not as documented, or when the request was
   * accepted (2xx) but is not as documented (`req`, when the caller knows what it sent; its query
   * is read from `url`).
   */
  check(method: string, url: string, res: CheckedResponse, req?: CheckedRequest): void;
  /** The documented path template a URL falls under, if any. */
  templateOf(url: string): string | undefined;
}

function responseValidator(document: Json = openApiDocument as unknown as Json): ResponseValidator {
  const ajv = createAjv(document);
  const routes = routesOf(document);
  const compiled = new Map<object, ValidateFunction>();
  const components = document.components as Json;

  const resolve = (value: Json): Json => {
    const target = value.$ref as string | undefined;
    if (!target) return value;
    const [, , kind, name] = target.split("/");
    return resolve((components[kind] as Json)[name] as Json);
  };
  const validatorFor = (schema: Json) => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(rewriteRefs(schema) as Json);
      compiled.set(schema, validate);
    }
    return validate;
  };

  // every body schema compiled now: a schema ajv cannot take fails at once, not in some later test
  for (const route of routes) {
    for (const op of Object.values(route.item)) {
      for (const response of Object.values(((op as Json).responses as Json) ?? {})) {
        for (const media of Object.values(resolve(response as Json).content ?? {})) validatorFor((media as Json).schema as Json);
      }
    }
  }

  const routeOf = (url: string) => {
    let pathname: string;
    try {
      pathname = new URL(url, "http://localhost").pathname;
    } catch {
      return undefined; // no URL a server would route
    }
    // the server routes the path as sent: one with a `.` or `..` segment (which URL resolution would
    // fold into another path) is no documented path
    const sent = url.replace(/^[a-z]+:\/\/[^/]+/i, "").split(/[?#]/, 1)[0]!;
    if (sent.split("/").some((segment) => /^(\.|\.\.|%2e|\.%2e|%2e\.|%2e%2e)$/i.test(segment))) return undefined;
    return routes.find((r) => r.pattern.test(pathname));
  };

  const parametersOf = (item: Json, op: Json) => [...((item.parameters as Json[]) ?? []), ...((op.parameters as Json[]) ?? [])];

  /** The request of an accepted (2xx) answer, against its operation: query parameters, then body. */
  const checkRequest = (url: string, item: Json, op: Json, req: CheckedRequest | undefined, fail: (problem: string) => never) => {
    const query = parametersOf(item, op).filter((p) => p.in === "query");
    const named = new Map(query.map((p) => [p.name as string, p]));
    const families = query.filter((p) => ((p.schema as Json).propertyNames as Json | undefined)?.pattern !== undefined);
    const given = Map.groupBy(queryOf(url), ([name]) => name);
    // a parameter that makes the others ignored (the Case API's cursor): they are outside any contract
    const overriding = query.find((p) => p["x-ignores-other-parameters"] === true && given.has(p.name as string));
    if (overriding) for (const name of given.keys()) if (name !== overriding.name) given.delete(name);
    for (const [name, pairs] of given) {
      const values = pairs.map(([, value]) => value);
      const declared = named.get(name);
      if (declared) {
        const schema = declared.schema as Json;
        const problem =
          schema.type === "array"
            ? schemaProblem(
                schema,
                values.map((v) => coerce(schema.items as Json, v)),
              )
            : singleValueProblem(schema, values);
        if (problem) fail(`request: query parameter '${name}' ${problem}`);
        continue;
      }
      const family = families.find((p) => new RegExp(((p.schema as Json).propertyNames as Json).pattern as string, "u").test(name));
      // an operation that says it ignores the parameters it does not read (Tastypie's lists)
      if (!family && op["x-unknown-parameters"] === "ignored") continue;
      if (!family) fail(`request: query parameter '${name}' is not documented (documented: ${[...named.keys()].join(", ")})`);
      const itemSchema = (family!.schema as Json).additionalProperties as Json;
      const problem = values.map((v) => schemaProblem(itemSchema, coerce(itemSchema, v))).find(Boolean);
      if (problem) fail(`request: query parameter '${name}' (${family!.name}) ${problem}`);
    }
    if (!req || (req.text === undefined && !req.opaqueBody)) {
      if ((op.requestBody as Json | undefined)?.required) fail("request: no body was sent where one is required");
      return;
    }
    const content = (op.requestBody as Json | undefined)?.content as Json | undefined;
    if (!content) fail("request: a body was sent where none is documented");
    const sent = mediaType(req.contentType ?? "");
    const range = Object.keys(content!).find((r) => mediaMatches(r, sent));
    if (!range) fail(`request: content type '${req.contentType}' is not documented (documented: ${Object.keys(content!).join(", ")})`);
    if (req.text === undefined) return;
    let body: unknown;
    // a body documented for any media type is JSON whatever its Content-Type (the REST faces read it so);
    // a leading byte-order mark is dropped, as the server's decoder drops it (RFC 8259 §8.1 lets a parser ignore it)
    if (isJson(sent) || range === "*/*") {
      try {
        body = JSON.parse(req.text.replace(/^\uFEFF/u, ""));
      } catch {
        fail("request: the body is not JSON");
      }
    } else if (sent === "application/x-www-form-urlencoded") {
      body = Object.fromEntries(new URLSearchParams(req.text));
    } else return;
    const problem = schemaProblem((content![range!] as Json).schema as Json, body);
    if (problem) fail(`request: the body ${problem}\nbody: ${req.text.slice(0, 2000)}`);
  };

  /**
   * A single-valued parameter sent several times: the document does not say which one counts (the
   * faces read the first or the last), so an accepted request needs one of them to be valid.
   */
  const singleValueProblem = (schema: Json, values: string[]): string | undefined => {
    const problems = values.map((v) => schemaProblem(schema, coerce(schema, v)));
    return problems.some((p) => p === undefined) ? undefined : problems[0];
  };

  /** Why `data` does not match `schema`, or undefined when it does. */
  const schemaProblem = (schema: Json, data: unknown): string | undefined => {
    const validate = validatorFor(schema);
    if (validate(data)) return undefined;
    const errors = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
    return `does not match the schema: ${errors.join("; ")}`;
  };

  return {
    templateOf: (url) => routeOf(url)?.template,
    check(method, url, res, req) {
      const route = routeOf(url);
      if (!route) return;
      // a CORS preflight (CORS_ORIGINS) is the browser's question, not an operation of the API
      if (method.toUpperCase() === "OPTIONS" && res.status === 204) return;
      const fail = (problem: string): never => {
        throw new OpenApiMismatch(method, url, res.status, `${problem} (path ${route.template})`);
      };
      const verb = method.toLowerCase() === "head" ? "get" : method.toLowerCase();
      const op = route.item[verb] as Json | undefined;
      checkResponse(method, res, route, op, fail);
      if (op && res.status >= 200 && res.status < 300) checkRequest(url, route.item, op, req, fail);
    },
  };

  /** The response against its operation (or the path's `x-other-methods`): status, headers, body. */
  function checkResponse(method: string, res: CheckedResponse, route: Route, op: Json | undefined, fail: (problem: string) => never): void {
    let response: Json;
    if (!op) {
      const other = (route.item["x-other-methods"] as Json)?.[String(res.status)] as Json | undefined;
      if (!other) fail(`the path does not take ${method}: status ${res.status} is not among its x-other-methods`);
      response = resolve(other!);
    } else {
      const documented = (op.responses as Json)[String(res.status)] as Json | undefined;
      if (!documented) fail(`status ${res.status} is not documented (documented: ${Object.keys(op.responses as Json).join(", ")})`);
      response = resolve(documented!);
    }
    for (const [name, spec] of Object.entries((response.headers as Json) ?? {})) {
      if ((spec as Json).required && res.headers[name.toLowerCase()] === undefined) fail(`header ${name} is missing`);
    }
    const content = response.content as Json | undefined;
    const hasBody = method.toUpperCase() !== "HEAD" && res.status !== 204;
    if (!content) {
      if (hasBody && (res.text || res.unreadBody)) fail("a body was sent where none is documented");
      return;
    }
    if (!hasBody) return;
    const contentType = String(res.headers["content-type"] ?? "");
    const actual = mediaType(contentType);
    const range = Object.keys(content).find((r) => mediaMatches(r, actual));
    if (!range) fail(`content type '${contentType}' is not documented (documented: ${Object.keys(content).join(", ")})`);
    if (!isJson(actual)) return;
    const schema = (content[range!] as Json).schema as Json;
    let body: unknown;
    try {
      body = typeof res.text === "string" ? JSON.parse(res.text) : res.body;
    } catch {
      fail("the body is not JSON");
    }
    const problem = schemaProblem(schema, body);
    if (problem) fail(`the body ${problem}\nbody: ${JSON.stringify(body).slice(0, 2000)}`);
  }
}

/** A body as sent: text for a string, bytes, JSON or a form; opaque for anything else. */
function sentBody(data: unknown, contentType: string | undefined): CheckedRequest {
  if (data === undefined || data === null) return { contentType };
  if (typeof data === "string") return { contentType, text: data };
  if (data instanceof Uint8Array) return { contentType, text: Buffer.from(data).toString("utf8") };
  if (data instanceof URLSearchParams) return { contentType: contentType ?? "application/x-www-form-urlencoded", text: String(data) };
  if (typeof data === "object" && mediaType(contentType ?? "") === "application/x-www-form-urlencoded") {
    return { contentType, text: String(new URLSearchParams(data as Record<string, string>)) };
  }
  if (typeof data === "object" && isJson(mediaType(contentType ?? ""))) return { contentType, text: JSON.stringify(data) };
  return { contentType, opaqueBody: true };
}

/** What a supertest (superagent) request sent, read once it has been sent. */
export function supertestRequest(test: unknown): CheckedRequest {
  const sent = test as { _data?: unknown; _formData?: unknown; req?: { getHeader(name: string): unknown } };
  const contentType = sent.req?.getHeader("content-type") as string | undefined;
  if (sent._formData) return { contentType, opaqueBody: true };
  return sentBody(sent._data, contentType);
}

/** What a raw-socket request (test/helpers/hostile.ts rawRequest) sent. */
export function rawRequestSent(headers: Record<string, string> | undefined, body: string | Buffer | undefined): CheckedRequest {
  const contentType = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === "content-type")?.[1];
  return sentBody(body, contentType);
}

/** What a fetch sent: a text body is checked, any other (FormData, a stream) only on its content type. */
function fetchRequestSent(input: Parameters<typeof fetch>[0], init?: RequestInit): CheckedRequest {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  const body = init?.body;
  const contentType = headers.get("content-type") ?? undefined;
  if (body === undefined || body === null) return input instanceof Request && input.body ? { contentType, opaqueBody: true } : { contentType };
  if (typeof body === "string" || body instanceof Uint8Array || body instanceof URLSearchParams) return sentBody(body, contentType);
  return { contentType: contentType ?? (body instanceof FormData ? "multipart/form-data" : undefined), opaqueBody: true };
}

let shared: ResponseValidator | undefined;

/** One validator for the test process (compiling the schemas once). */
export function documentValidator(): ResponseValidator {
  shared ??= responseValidator();
  return shared;
}

/**
 * Every server a test talks to with `fetch` listens on loopback: the server under test (in this
 * process or a child), or a stand-in, which is held to the document too if it answers on one of
 * its paths.
 */
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

function loopbackUrl(url: string): boolean {
  try {
    return LOOPBACK.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * Checks a fetch Response as `check` does a supertest one, reading a clone so that the caller's
 * body is left whole. A JSON body is read in full (the server sends it at once); any other (a
 * download the caller may stream or stop reading) is checked on status and headers only. A body
 * that cannot be read (the connection was cut) is the caller's to meet: nothing is checked.
 */
export async function checkFetchResponse(
  method: string,
  url: string,
  response: Response,
  validator = documentValidator(),
  sent?: CheckedRequest,
): Promise<void> {
  if (!validator.templateOf(url)) return;
  const headers = Object.fromEntries(response.headers);
  const checked: CheckedResponse = { status: response.status, headers };
  if (isJson(mediaType(headers["content-type"] ?? ""))) {
    try {
      checked.text = await response.clone().text();
    } catch {
      return;
    }
  } else {
    const length = headers["content-length"];
    checked.unreadBody = length === undefined ? headers["transfer-encoding"] !== undefined : Number(length) > 0;
  }
  validator.check(method, url, checked, sent);
}

function requestOf(input: Parameters<typeof fetch>[0], init?: RequestInit): { method: string; url: string } {
  const request = input instanceof Request ? input : undefined;
  return { method: init?.method ?? request?.method ?? "GET", url: request?.url ?? String(input) };
}

const fetchMismatches: OpenApiMismatch[] = [];

/**
 * The test process's global fetch, wrapped so that every response from a loopback server on a
 * documented path is checked, and the request too when it was accepted (test/setup/each-file.ts installs it): a mismatch rejects the fetch
 * and is also kept, so that a test which swallows the rejection (a fetch expected to fail
 * otherwise) still fails in `failOnFetchMismatches`.
 */
export function checkingFetch(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const { method, url } = requestOf(input, init);
    if (!loopbackUrl(url)) return response;
    try {
      // after a redirect the response is the last URL's (the server redirects only GET /docs)
      await checkFetchResponse(method, response.redirected ? response.url : url, response, undefined, fetchRequestSent(input, init));
    } catch (error) {
      if (error instanceof OpenApiMismatch) fetchMismatches.push(error);
      throw error;
    }
    return response;
  };
}

/** The mismatches the global fetch met since the last call, forgotten as they are returned. */
export function takeFetchMismatches(): OpenApiMismatch[] {
  return fetchMismatches.splice(0);
}

/** Fails (after each test) with the mismatches the global fetch met, even those the test caught. */
export function failOnFetchMismatches(): void {
  const found = takeFetchMismatches();
  if (found.length > 0)
    throw new Error(`${found.length} fetch response(s) not as the OpenAPI document says:\n${found.map((e) => e.message).join("\n")}`);
}
