import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";

/**
 * Regressions found by the property tests of issue #7 (test/properties/cases.test.ts, graphql):
 * unpaired surrogates reached PGlite, which cannot encode two low ones in a row (PostgreSQL then
 * refuses the bytes: a 500). A write carrying one is refused (400, nothing saved); a domain name
 * carrying one names no domain (403, as any unknown domain).
 */

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
    const res = await app.post({ case_type: "patient", case_name: "Ann", owner_id: "o", indices: { parent: { case_id: "\udfff\udfff", case_type: "patient", relationship: "child" } } });
    expect([res.status, res.body]).toEqual([400, { error: "Error with case property 'case_id'. Values cannot contain an unpaired surrogate." }]);
  });

  it("answers a GraphQL query naming a domain with unpaired surrogates FORBIDDEN, as any unknown domain", async () => {
    for (const domain of ["\udfff\udfff", "1\udfff\udfff?", "d\ud800"]) {
      const res = await app
        .http()
        .post("/graphql")
        .set("Authorization", app.reader.authorization)
        .send({ query: "query($d: String!) { cases(domain: $d) { totalCount } }", variables: { d: domain } });
      expect(res.body.errors?.map((e: { extensions: { code: string } }) => e.extensions.code), JSON.stringify(res.body)).toEqual(["FORBIDDEN"]);
      expect(res.body.data).toBeNull();
    }
  });
});
