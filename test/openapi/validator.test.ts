import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validatingRequest } from "../helpers/app.ts";
import {
  checkFetchResponse,
  checkingFetch,
  documentValidator,
  failOnFetchMismatches,
  OpenApiMismatch,
  takeFetchMismatches,
  type CheckedRequest,
  type CheckedResponse,
} from "../helpers/openapi.ts";

/**
 * The validator every REST test runs through (test/helpers/openapi.ts), on responses and on the
 * requests the server accepted: it must fail on what the document does not say, or the document
 * could drift unnoticed.
 */

const validator = documentValidator();
const TYPES = "/a/demo/api/location_type/v1/";
const STATUS = "/a/demo/apps/api/app1/multimedia/status/dl-0123456789abcdef0123456789abcdef/";

const jsonResponse = (status: number, body: unknown, headers: Record<string, string> = {}): CheckedResponse => ({
  status,
  headers: { "content-type": "application/json; charset=utf-8", ...headers },
  text: JSON.stringify(body),
});

const typeList = (objects: unknown[]) => ({
  meta: { limit: objects.length, next: null, offset: 0, previous: null, total_count: objects.length },
  objects,
});
const aType = { code: "city", domain: "demo", id: "t1", name: "City", parent: null };

const check = (method: string, url: string, res: CheckedResponse) => () => validator.check(method, url, res);

describe("the OpenAPI response validator", () => {
  it("accepts a documented status with its documented body", () => {
    expect(check("GET", TYPES, jsonResponse(200, typeList([aType])))).not.toThrow();
    expect(check("GET", TYPES.slice(0, -1), jsonResponse(200, typeList([])))).not.toThrow();
  });

  it("refuses an undocumented status", () => {
    expect(check("GET", TYPES, jsonResponse(418, { error: "teapot" }))).toThrow(/status 418 is not documented/);
    expect(check("GET", TYPES, jsonResponse(500, { error: "Internal server error" }))).toThrow(OpenApiMismatch);
  });

  it("refuses a body of another shape: a missing key, an extra key, a wrong type", () => {
    const { parent: _, ...noParent } = aType;
    expect(check("GET", TYPES, jsonResponse(200, typeList([noParent])))).toThrow(/does not match/);
    expect(check("GET", TYPES, jsonResponse(200, typeList([{ ...aType, extra: 1 }])))).toThrow(/does not match/);
    expect(check("GET", TYPES, jsonResponse(200, typeList([{ ...aType, id: 7 }])))).toThrow(/does not match/);
    // the Import App API's error shape on a Location API path
    expect(check("GET", TYPES, jsonResponse(403, { success: false, error: "no" }))).toThrow(/does not match/);
  });

  it("refuses keys out of the documented order", () => {
    const { code, ...rest } = aType;
    expect(check("GET", TYPES, jsonResponse(200, typeList([{ ...rest, code }])))).toThrow(/x-key-order/);
  });

  it("refuses an undocumented content type", () => {
    const res = { ...jsonResponse(200, typeList([])), headers: { "content-type": "text/html" } };
    expect(check("GET", TYPES, res)).toThrow(/content type 'text\/html' is not documented/);
  });

  it("requires the documented headers: Allow on 405, Retry-After on 429, WWW-Authenticate on 401", () => {
    expect(check("DELETE", TYPES, jsonResponse(405, { error: "Method 'DELETE' not allowed." }))).toThrow(/header Allow is missing/);
    expect(check("DELETE", TYPES, jsonResponse(405, { error: "Method 'DELETE' not allowed." }, { allow: "GET, HEAD" }))).not.toThrow();
    expect(check("GET", TYPES, jsonResponse(429, { error: "slow down" }))).toThrow(/Retry-After/);
    expect(check("GET", TYPES, jsonResponse(401, { error: "who?" }))).toThrow(/WWW-Authenticate/);
  });

  it("a method the path does not take is answered 405, or refused before its method is looked at (401)", () => {
    expect(check("POST", TYPES, jsonResponse(401, { error: "who?" }, { "www-authenticate": "Basic" }))).not.toThrow();
    expect(check("DELETE", TYPES, jsonResponse(200, typeList([])))).toThrow(/not among its x-other-methods/);
  });

  it("the multimedia status: result keys only once complete; the 500 only with its message", () => {
    const running = {
      success: true,
      complete: false,
      in_queue: true,
      progress: { percent: 50, current: 1, total: 2 },
      errors: [],
      processing_id: "dl-0123456789abcdef0123456789abcdef",
    };
    expect(check("GET", STATUS, jsonResponse(200, running))).not.toThrow();
    expect(check("GET", STATUS, jsonResponse(200, { ...running, matched_count: 0 }))).toThrow(/does not match/);
    const failed = { success: false, error: "Multimedia processing task failed" };
    expect(check("GET", STATUS, jsonResponse(500, failed))).not.toThrow();
    expect(check("GET", STATUS, jsonResponse(500, { success: false, error: "Internal server error" }))).toThrow(/does not match/);
  });

  it("leaves paths the document does not name alone", () => {
    expect(check("POST", "/graphql", jsonResponse(200, { data: null }))).not.toThrow();
    expect(validator.templateOf("/a/demo/api/case/v2/ext/a%2Fb/")).toBe("/a/{domain}/api/case/v2/ext/{ext_id}/");
    expect(validator.templateOf("/a/demo/api/case/v2/bulk-fetch")).toBe("/a/{domain}/api/case/v2/bulk-fetch/");
    expect(validator.templateOf("/a/demo/api/case/v2/a,b")).toBe("/a/{domain}/api/case/v2/{case_id}");
  });

  it("the test helpers' http() fails the request whose response is not as documented", async () => {
    const wrong = express().get(TYPES, (_req, res) => res.status(200).json({ objects: [] }));
    await expect(validatingRequest(wrong).get(TYPES)).rejects.toThrow(OpenApiMismatch);
    const right = express().get(TYPES, (_req, res) => res.status(200).json(typeList([aType])));
    await validatingRequest(right).get(TYPES).expect(200);
  });
});

