import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createClient, type Client } from "graphql-ws";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { globalId } from "../../src/graphql/node.ts";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, createApp, png, uploadAndWait, zip } from "../helpers/archives.ts";
import { NO_RATE_LIMIT, rawRequest, type RawResponse } from "../helpers/raw-http.ts";
import { domainRow } from "../helpers/rows.ts";

/**
 * Issue #7 part 2: tenant isolation as a matrix. Domain A ("alpha") holds data; domain B ("beta")
 * holds almost none. For every REST path of the README and every Query, Mutation and Subscription
 * field of the built schema:
 *
 *  - on domain A, a member of B holding every permission in B, and a member of A lacking the
 *    permission the operation needs, get exactly the contract's 403 (REST, in the family's shape)
 *    or FORBIDDEN (GraphQL) with no data, whether the id named exists in A or is random;
 *  - on domain B, the member of B naming A's ids gets exactly the answer a random id gets (same
 *    status, same body once the ids are replaced by placeholders): no data, no counts, no
 *    existence hint;
 *  - afterwards A's rows are unchanged.
 */

const A = "alpha";
const B = "beta";
const NOT_MEMBER = (domain: string) => `You are not a member of the domain '${domain}'.`;
const NO_PERMISSION = "You do not have permission to do this.";
const ALL = ["access_api", "view_data", "edit_data", "view_locations", "edit_locations", "edit_apps"];
const without = (...names: string[]) => ALL.filter((p) => !names.includes(p));

type Access = "caseRead" | "caseWrite" | "locationRead" | "locationWrite" | "apps" | "superuser" | "self";

/** The ids an operation names: A's real ones, or random ones of the same form. */
interface Target {
  caseId: string;
  childId: string;
  externalId: string;
  locationId: string;
  siteCode: string;
  appId: string;
  processingId: string;
  formId: string;
  username: string;
}

let app: TestApp;
let base: string;
let existing: Target;
let random: Target;
let bAppId: string;
const users = {} as Record<"bAll" | "aAll" | "noCases" | "caseReader" | "noLocations" | "locationReader" | "noApps" | "noAccessApi", TestUser>;

/** The member of A lacking what `access` needs (the subtlest refusal: they hold everything else). */
function lackingFor(access: Access): TestUser | undefined {
  switch (access) {
    case "caseRead":
      return users.noCases;
    case "caseWrite":
      return users.caseReader;
    case "locationRead":
      return users.noLocations;
    case "locationWrite":
      return users.locationReader;
    case "apps":
      return users.noApps;
    case "superuser":
      return users.aAll;
    case "self":
      return undefined;
  }
}

/** Replaces every id of both targets by a placeholder, and drops what differs per request. */
function normalize(text: string): string {
  let out = text;
  for (const t of [existing, random]) {
    for (const [role, value] of Object.entries(t)) out = out.split(value).join(`<${role}>`).split(encodeURIComponent(value)).join(`<${role}>`);
  }
  return out
    .replace(/"xform_id":"[^"]*"/g, '"xform_id":"<x>"')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?/g, "<date>");
}

// ---- REST -------------------------------------------------------------------------------------

type Body = { json: unknown } | { multipart: { name: string; value: string | Buffer; filename?: string }[] };

interface RestRow {
  method: "GET" | "POST" | "PUT" | "PATCH";
  /** the path as the README's REST table writes it */
  template: string;
  shape: "plain" | "apps";
  access: Access;
  path: (domain: string, t: Target) => string;
  body?: (t: Target) => Body;
  /** on B with A's ids: compare whole bodies (default) or status only (an upsert creates in B) */
  cross?: "body" | "status" | "none";
}

const c = (d: string) => `/a/${d}/api/case/v2/`;
const l = (d: string) => `/a/${d}/api/location/v2/`;
const ap = (d: string) => `/a/${d}/apps/api/`;
const NEW_CASE = { case_type: "patient", case_name: "x", owner_id: "o" };

