import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDomain, createUser } from "../helpers/app.ts";
import { buildCaseApp, CASES, type CaseTestApp } from "../helpers/cases.ts";

/**
 * CONTRACT §2 "Bulk fetch": POST bulk-fetch/ with case_ids and/or external_ids; one entry per
 * requested id in request order (case ids first), duplicates repeated, stubs for missing ids.
 */

let app: CaseTestApp;
beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

type Case = Record<string, any>;

function bulkFetch(body: unknown, options: { query?: string; path?: string; authorization?: string; raw?: boolean } = {}) {
  const req = app
    .http()
    .post(`${options.path ?? `${CASES}bulk-fetch/`}${options.query ?? ""}`)
    .set("Authorization", options.authorization ?? app.editor.authorization);
  if (options.raw) return req.set("Content-Type", "application/json").send(body as string);
  return req.send(body as object);
}

/** Three cases: A (ext-a), B (ext-b), C (no external id). */
async function three(): Promise<Record<string, Case>> {
  const res = await app.post([
    { create: true, case_type: "t", case_name: "A", owner_id: "o", external_id: "ext-a" },
    { create: true, case_type: "t", case_name: "B", owner_id: "o", external_id: "ext-b" },
    { create: true, case_type: "t", case_name: "C", owner_id: "o" },
  ]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Object.fromEntries(res.body.cases.map((c: Case) => [c.case_name, c]));
}

const MISSING_ERROR = { error: "Payload must include 'case_ids' or 'external_ids' fields" };

describe("body rules", () => {
  it("neither case_ids nor external_ids, or both empty: 400 Payload must include 'case_ids' or 'external_ids' fields", async () => {
    for (const body of [{}, { case_ids: [] }, { external_ids: [] }, { case_ids: [], external_ids: [] }, { other: ["x"] }, { case_ids: null }]) {
      const res = await bulkFetch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toEqual(MISSING_ERROR);
    }
  });

  it("a list given as null is taken as absent: the other list is served, and the OpenAPI document says so", async () => {
    const { A } = await three();
    for (const body of [
      { case_ids: [A!.case_id], external_ids: null },
      { case_ids: null, external_ids: ["ext-a"] },
    ]) {
      const res = await bulkFetch(body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.body.cases.map((c: Case) => c.case_name)).toEqual(["A"]);
    }
  });

  it("a body that is not an object is 400 too (a list, a string, a number, null)", async () => {
    for (const raw of ["[]", '["x"]', '"case_ids"', "42", "null", "true"]) {
      const res = await bulkFetch(raw, { raw: true });
      expect(res.status, raw).toBe(400);
      expect(res.body, raw).toEqual(MISSING_ERROR);
    }
  });

  it("invalid JSON is 400 Payload must be valid JSON", async () => {
    for (const raw of ["{", "{case_ids: []}", "nope"]) {
      const res = await bulkFetch(raw, { raw: true });
      expect(res.status, raw).toBe(400);
      expect(res.body, raw).toEqual({ error: "Payload must be valid JSON" });
    }
  });

  it("ids that are not lists of strings are 400 {error}, never 500", async () => {
    for (const body of [{ case_ids: "abc" }, { case_ids: [1, 2] }, { external_ids: { a: 1 } }, { case_ids: [null] }, { external_ids: [["x"]] }]) {
      const res = await bulkFetch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
  });

  it("over 5000 ids in all is 400; exactly 5000 is served", async () => {
    const ids = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    for (const body of [{ case_ids: ids(5001, "c") }, { external_ids: ids(5001, "e") }, { case_ids: ids(3000, "c"), external_ids: ids(2001, "e") }]) {
      const res = await bulkFetch(body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
      expect(res.body.error).toMatch(/5000/);
    }
    const ok = await bulkFetch({ case_ids: ids(2500, "c"), external_ids: ids(2500, "e") });
    expect(ok.status).toBe(200);
    expect(ok.body.matching_records).toBe(0);
    expect(ok.body.missing_records).toBe(5000);
    expect(ok.body.cases).toHaveLength(5000);
  });

  it("the path works with and without its trailing slash", async () => {
    const { A } = await three();
    for (const path of [`${CASES}bulk-fetch/`, `${CASES}bulk-fetch`]) {
      const res = await bulkFetch({ case_ids: [A.case_id] }, { path });
      expect(res.status, path).toBe(200);
      expect(res.body.cases[0].case_id, path).toBe(A.case_id);
    }
  });

  it("query parameters other than fields/exclude are 400 '<key>' is not a valid parameter.", async () => {
    const { A } = await three();
    const res = await bulkFetch({ case_ids: [A.case_id] }, { query: "?limit=5" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "'limit' is not a valid parameter." });
  });

  it("GET on bulk-fetch/ is 405 with Allow: POST", async () => {
    const res = await app.get("bulk-fetch/");
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("POST");
    expect(Object.keys(res.body)).toEqual(["error"]);
  });
});

describe("response: {matching_records, missing_records, cases}", () => {
  it("found cases are full serializations, in request order", async () => {
    const { A, B, C } = await three();
    const res = await bulkFetch({ case_ids: [C.case_id, A.case_id, B.case_id] });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["matching_records", "missing_records", "cases"]);
    expect(res.body.matching_records).toBe(3);
    expect(res.body.missing_records).toBe(0);
    expect(res.body.cases).toEqual([C, A, B]);
  });

  it("a missing id is the stub {case_id: <id>, error: 'not found'} (or external_id)", async () => {
    const { A } = await three();
    const unknown = "00000000-0000-4000-8000-000000000000";
    const res = await bulkFetch({ case_ids: [unknown, A.case_id, "not-a-uuid"], external_ids: ["nope", "ext-a"] });
    expect(res.status).toBe(200);
    expect(res.body.matching_records).toBe(2);
    expect(res.body.missing_records).toBe(3);
    const stubs = [res.body.cases[0], res.body.cases[2], res.body.cases[3]];
    expect(stubs).toEqual([
      { case_id: unknown, error: "not found" },
      { case_id: "not-a-uuid", error: "not found" },
      { external_id: "nope", error: "not found" },
    ]);
    expect(Object.keys(res.body.cases[0])).toEqual(["case_id", "error"]);
    expect(Object.keys(res.body.cases[3])).toEqual(["external_id", "error"]);
  });

  it("case_ids come first, then external_ids, each in request order", async () => {
    const { A, B, C } = await three();
    const res = await bulkFetch({ external_ids: ["ext-b", "ext-a"], case_ids: [C.case_id, B.case_id] });
    expect(res.body.cases.map((c: Case) => c.case_name)).toEqual(["C", "B", "B", "A"]);
    expect(res.body.cases[0]).toEqual(C);
    expect(res.body.cases[3]).toEqual(A);
  });

  it("duplicates are repeated, found or missing, and counted each time", async () => {
    const { A } = await three();
    const res = await bulkFetch({ case_ids: [A.case_id, A.case_id, "x", "x"], external_ids: ["ext-a", "ext-a", "gone"] });
    expect(res.body.cases.map((c: Case) => c.case_name ?? c.error)).toEqual(["A", "A", "not found", "not found", "A", "A", "not found"]);
    expect(res.body.matching_records).toBe(4);
    expect(res.body.missing_records).toBe(3);
  });

  it("a duplicated external id answers with the oldest case by date_opened", async () => {
    await app.createCase({ external_id: "dup", case_name: "first" });
    const second = await app.createCase({ external_id: "dup", case_name: "second" });
    // backdate the second so that date_opened, not creation order, decides
    await app.db.prisma.$executeRaw`UPDATE cases SET date_opened = '2001-01-01T00:00:00Z' WHERE id = ${second.case_id}::uuid`;
    const res = await bulkFetch({ external_ids: ["dup", "dup"] });
    expect(res.body).toMatchObject({ matching_records: 2, missing_records: 0 });
    expect(res.body.cases.map((c: Case) => c.case_name)).toEqual(["second", "second"]);
  });

  it("ids holding a NUL byte are stubs, never 500", async () => {
    await three();
    const res = await bulkFetch({ case_ids: ["\u0000"], external_ids: ["ext-a\u0000", "\u0000", "ext-a"] });
    expect(res.status).toBe(200);
    expect(res.body.matching_records).toBe(1);
    expect(res.body.cases.slice(0, 3)).toEqual([
      { case_id: "\u0000", error: "not found" },
      { external_id: "ext-a\u0000", error: "not found" },
      { external_id: "\u0000", error: "not found" },
    ]);
    expect(res.body.cases[3].case_name).toBe("A");
  });

  it("matching is exact: external ids are case-sensitive", async () => {
    await three();
    const res = await bulkFetch({ external_ids: ["EXT-A", "ext-a "] });
    expect(res.body).toEqual({
      matching_records: 0,
      missing_records: 2,
      cases: [
        { external_id: "EXT-A", error: "not found" },
        { external_id: "ext-a ", error: "not found" },
      ],
    });
  });
});

describe("who may bulk-fetch", () => {
  it("the reader (view_data) may bulk-fetch", async () => {
    const { A } = await three();
    const res = await bulkFetch({ case_ids: [A.case_id] }, { authorization: app.reader.authorization });
    expect(res.status).toBe(200);
    expect(res.body.cases).toEqual([A]);
  });

  it("a user of another domain gets 403; another domain's ids are stubs from inside", async () => {
    const { A } = await three();
    await createDomain(app, "other");
    const outsider = await createUser(app, { domain: "other", permissions: ["access_api", "edit_data"] });
    const res = await bulkFetch({ case_ids: [A.case_id] }, { authorization: outsider.authorization });
    expect(res.status).toBe(403);
    expect(Object.keys(res.body)).toEqual(["error"]);
    const inOther = await bulkFetch(
      { case_ids: [A.case_id], external_ids: ["ext-a"] },
      {
        path: "/a/other/api/case/v2/bulk-fetch/",
        authorization: outsider.authorization,
      },
    );
    expect(inOther.status).toBe(200);
    expect(inOther.body).toEqual({
      matching_records: 0,
      missing_records: 2,
      cases: [
        { case_id: A.case_id, error: "not found" },
        { external_id: "ext-a", error: "not found" },
      ],
    });
  });

  it("without credentials: 401", async () => {
    const res = await app
      .http()
      .post(`${CASES}bulk-fetch/`)
      .send({ case_ids: ["x"] });
    expect(res.status).toBe(401);
    expect(Object.keys(res.body)).toEqual(["error"]);
  });
});
