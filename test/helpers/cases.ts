/** The case API over HTTP as an editor of "demo", and cases arranged through the services. */
import { caseAction } from "../../src/cases/case.actions.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "./app.ts";

/** An app with domain "demo", an editor (edit_data) and a reader (view_data) in it. */
export interface CaseTestApp extends TestApp {
  editor: TestUser;
  reader: TestUser;
  /** POST /a/demo/api/case/v2/ as the editor; returns the response */
  post(body: unknown, query?: string): Promise<import("supertest").Response>;
  put(path: string, body: unknown): Promise<import("supertest").Response>;
  get(path: string): Promise<import("supertest").Response>;
  /** creates one case through the API and returns its serialized form */
  createCase(fields?: Record<string, unknown>): Promise<Record<string, any>>;
}

/** CONTRACT §2 case serialization keys, in order. */
export const CASE_KEYS = [
  "domain",
  "case_id",
  "case_type",
  "case_name",
  "external_id",
  "owner_id",
  "date_opened",
  "last_modified",
  "server_last_modified",
  "indexed_on",
  "closed",
  "date_closed",
  "properties",
  "indices",
];

export const CASES = "/a/demo/api/case/v2/";

export async function buildCaseApp(): Promise<CaseTestApp> {
  const app = await build();
  await createDomain(app, "demo");
  const editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  const reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  const post = (body: unknown, query = "") =>
    app
      .http()
      .post(`${CASES}${query}`)
      .set("Authorization", editor.authorization)
      .send(body as object);
  const put = (path: string, body: unknown) =>
    app
      .http()
      .put(`${CASES}${path}`)
      .set("Authorization", editor.authorization)
      .send(body as object);
  const get = (path: string) => app.http().get(`${CASES}${path}`).set("Authorization", editor.authorization);
  let counter = 0;
  return {
    ...app,
    editor,
    reader,
    post,
    put,
    get,
    async createCase(fields = {}) {
      counter += 1;
      const res = await post({ case_type: "patient", case_name: `case ${counter}`, owner_id: "owner-1", ...fields });
      if (res.status !== 200) throw new Error(`createCase failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.case;
    },
  };
}

/**
 * A case of another domain (created here, "other" unless named), written through the services:
 * an id that names a real case, but none of "demo".
 */
export async function caseInAnotherDomain(app: TestApp, domain = "other"): Promise<string> {
  await createDomain(app, domain);
  const scope = await app.services.caseWrites.in(app.root, domain);
  const item = { caseType: "patient", caseName: "foreign", ownerId: "o" };
  const { cases } = await scope.write([caseAction(item, { kind: "create" })], { deviceId: "test", bulk: false });
  return cases[0].id;
}