// biome-ignore format: one row per path reads as the table it is
const REST_ROWS: RestRow[] = [
  { method: "GET", template: "api/case/v2/", shape: "plain", access: "caseRead", path: (d, t) => `${c(d)}?external_id=${encodeURIComponent(t.externalId)}&owner_id=owner-a`, cross: "body" },
  { method: "POST", template: "api/case/v2/", shape: "plain", access: "caseWrite", path: (d) => c(d), body: (t) => ({ json: { ...NEW_CASE, indices: { parent: { case_id: t.caseId, case_type: "patient", relationship: "child" } } } }) },
  { method: "PUT", template: "api/case/v2/", shape: "plain", access: "caseWrite", path: (d) => c(d), body: (t) => ({ json: [{ create: false, case_id: t.caseId, case_name: "stolen" }] }) },
  { method: "GET", template: "api/case/v2/{case_id}", shape: "plain", access: "caseRead", path: (d, t) => `${c(d)}${t.caseId}` },
  { method: "PUT", template: "api/case/v2/{case_id}", shape: "plain", access: "caseWrite", path: (d, t) => `${c(d)}${t.caseId}`, body: () => ({ json: { case_name: "stolen" } }) },
  { method: "GET", template: "api/case/v2/{id},{id},…", shape: "plain", access: "caseRead", path: (d, t) => `${c(d)}${t.caseId},${t.childId}` },
  { method: "GET", template: "api/case/v2/ext/{external_id}/", shape: "plain", access: "caseRead", path: (d, t) => `${c(d)}ext/${encodeURIComponent(t.externalId)}/` },
  { method: "PUT", template: "api/case/v2/ext/{external_id}/", shape: "plain", access: "caseWrite", path: (d, t) => `${c(d)}ext/${encodeURIComponent(t.externalId)}/`, body: () => ({ json: { case_name: "upserted", case_type: "patient", owner_id: "o" } }), cross: "status" },
  { method: "POST", template: "api/case/v2/bulk-fetch/", shape: "plain", access: "caseRead", path: (d) => `${c(d)}bulk-fetch/`, body: (t) => ({ json: { case_ids: [t.caseId, t.childId], external_ids: [t.externalId] } }) },
  { method: "GET", template: "api/location/v2/", shape: "plain", access: "locationRead", path: (d, t) => `${l(d)}?format=json&parent_location_id=${t.locationId}&site_code=${t.siteCode}` },
  { method: "POST", template: "api/location/v2/", shape: "plain", access: "locationWrite", path: (d) => l(d), body: (t) => ({ json: { name: "Sub", location_type_code: "state", parent_location_id: t.locationId } }) },
  { method: "PATCH", template: "api/location/v2/", shape: "plain", access: "locationWrite", path: (d) => l(d), body: (t) => ({ json: { objects: [{ location_id: t.locationId, name: "stolen" }] } }) },
  { method: "GET", template: "api/location/v2/{location_id}", shape: "plain", access: "locationRead", path: (d, t) => `${l(d)}${t.locationId}?format=json` },
  { method: "PUT", template: "api/location/v2/{location_id}", shape: "plain", access: "locationWrite", path: (d, t) => `${l(d)}${t.locationId}`, body: () => ({ json: { name: "stolen" } }) },
  { method: "GET", template: "api/location_type/v1/", shape: "plain", access: "locationRead", path: (d) => `/a/${d}/api/location_type/v1/`, cross: "none" },
  { method: "POST", template: "apps/api/import_app/", shape: "apps", access: "apps", path: (d) => `${ap(d)}import_app/`, body: (t) => ({ multipart: [{ name: "app_id", value: t.appId }, { name: "app_file", value: JSON.stringify(appSource()), filename: "app.json" }] }) },
  { method: "POST", template: "apps/api/{app_id}/multimedia/", shape: "apps", access: "apps", path: (d, t) => `${ap(d)}${t.appId}/multimedia/`, body: () => ({ multipart: [{ name: "bulk_upload_file", value: Buffer.from(`PK\u0005\u0006${"\u0000".repeat(18)}`), filename: "m.zip" }] }) },
  { method: "GET", template: "apps/api/{app_id}/multimedia/status/{processing_id}/", shape: "apps", access: "apps", path: (d, t) => `${ap(d)}${t.appId}/multimedia/status/${t.processingId}/` },
  // on B: B's own app, A's processing id (a job of another domain must look unknown)
  { method: "GET", template: "apps/api/{app_id}/multimedia/status/{processing_id}/", shape: "apps", access: "apps", path: (d, t) => `${ap(d)}${d === B ? bAppId : t.appId}/multimedia/status/${t.processingId}/` },
  { method: "GET", template: "apps/api/{app_id}/multimedia/file/{path}", shape: "apps", access: "apps", path: (d, t) => `${ap(d)}${t.appId}/multimedia/file/commcare/image/a.png` },
];

function multipartBody(parts: { name: string; value: string | Buffer; filename?: string }[]): { body: Buffer; type: string } {
  const chunks = parts.flatMap((p) => [
    Buffer.from(`--ISO\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ""}\r\n\r\n`),
    Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value),
    Buffer.from("\r\n"),
  ]);
  return { body: Buffer.concat([...chunks, Buffer.from("--ISO--\r\n")]), type: "multipart/form-data; boundary=ISO" };
}