describe("the OpenAPI request check: a request the server accepted (2xx) must be as documented", () => {
  const CASES = "/a/demo/api/case/v2/";
  const page = jsonResponse(200, { matching_records: 0, cases: [] });
  const written = jsonResponse(200, { xform_id: "f", form_id: "f", cases: [] });
  const sent = (body: unknown) => ({ contentType: "application/json", text: JSON.stringify(body) });
  const checkSent = (method: string, url: string, res: CheckedResponse, req?: CheckedRequest) => () => validator.check(method, url, res, req);

  it("accepts documented parameters, a family's names, and repeated values where the parameter repeats", () => {
    expect(checkSent("GET", `${CASES}?limit=5&case_type=a&case_type=b&properties.x=1&indices.parent=c&fields.properties=x`, page)).not.toThrow();
    // Tastypie's lists say they ignore what they do not read (x-unknown-parameters)
    expect(checkSent("GET", `${TYPES}?format=json`, jsonResponse(200, typeList([])))).not.toThrow();
  });

  it("refuses an undocumented parameter, and a value its schema does not take", () => {
    expect(checkSent("GET", `${CASES}?colour=red`, page)).toThrow(/request: query parameter 'colour' is not documented/);
    expect(checkSent("GET", `${CASES}?limit=0`, page)).toThrow(/request: query parameter 'limit' does not match/);
    expect(checkSent("GET", `${CASES}?limit=ten`, page)).toThrow(/request: query parameter 'limit' does not match/);
    expect(checkSent("GET", "/a/demo/api/location/v2/?order_by=name", jsonResponse(200, typeList([])))).toThrow(/query parameter 'order_by'/);
  });

  it("refuses a JSON body the operation's request body does not describe, and a missing required body", () => {
    expect(checkSent("POST", CASES, written, sent([{ case_type: "t", create: true }]))).not.toThrow();
    expect(checkSent("POST", CASES, written, sent([{ case_type: "t", colour: "red" }]))).toThrow(/request: the body does not match/);
    expect(checkSent("POST", CASES, written, {})).toThrow(/request: no body was sent/);
    // the faces read a body as JSON whatever its Content-Type (legacy clients send text/plain): so does the check
    const plain = { case_type: "t", case_name: "n", owner_id: "o" };
    expect(checkSent("POST", CASES, written, { contentType: "text/plain", text: JSON.stringify(plain) })).not.toThrow();
    expect(checkSent("POST", CASES, written, { contentType: "text/plain", text: "x" })).toThrow(/request: the body is not JSON/);
  });

  it("leaves alone a request the server refused: tests send those outside the contract on purpose", () => {
    const refused = jsonResponse(400, { error: "'colour' is not a valid parameter." });
    expect(checkSent("GET", `${CASES}?colour=red`, refused)).not.toThrow();
    expect(checkSent("POST", CASES, jsonResponse(400, { error: "no" }), sent({ colour: "red" }))).not.toThrow();
  });
});

