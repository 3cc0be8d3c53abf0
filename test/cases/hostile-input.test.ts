import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";

/**
 * Regressions found by the property tests of issue #7 (test/properties/cases.test.ts, graphql):
 * unpaired surrogates reached PGlite, which cannot encode two low ones in a row (PostgreSQL then
 * refuses the bytes: a 500). A write carrying one is refused (400, nothing saved); a domain name
 * carrying one names no domain (403, as any unknown domain); a lookup by one finds nothing, as
 * any unknown id (PGlite receives such a string with U+FFFD, as node-postgres sends it).
 */

/** PGlite failed on two low surrogates in a row; the others are here for the same answer. */
const LONE = ["\udfff\ud800a", "\udfff\udfff", "a\udc00\udc01", "e\ud800", "\udc00"];
const codes = (body: { errors?: { extensions: { code: string } }[] }) => body.errors?.map((e) => e.extensions.code);

let app: CaseTestApp;

describe("Case API: unpaired surrogates", () => {
  beforeEach(async () => {
    app = await buildCaseApp();
  });
  afterEach(() => app.close());

  it.each([
    ["owner_id", { case_type: "patient", case_name: "Ann", owner_id: "o\udfff\udfff" }],
    ["case_name", { case_type: "patient", case_name: "\udc00\udc01", owner_id: "o" }],
    ["external_id", { case_type: "patient", case_name: "Ann", owner_id: "o", external_id: "e\ud800" }],
    ["district", { case_type: "patient", case_name: "Ann", owner_id: "o", properties: { district: "\udfff\udfff" } }],
  ])("refuses %s with unpaired surrogates on create, update and bulk (400, nothing saved)", async (key, payload) => {
    const existing = await app.createCase();
    const message = `Error with case property '${key}'. Values cannot contain an unpaired surrogate.`;
    const created = await app.post(payload);
    expect([created.status, created.body]).toEqual([400, { error: message }]);
    const { case_type: _t, ...update } = payload;
    const updated = await app.put(existing.case_id, update);
    expect([updated.status, updated.body]).toEqual([400, { error: message }]);
    const bulk = await app.post([{ ...payload, create: true }]);
    expect([bulk.status, bulk.body]).toEqual([400, { error: `Error in row 1: ${message}` }]);
    const list = await app.get("");
    expect(list.body.matching_records).toBe(1);
  });

  it("refuses an index id with unpaired surrogates (400)", async () => {
    const res = await app.post({
      case_type: "patient",
      case_name: "Ann",
      owner_id: "o",
      indices: { parent: { case_id: "\udfff\udfff", case_type: "patient", relationship: "child" } },
    });
    expect([res.status, res.body]).toEqual([400, { error: "Error with case property 'case_id'. Values cannot contain an unpaired surrogate." }]);
  });

  it("answers a GraphQL query naming a domain with unpaired surrogates FORBIDDEN, as any unknown domain", async () => {
    for (const domain of ["\udfff\udfff", "1\udfff\udfff?", "d\ud800"]) {
      const res = await app
        .http()
        .post("/graphql")
        .set("Authorization", app.reader.authorization)
        .send({ query: "query($d: String!) { cases(domain: $d) { totalCount } }", variables: { d: domain } });
      expect(
        res.body.errors?.map((e: { extensions: { code: string } }) => e.extensions.code),
        JSON.stringify(res.body),
      ).toEqual(["FORBIDDEN"]);
      expect(res.body.data).toBeNull();
    }
  });

  it("reads by external ids with unpaired surrogates find nothing (bulk-fetch 200, every id missing)", async () => {
    const existing = await app.createCase({ external_id: "e\ufffd" });
    const res = await app.http().post("/a/demo/api/case/v2/bulk-fetch/").set("Authorization", app.reader.authorization).send({ external_ids: LONE });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.matching_records).toBe(0);
    expect(res.body.missing_records).toBe(LONE.length);
    expect(JSON.stringify(res.body)).not.toContain(existing.case_id);
  });

  it("GraphQL caseByExternalId, casesByIds and cases filters with unpaired surrogates find nothing, no error", async () => {
    await app.createCase({ external_id: "e\ufffd", properties: { district: "\ufffd" } });
    const gql = (query: string, variables: Record<string, unknown>) =>
      app.http().post("/graphql").set("Authorization", app.reader.authorization).send({ query, variables });
    for (const id of LONE) {
      const one = await gql('query($e: String!) { caseByExternalId(domain: "demo", externalId: $e) { caseId } }', { e: id });
      expect([one.status, codes(one.body), one.body.data], JSON.stringify(one.body)).toEqual([200, undefined, { caseByExternalId: null }]);
      const many = await gql('query($e: [String!]) { casesByIds(domain: "demo", externalIds: $e) { matchingRecords missingRecords } }', { e: [id] });
      expect([many.status, codes(many.body), many.body.data], JSON.stringify(many.body)).toEqual([
        200,
        undefined,
        { casesByIds: { matchingRecords: 0, missingRecords: 1 } },
      ]);
      for (const filter of [
        { externalId: [id] },
        { ownerId: [id], caseName: [id] },
        { properties: [{ name: "district", values: [id] }] },
        { properties: [{ name: id, values: ["x"] }] },
      ]) {
        const listed = await gql('query($f: CaseFilter) { cases(domain: "demo", filter: $f) { totalCount } }', { f: filter });
        expect([listed.status, codes(listed.body), listed.body.data], JSON.stringify(listed.body)).toEqual([
          200,
          undefined,
          { cases: { totalCount: 0 } },
        ]);
      }
    }
  });

  it("PGlite receives query parameters with unpaired surrogates as U+FFFD, as node-postgres sends them", async () => {
    const [row] = await app.db.prisma.$queryRaw<{ t: string; a: string[] }[]>`SELECT ${"\udfff\udfff"}::text AS t, ${["b\udc00\udc01"]}::text[] AS a`;
    expect(row).toEqual({ t: "\ufffd\ufffd", a: ["b\ufffd\ufffd"] });
    const inTransaction = await app.db.prisma.$transaction((tx) => tx.$queryRaw<{ t: string }[]>`SELECT ${"a\udc00\udc01"}::text AS t`);
    expect(inTransaction).toEqual([{ t: "a\ufffd\ufffd" }]);
  });
});