function sendRest(row: RestRow, domain: string, t: Target, user: TestUser): Promise<RawResponse> {
  const body = row.body?.(t);
  let payload: Buffer | string | undefined;
  let type: string | undefined;
  if (body && "json" in body) [payload, type] = [JSON.stringify(body.json), "application/json"];
  else if (body) ({ body: payload, type } = multipartBody(body.multipart));
  return rawRequest(base, {
    method: row.method,
    path: row.path(domain, t),
    headers: { Authorization: user.authorization, ...(type ? { "Content-Type": type } : {}) },
    body: payload,
  });
}

const label = (row: RestRow) => `${row.method} ${row.template}`;

/** The contract's 403 in the family's shape, and nothing else. */
function expectRefusal(res: RawResponse, row: RestRow, message: string): void {
  expect(res.status, res.text).toBe(403);
  expect(res.json).toEqual(row.shape === "apps" ? { success: false, error: message } : { error: message });
}

// ---- GraphQL ----------------------------------------------------------------------------------

interface GqlRow {
  field: string;
  type: "query" | "mutation" | "subscription";
  access: Access;
  /** the operation naming `domain` and the ids of `t` */
  doc: (domain: string, t: Target) => { query: string; variables?: Record<string, unknown> };
  /** sent as a GraphQL multipart request with this file */
  upload?: () => Buffer;
  /** on B with A's ids compared with random ids (default: yes, unless superuser or self) */
  cross?: boolean;
  /** refused by answering null, not FORBIDDEN (node, nodes: "not yours" looks like "not there") */
  hides?: boolean;
}

const CASE_SEL = "caseId caseName externalId properties indices { caseId } parent { caseId } children { caseId } forms { formId }";
const LOC_SEL = "locationId name siteCode parent { locationId } children { locationId }";