describe("fetch responses from a server of the suite (test/setup/each-file.ts)", () => {
  // a stand-in on loopback: domain `right` answers the types list as documented, `wrong` without
  // its meta, and `?download` as an undocumented content type
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const download = req.url!.endsWith("?download");
      res.setHeader("content-type", download ? "application/octet-stream" : "application/json; charset=utf-8");
      res.end(JSON.stringify(req.url!.startsWith("/a/wrong/") ? { objects: [] } : typeList([aType])));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  const types = (domain: string) => `${base}/a/${domain}/api/location_type/v1/`;

  it("a documented response passes, its body left whole for the caller", async () => {
    const res = await fetch(types("right"));
    expect(await res.json()).toEqual(typeList([aType]));
  });

  it("the global fetch fails a response not as documented, naming method, path, status and mismatch", async () => {
    await expect(fetch(types("wrong"))).rejects.toThrow(
      `OpenAPI: GET ${types("wrong")} → 200: the body does not match the schema: / must have required property 'meta'`,
    );
    expect(takeFetchMismatches()).toHaveLength(1);
    await expect(fetch(new Request(`${types("right")}?download`, { method: "GET" }))).rejects.toThrow(
      /→ 200: content type 'application\/octet-stream' is not documented/,
    );
    expect(takeFetchMismatches()).toHaveLength(1);
  });

  it("a mismatch the test swallows still fails it after the test", async () => {
    await fetch(types("wrong")).catch(() => undefined);
    expect(failOnFetchMismatches).toThrow(/^1 fetch response\(s\) not as the OpenAPI document says:\nOpenAPI: GET /);
    expect(failOnFetchMismatches).not.toThrow();
  });

  it("paths the document does not name, and servers off loopback, are left alone", async () => {
    await expect(fetch(`${base}/graphql`)).resolves.toMatchObject({ status: 200 });
    const teapot = async () => new Response(JSON.stringify({ error: "teapot" }), { status: 418, headers: { "content-type": "application/json" } });
    const fetchTeapot = checkingFetch(teapot);
    await expect(fetchTeapot("http://localhost/a/demo/api/location_type/v1/")).rejects.toThrow(/status 418 is not documented/);
    expect(takeFetchMismatches()).toHaveLength(1);
    await expect(fetchTeapot("http://gateway.example/a/demo/api/location_type/v1/")).resolves.toMatchObject({ status: 418 });
    await expect(checkFetchResponse("GET", "http://gateway.example/a/demo/api/location_type/v1/", await teapot())).rejects.toThrow(OpenApiMismatch);
  });
});
