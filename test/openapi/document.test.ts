import { validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.ts";

/** CONTRACT §7.2 `GET /openapi.json`: a strictly valid OpenAPI 3.1 document of every REST path. */

/** @readme/openapi-parser's rules, each an error rather than a warning (the strictest setting). */
const EVERY_RULE_AN_ERROR = {
  "array-without-items": "error",
  "duplicate-non-request-body-parameters": "error",
  "duplicate-operation-id": "error",
  "invalid-security-scheme-properties": "error",
  "non-optional-path-parameters": "error",
  "path-parameters-not-in-parameters": "error",
  "path-parameters-not-in-path": "error",
  "unknown-required-schema-property": "error",
} as const;

type ApiDocument = Parameters<typeof validate>[0];

let app: TestApp;
beforeAll(async () => {
  app = await build();
});
afterAll(() => app.close());

const served = async () => {
  const res = await app.http().get("/openapi.json").expect(200);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  // the document as a client reads it (any: the tests below walk into it)
  return JSON.parse(res.text) as Record<string, any>;
};

describe("GET /openapi.json", () => {
  it("needs no authentication and passes a strict OpenAPI 3.1 validator", async () => {
    const document = await served();
    expect(document.openapi).toMatch(/^3\.1\./);
    const result = await validate(document as ApiDocument, { validate: { rules: { openapi: EVERY_RULE_AN_ERROR } } });
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.specification).toBe("OpenAPI");
  });

  it("the validator refuses a document that drifts from its paths (a check that can fail)", async () => {
    const document = await served();
    delete document.paths["/a/{domain}/api/location_type/v1/"].parameters;
    const result = await validate(document as ApiDocument, { validate: { rules: { openapi: EVERY_RULE_AN_ERROR } } });
    expect(result.valid).toBe(false);
  });

  it("describes every REST path of CONTRACT §§2–4, location types and /oauth/token", async () => {
    const { paths } = await served();
    expect(Object.keys(paths).sort()).toEqual(
      [
        "/a/{domain}/api/case/v2/",
        "/a/{domain}/api/case/v2/bulk-fetch/",
        "/a/{domain}/api/case/v2/ext/{ext_id}/",
        "/a/{domain}/api/case/v2/{case_id}",
        "/a/{domain}/api/location/v2/",
        "/a/{domain}/api/location/v2/{location_id}",
        "/a/{domain}/api/location_type/v1/",
        "/a/{domain}/apps/api/import_app/",
        "/a/{domain}/apps/api/{app_id}/multimedia/",
        "/a/{domain}/apps/api/{app_id}/multimedia/status/{processing_id}/",
        "/a/{domain}/apps/api/{app_id}/multimedia/file/{path}",
        "/oauth/token",
      ].sort(),
    );
    const methods = (path: string) => Object.keys(paths[path]).filter((k) => ["get", "put", "post", "patch", "delete"].includes(k));
    expect(methods("/a/{domain}/api/case/v2/")).toEqual(["get", "post", "put"]);
    expect(methods("/a/{domain}/api/location/v2/")).toEqual(["get", "post", "patch"]);
    expect(methods("/a/{domain}/api/case/v2/{case_id}")).toEqual(["get", "put"]);
  });

  it("names the four security schemes: http basic, http digest, http bearer (OAuth) and apiKey in Authorization", async () => {
    const { components, security } = await served();
    const schemes = Object.values(components.securitySchemes as Record<string, Record<string, string>>);
    expect(schemes.map((s) => (s.type === "http" ? `http ${s.scheme}` : `${s.type} ${s.in} ${s.name}`)).sort()).toEqual([
      "apiKey header Authorization",
      "http basic",
      "http bearer",
      "http digest",
    ]);
    expect(security).toHaveLength(4);
  });

  it("documents the error bodies of each family, 405 with Allow, 413, 429 with Retry-After, and the multimedia 500", async () => {
    const document = await served();
    const { responses, schemas } = document.components;
    expect(schemas.Error.required).toEqual(["error"]);
    expect(schemas.AppsError.required).toEqual(["success", "error"]);
    expect(responses.MethodNotAllowed.headers.Allow.required).toBe(true);
    expect(responses.TooManyRequests.headers["Retry-After"].required).toBe(true);
    expect(responses.AppsTooManyRequests.content["application/json"].schema.$ref).toBe("#/components/schemas/AppsError");
    const caseCreate = document.paths["/a/{domain}/api/case/v2/"].post.responses;
    expect(caseCreate["413"].$ref).toBe("#/components/responses/PayloadTooLarge");
    const status = document.paths["/a/{domain}/apps/api/{app_id}/multimedia/status/{processing_id}/"].get.responses;
    expect(JSON.stringify(status["500"])).toContain("Multimedia processing task failed");
    const list = document.paths["/a/{domain}/api/location/v2/"].get.responses["200"].content;
    expect(Object.keys(list)).toEqual(["application/json", "application/xml"]);
  });

  it("lists the case serialization keys in the contract's order", async () => {
    const { schemas } = (await served()).components;
    expect(Object.keys(schemas.Case.properties)).toEqual(
      "domain case_id case_type case_name external_id owner_id date_opened last_modified server_last_modified indexed_on closed date_closed properties indices".split(
        " ",
      ),
    );
    expect(Object.keys(schemas.Location.properties)).toEqual(
      "domain last_modified latitude location_data location_id location_type_code location_type_name longitude name parent_location_id site_code".split(
        " ",
      ),
    );
    expect(schemas.Case["x-key-order"]).toBe(true);
  });
});