// biome-ignore format: one row per field reads as the table it is
const GQL_ROWS: GqlRow[] = [
  // Query
  { field: "apiKeys", type: "query", access: "superuser", doc: (_d, t) => ({ query: `{ apiKeys(username: "${t.username}") { id prefix } }` }) },
  { field: "app", type: "query", access: "apps", doc: (d, t) => ({ query: `{ app(domain: "${d}", appId: "${t.appId}") { id appId name versions { id source } multimedia { id md5 } } }` }) },
  { field: "apps", type: "query", access: "apps", doc: (d) => ({ query: `{ apps(domain: "${d}") { id name } }` }), cross: false },
  { field: "case", type: "query", access: "caseRead", doc: (d, t) => ({ query: `{ case(domain: "${d}", caseId: "${t.caseId}") { ${CASE_SEL} } }` }) },
  { field: "caseByExternalId", type: "query", access: "caseRead", doc: (d, t) => ({ query: `{ caseByExternalId(domain: "${d}", externalId: "${t.externalId}") { ${CASE_SEL} } }` }) },
  { field: "cases", type: "query", access: "caseRead", doc: (d, t) => ({ query: `{ cases(domain: "${d}", filter: { externalId: ["${t.externalId}"] }) { totalCount nodes { caseId } } }` }) },
  { field: "casesByIds", type: "query", access: "caseRead", doc: (d, t) => ({ query: `{ casesByIds(domain: "${d}", caseIds: ["${t.caseId}", "${t.childId}"], externalIds: ["${t.externalId}"]) { matchingRecords missingRecords entries { requestedId case { caseId } } } }` }) },
  { field: "domains", type: "query", access: "superuser", doc: () => ({ query: "{ domains { name } }" }) },
  { field: "form", type: "query", access: "caseRead", doc: (d, t) => ({ query: `{ form(domain: "${d}", formId: "${t.formId}") { formId caseIds xml username } }` }) },
  { field: "location", type: "query", access: "locationRead", doc: (d, t) => ({ query: `{ location(domain: "${d}", locationId: "${t.locationId}") { ${LOC_SEL} } }` }) },
  { field: "locationBySiteCode", type: "query", access: "locationRead", doc: (d, t) => ({ query: `{ locationBySiteCode(domain: "${d}", siteCode: "${t.siteCode}") { ${LOC_SEL} } }` }) },
  { field: "locationTypes", type: "query", access: "locationRead", doc: (d) => ({ query: `{ locationTypes(domain: "${d}") { code } }` }), cross: false },
  { field: "locations", type: "query", access: "locationRead", doc: (d, t) => ({ query: `{ locations(domain: "${d}", filter: { parentLocationId: "${t.locationId}" }) { totalCount nodes { locationId } } }` }) },
  { field: "node", type: "query", access: "caseRead", hides: true, doc: (d, t) => ({ query: `{ node(id: "${globalId("Case", d, t.caseId)}") { id ... on Case { caseName } } }` }) },
  { field: "nodes", type: "query", access: "caseRead", hides: true, doc: (d, t) => ({ query: `{ nodes(ids: ["${globalId("Case", d, t.caseId)}", "${globalId("Form", d, t.formId)}"]) { id ... on Form { xml } } }` }) },
  { field: "me", type: "query", access: "self", doc: () => ({ query: "{ me { username memberships { domain permissions } } }" }) },
  { field: "multimediaJob", type: "query", access: "apps", doc: (d, t) => ({ query: `{ multimediaJob(domain: "${d}", processingId: "${t.processingId}") { processingId complete restStatus result { matchedCount } } }` }) },
  { field: "multimediaJobs", type: "query", access: "apps", doc: (d, t) => ({ query: `{ multimediaJobs(domain: "${d}", appId: "${t.appId}") { totalCount edges { cursor node { id processingId state fileName restStatus result { matchedCount } } } pageInfo { endCursor } } }` }) },
  { field: "users", type: "query", access: "superuser", doc: (d) => ({ query: `{ users(domain: "${d}") { username } }` }) },
  // Mutation
  { field: "bulkLocations", type: "mutation", access: "locationWrite", doc: (d, t) => ({ query: `mutation { bulkLocations(domain: "${d}", items: [{ locationId: "${t.locationId}", name: "stolen" }]) }` }) },
  { field: "bulkWriteCases", type: "mutation", access: "caseWrite", doc: (d, t) => ({ query: `mutation { bulkWriteCases(domain: "${d}", items: [{ create: false, caseId: "${t.caseId}", caseName: "stolen" }]) { xformId } }` }) },
  { field: "createApiKey", type: "mutation", access: "superuser", doc: (_d, t) => ({ query: `mutation { createApiKey(username: "${t.username}") { key } }` }) },
  { field: "createCase", type: "mutation", access: "caseWrite", doc: (d, t) => ({ query: `mutation { createCase(domain: "${d}", input: { caseType: "patient", caseName: "x", ownerId: "o", indices: { parent: { case_id: "${t.caseId}", case_type: "patient", relationship: "child" } } }) { xformId } }` }) },
  { field: "createDomain", type: "mutation", access: "superuser", doc: () => ({ query: `mutation { createDomain(name: "evil-${randomBytes(3).toString("hex")}") { id } }` }) },
  { field: "createLocation", type: "mutation", access: "locationWrite", doc: (d, t) => ({ query: `mutation { createLocation(domain: "${d}", input: { name: "Sub", locationTypeCode: "state", parentLocationId: "${t.locationId}" }) { locationId } }` }) },
  { field: "createLocationType", type: "mutation", access: "superuser", doc: (d) => ({ query: `mutation { createLocationType(domain: "${d}", input: { code: "evil", name: "Evil" }) { code } }` }) },
  { field: "createOAuthClient", type: "mutation", access: "superuser", doc: (_d, t) => ({ query: `mutation { createOAuthClient(input: { name: "evil", grants: [CLIENT_CREDENTIALS], username: "${t.username}" }) { clientId } }` }) },
  { field: "createUser", type: "mutation", access: "superuser", doc: (d) => ({ query: `mutation { createUser(input: { username: "evil-${randomBytes(3).toString("hex")}", password: "pw", domain: "${d}", permissions: [ACCESS_API, EDIT_DATA] }) { id } }` }) },
  { field: "deleteLocationType", type: "mutation", access: "superuser", doc: (d) => ({ query: `mutation { deleteLocationType(domain: "${d}", code: "zone") }` }) },
  { field: "importApp", type: "mutation", access: "apps", upload: () => Buffer.from(JSON.stringify(appSource())), doc: (d, t) => ({ query: "mutation($d: String!, $id: ID, $file: Upload!) { importApp(domain: $d, appId: $id, file: $file) { appId version } }", variables: { d, id: t.appId } }) },
  { field: "removeMembership", type: "mutation", access: "superuser", doc: (d, t) => ({ query: `mutation { removeMembership(domain: "${d}", username: "${t.username}") }` }) },
  { field: "revokeApiKey", type: "mutation", access: "superuser", doc: () => ({ query: `mutation { revokeApiKey(id: "${randomUUID()}") { id } }` }) },
  { field: "revokeOAuthTokens", type: "mutation", access: "superuser", doc: (_d, t) => ({ query: `mutation { revokeOAuthTokens(username: "${t.username}") }` }) },
  { field: "setPermissions", type: "mutation", access: "superuser", doc: (d) => ({ query: `mutation { setPermissions(domain: "${d}", username: "${users.bAll.username}", permissions: [ACCESS_API, VIEW_DATA]) { domain } }` }) },
  { field: "setUserActive", type: "mutation", access: "superuser", doc: (_d, t) => ({ query: `mutation { setUserActive(username: "${t.username}", active: false) { id } }` }) },
  { field: "updateCase", type: "mutation", access: "caseWrite", doc: (d, t) => ({ query: `mutation { updateCase(domain: "${d}", caseId: "${t.caseId}", input: { caseName: "stolen" }) { xformId } }` }) },
  { field: "updateLocation", type: "mutation", access: "locationWrite", doc: (d, t) => ({ query: `mutation { updateLocation(domain: "${d}", locationId: "${t.locationId}", input: { name: "stolen" }) { locationId } }` }) },
  { field: "updateLocationType", type: "mutation", access: "superuser", doc: (d) => ({ query: `mutation { updateLocationType(domain: "${d}", code: "country", name: "Stolen") { code } }` }) },
  { field: "uploadMultimedia", type: "mutation", access: "apps", upload: () => Buffer.from(`PK\u0005\u0006${"\u0000".repeat(18)}`), doc: (d, t) => ({ query: "mutation($d: String!, $id: ID!, $file: Upload!) { uploadMultimedia(domain: $d, appId: $id, file: $file) }", variables: { d, id: t.appId } }) },
  { field: "upsertCase", type: "mutation", access: "caseWrite", doc: (d, t) => ({ query: `mutation { upsertCase(domain: "${d}", externalId: "${t.externalId}", input: { caseName: "stolen" }) { xformId } }` }) },
  // Subscription
  { field: "caseChanged", type: "subscription", access: "caseRead", doc: (d) => ({ query: `subscription { caseChanged(domain: "${d}") { caseId } }` }), cross: false },
  { field: "multimediaJobs", type: "subscription", access: "apps", doc: (d, t) => ({ query: `subscription { multimediaJobs(domain: "${d}", appId: "${t.appId}") { processingId state restStatus } }` }) },
  { field: "multimediaProgress", type: "subscription", access: "apps", doc: (d, t) => ({ query: `subscription { multimediaProgress(domain: "${d}", processingId: "${t.processingId}") { processingId complete restStatus } }` }) },
];

function sendGql(row: GqlRow, domain: string, t: Target, user: TestUser): Promise<RawResponse> {
  const { query, variables } = row.doc(domain, t);
  if (!row.upload) {
    return rawRequest(base, {
      method: "POST",
      path: "/graphql",
      headers: { Authorization: user.authorization, "Content-Type": "application/json" },
      body: JSON.stringify({ query, variables }),
    });
  }
  const { body, type } = multipartBody([
    { name: "operations", value: JSON.stringify({ query, variables: { ...variables, file: null } }) },
    { name: "map", value: JSON.stringify({ 0: ["variables.file"] }) },
    { name: "0", value: row.upload(), filename: "f.bin" },
  ]);
  return rawRequest(base, {
    method: "POST",
    path: "/graphql",
    headers: { Authorization: user.authorization, "Content-Type": type, "apollo-require-preflight": "true" },
    body,
  });
}

/** The first message of a subscription (over graphql-transport-ws), as {data, errors}. */
async function firstEvent(
  row: GqlRow,
  domain: string,
  t: Target,
  user: TestUser,
): Promise<{ data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }> {
  const url = `${base.replace("http", "ws")}/graphql`;
  const client: Client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: user.authorization },
    retryAttempts: 0,
    lazy: true,
  });
  try {
    const events = client.iterate(row.doc(domain, t));
    const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 3000));
    const first = await Promise.race([events.next(), timeout]);
    if (first === "timeout") return { data: "no event within 3 s" };
    const value = first.value as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] } | undefined;
    await events.return?.();
    return value ?? {};
  } catch (error) {
    // graphql-ws rejects with the error list when the server answers the subscribe with errors
    if (Array.isArray(error)) return { errors: error };
    throw error;
  } finally {
    await client.dispose();
  }
}

async function gqlResult(
  row: GqlRow,
  domain: string,
  t: Target,
  user: TestUser,
): Promise<{ status: number; data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }> {
  if (row.type === "subscription") return { status: 101, ...(await firstEvent(row, domain, t, user)) };
  const res = await sendGql(row, domain, t, user);
  return { status: res.status, ...(res.json as object) };
}

/** The refusal of `row`: FORBIDDEN, or for a row that hides, data of nulls and no error. */
function expectRefused(row: GqlRow, result: Awaited<ReturnType<typeof gqlResult>>, message: string | undefined): void {
  if (!row.hides) {
    expectForbidden(result, message);
    return;
  }
  expect(result.errors, JSON.stringify(result)).toBeUndefined();
  expect(JSON.stringify(result.data).replace(/null/g, ""), JSON.stringify(result)).toMatch(/^\{"[a-z]+":\[?,?\]?\}$/);
}

/** FORBIDDEN and nothing else: no data for the field, no other error. */
function expectForbidden(result: Awaited<ReturnType<typeof gqlResult>>, message: string | undefined): void {
  expect(result.status, JSON.stringify(result)).toBeLessThan(500);
  const codes = (result.errors ?? []).map((e) => e.extensions?.code);
  expect(codes, JSON.stringify(result)).toEqual(["FORBIDDEN"]);
  if (message) expect(result.errors![0].message).toBe(message);
  const data = result.data as Record<string, unknown> | null | undefined;
  expect(data === null || data === undefined || Object.values(data).every((v) => v === null), JSON.stringify(result)).toBe(true);
}

/** A's rows (every table with a domain), to prove that nothing here changed them. */
async function domainRows(domainName: string): Promise<Record<string, string>> {
  const { id } = await domainRow(app, domainName);
  const out: Record<string, string> = {};
  for (const table of [
    "cases",
    "case_indices",
    "forms",
    "locations",
    "location_types",
    "apps",
    "multimedia_files",
    "multimedia_jobs",
    "memberships",
  ]) {
    const where = table === "forms" ? "domain_id = $1::uuid AND problem IS NULL" : "domain_id = $1::uuid";
    const [row] = await app.db.prisma.$queryRawUnsafe<{ n: number; h: string }[]>(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(to_jsonb(t)::text, '|' ORDER BY to_jsonb(t)::text), '')) AS h FROM "${table}" t WHERE ${where}`,
      id,
    );
    out[table] = `${row.n}:${row.h}`;
  }
  return out;
}

// ---- the matrix --------------------------------------------------------------------------------

let aRowsBefore: Record<string, string>;

describe(`tenant isolation matrix: ${REST_ROWS.length} REST rows and ${GQL_ROWS.length} GraphQL fields × 2 callers, plus B with A's ids`, () => {
  beforeAll(async () => {
    app = await build(NO_RATE_LIMIT);
    await createDomain(app, A);
    await createDomain(app, B);
    for (const d of [A, B]) {
      await (await app.services.locationTypes.in(app.root, d, "admin")).create({ code: "country", name: "Country", parentCode: null });
      await (await app.services.locationTypes.in(app.root, d, "admin")).create({ code: "state", name: "State", parentCode: "country" });
      await (await app.services.locationTypes.in(app.root, d, "admin")).create({ code: "zone", name: "Zone", parentCode: null });
    }
    users.bAll = await createUser(app, { domain: B, permissions: ALL });
    users.aAll = await createUser(app, { domain: A, permissions: ALL });
    users.noCases = await createUser(app, { domain: A, permissions: without("view_data", "edit_data") });
    users.caseReader = await createUser(app, { domain: A, permissions: without("edit_data") });
    users.noLocations = await createUser(app, { domain: A, permissions: without("view_locations", "edit_locations") });
    users.locationReader = await createUser(app, { domain: A, permissions: without("edit_locations") });
    users.noApps = await createUser(app, { domain: A, permissions: without("edit_apps") });
    users.noAccessApi = await createUser(app, { domain: A, permissions: without("access_api") });
    base = await app.server.listen(0, "127.0.0.1");

    const owner = users.aAll.authorization;
    const post = (path: string, body: unknown) =>
      rawRequest(base, { method: "POST", path, headers: { Authorization: owner, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const parent = await post(c(A), {
      ...NEW_CASE,
      case_name: "secret",
      owner_id: "owner-a",
      external_id: "ext-alpha-1",
      properties: { diagnosis: "secret" },
    });
    expect(parent.status, parent.text).toBe(200);
    const parentBody = parent.json as { xform_id: string; case: { case_id: string } };
    const child = await post(c(A), {
      ...NEW_CASE,
      owner_id: "owner-a",
      indices: { parent: { case_id: parentBody.case.case_id, case_type: "patient", relationship: "child" } },
    });
    expect(child.status, child.text).toBe(200);
    const location = await post(l(A), { name: "Secret Land", location_type_code: "country", site_code: "alpha_site" });
    expect(location.status, location.text).toBe(201);
    const appId = await createApp(app, owner, A, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
    const done = await uploadAndWait(app, owner, A, appId, await zip([{ name: "commcare/image/a.png", data: png(7) }]));
    expect(done.body.matched_count).toBe(1);
    bAppId = await createApp(app, users.bAll.authorization, B, appSource(), "B app");
    existing = {
      caseId: parentBody.case.case_id,
      childId: (child.json as { case: { case_id: string } }).case.case_id,
      externalId: "ext-alpha-1",
      locationId: (location.json as { location_id: string }).location_id,
      siteCode: "alpha_site",
      appId,
      processingId: done.body.processing_id,
      formId: parentBody.xform_id,
      username: users.aAll.username,
    };
    random = {
      caseId: randomUUID(),
      childId: randomUUID(),
      externalId: `ext-${randomBytes(6).toString("hex")}`,
      locationId: randomUUID(),
      siteCode: `site_${randomBytes(4).toString("hex")}`,
      appId: randomBytes(16).toString("hex"),
      processingId: `dl-${randomBytes(16).toString("hex")}`,
      formId: randomUUID(),
      username: `nobody${randomBytes(4).toString("hex")}`,
    };
    aRowsBefore = await domainRows(A);
  });
  afterAll(async () => {
    await app?.close();
  });

  describe("the matrix is complete", () => {
    it("has a REST row for every method and path of docs/rest.md's table", () => {
      const doc = readFileSync(path.resolve(import.meta.dirname, "../../docs/rest.md"), "utf8");
      const section = doc.slice(doc.indexOf("## Paths"), doc.indexOf("\n## ", doc.indexOf("## Paths") + 5));
      // the domain's paths (relative to /a/{domain}/); absolute ones such as /openapi.json hold no domain data
      const listed = [...section.matchAll(/^\| ([A-Z, ]+) \| `([^`/][^`]*)` \|/gm)].flatMap(([, methods, p]) =>
        methods.split(",").map((m) => `${m.trim()} ${p}`),
      );
      expect(listed.length).toBeGreaterThan(10);
      const covered = new Set(REST_ROWS.map(label));
      expect(listed.filter((entry) => !covered.has(entry))).toEqual([]);
    });

    it("has a GraphQL row for every field of Query, Mutation and Subscription in the built schema", async () => {
      const schema = await buildGatewaySchema();
      const fields = (["query", "mutation", "subscription"] as const).flatMap((type) => {
        const root = type === "query" ? schema.getQueryType() : type === "mutation" ? schema.getMutationType() : schema.getSubscriptionType();
        return Object.keys(root?.getFields() ?? {}).map((name) => `${type} ${name}`);
      });
      const rows = GQL_ROWS.map((r) => `${r.type} ${r.field}`);
      expect(
        fields.filter((f) => !rows.includes(f)),
        "schema fields without a matrix row",
      ).toEqual([]);
      expect(
        rows.filter((r) => !fields.includes(r)),
        "matrix rows without a schema field",
      ).toEqual([]);
    });
  });

  describe("REST on domain A", () => {
    describe.each(REST_ROWS.map((row) => [label(row), row] as const))("%s", (_name, row) => {
      it(`B member (every permission in B) → 403 "${NOT_MEMBER(A)}", the same for A's id and a random id`, async () => {
        for (const t of [existing, random]) expectRefusal(await sendRest(row, A, t, users.bAll), row, NOT_MEMBER(A));
      });
      it(`A member lacking ${row.access} → 403 "${NO_PERMISSION}", the same for A's id and a random id`, async () => {
        for (const t of [existing, random]) expectRefusal(await sendRest(row, A, t, lackingFor(row.access)!), row, NO_PERMISSION);
      });
      if (row.access !== "apps") {
        it(`A member without access_api → 403 "${NO_PERMISSION}"`, async () => {
          for (const t of [existing, random]) expectRefusal(await sendRest(row, A, t, users.noAccessApi), row, NO_PERMISSION);
        });
      }
    });
  });

  describe("REST on domain B with A's ids: the same answer as for random ids", () => {
    it.each(REST_ROWS.filter((r) => r.cross !== "none").map((row) => [label(row), row] as const))("%s", async (_name, row) => {
      const mine = await sendRest(row, B, existing, users.bAll);
      const theirs = await sendRest(row, B, random, users.bAll);
      expect(mine.status, mine.text).toBeLessThan(500);
      if (row.cross === "status") {
        expect(mine.status).toBe(theirs.status);
        expect(mine.text).not.toContain(existing.caseId);
        return;
      }
      expect(`${mine.status} ${normalize(mine.text)}`).toBe(`${theirs.status} ${normalize(theirs.text)}`);
      // nothing of A in the body: no A id other than the one the request itself named
      for (const secret of ["secret", "Secret Land", "owner-a"]) expect(mine.text).not.toContain(secret);
    });
  });

  describe("GraphQL on domain A", () => {
    describe.each(GQL_ROWS.filter((r) => r.access !== "self").map((row) => [`${row.type} ${row.field}`, row] as const))("%s", (_name, row) => {
      it("B member (every permission in B) → FORBIDDEN, no data, the same for A's id and a random id", async () => {
        const results = [];
        for (const t of [existing, random]) {
          const result = await gqlResult(row, A, t, users.bAll);
          expectRefused(row, result, row.access === "superuser" ? undefined : NOT_MEMBER(A));
          results.push(normalize(JSON.stringify(result)));
        }
        expect(results[0]).toBe(results[1]);
      });
      it(`A member lacking ${row.access} → FORBIDDEN, no data`, async () => {
        const results = [];
        for (const t of [existing, random]) {
          const result = await gqlResult(row, A, t, lackingFor(row.access)!);
          expectRefused(row, result, row.access === "superuser" ? undefined : NO_PERMISSION);
          results.push(normalize(JSON.stringify(result)));
        }
        expect(results[0]).toBe(results[1]);
      });
    });

    it("query me: a B member sees their own memberships only", async () => {
      const res = await gqlResult(GQL_ROWS.find((r) => r.field === "me")!, B, existing, users.bAll);
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ me: { username: users.bAll.username, memberships: [{ domain: B, permissions: ALL.map((p) => p.toUpperCase()) }] } });
    });
  });

  describe("GraphQL on domain B with A's ids: the same answer as for random ids", () => {
    it.each(
      GQL_ROWS.filter((r) => r.cross !== false && r.access !== "superuser" && r.access !== "self").map(
        (row) => [`${row.type} ${row.field}`, row] as const,
      ),
    )("%s", async (_name, row) => {
      const mine = await gqlResult(row, B, existing, users.bAll);
      const theirs = await gqlResult(row, B, random, users.bAll);
      expect(mine.status).toBeLessThan(500);
      expect((mine.errors ?? []).map((e) => e.extensions?.code)).not.toContain("INTERNAL_SERVER_ERROR");
      const text = normalize(JSON.stringify(mine));
      expect(text).toBe(normalize(JSON.stringify(theirs)));
      for (const secret of ["secret", "Secret Land", "owner-a"]) expect(JSON.stringify(mine)).not.toContain(secret);
    });

    it("subscription caseChanged on B does not see a write in A", async () => {
      const url = `${base.replace("http", "ws")}/graphql`;
      const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: users.bAll.authorization }, retryAttempts: 0 });
      try {
        const events = client.iterate<{ caseChanged: { caseId: string } }>({ query: `subscription { caseChanged(domain: "${B}") { caseId } }` });
        const first = events.next();
        await new Promise((r) => setTimeout(r, 300)); // let the subscription start
        const inA = await rawRequest(base, {
          method: "POST",
          path: c(A),
          headers: { Authorization: users.aAll.authorization, "Content-Type": "application/json" },
          body: JSON.stringify(NEW_CASE),
        });
        const inB = await rawRequest(base, {
          method: "POST",
          path: c(B),
          headers: { Authorization: users.bAll.authorization, "Content-Type": "application/json" },
          body: JSON.stringify(NEW_CASE),
        });
        expect([inA.status, inB.status]).toEqual([200, 200]);
        const { value } = await first;
        expect(value?.data?.caseChanged.caseId).toBe((inB.json as { case: { case_id: string } }).case.case_id);
        await events.return?.();
      } finally {
        await client.dispose();
      }
      aRowsBefore = await domainRows(A); // the case this test wrote in A on purpose
    });
  });

  describe("subscription refusals keep their code over the WebSocket", () => {
    it("subscription multimediaProgress on A as a B member is FORBIDDEN", async () => {
      const row = GQL_ROWS.find((r) => r.field === "multimediaProgress")!;
      const result = await gqlResult(row, A, existing, users.bAll);
      expect((result.errors ?? []).map((e) => e.extensions?.code)).toEqual(["FORBIDDEN"]);
    });
    it("subscription multimediaProgress on B with A's processing id is NOT_FOUND, as a random id", async () => {
      const row = GQL_ROWS.find((r) => r.field === "multimediaProgress")!;
      const result = await gqlResult(row, B, existing, users.bAll);
      expect((result.errors ?? []).map((e) => e.extensions?.code)).toEqual(["NOT_FOUND"]);
    });
  });

  it("left A's rows unchanged", async () => {
    expect(await domainRows(A)).toEqual(aRowsBefore);
  });
});
