import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildCaseApp, CASES, type CaseTestApp } from "../helpers/cases.ts";
import { caseRows, countCases, countFormCases, countForms } from "../helpers/rows.ts";

/**
 * CONTRACT §2 "Writes", upserts: `PUT ext/{ext_id}/` updates the case with that external id or
 * creates it; `PUT ''` with an object upserts by external_id or updates by case_id; a bulk item
 * with `create` omitted and an external_id upserts. Upserts of one external id end as one case,
 * within a request and across simultaneous requests; POST still creates duplicates.
 */

let app: CaseTestApp;

beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

const base = { case_type: "patient", case_name: "Ada", owner_id: "owner-1" };

const countExt = (externalId: string) => countCases(app, { externalId });

async function expectNothingSaved<T>(send: () => Promise<T>): Promise<T> {
  const before = [await countCases(app), await countForms(app)];
  const res = await send();
  expect([await countCases(app), await countForms(app)]).toEqual(before);
  return res;
}

describe("PUT ext/{ext_id}/", () => {
  it("creates the case when no case has that external id; name, type and owner are then required in that order", async () => {
    for (const [body, message] of [
      [{ case_name: "n", owner_id: "o" }, "Property case_type is required."],
      [{ case_type: "t", owner_id: "o" }, "Property case_name is required."],
      [{ case_type: "t", case_name: "n", properties: { a: "1" } }, "Property owner_id is required."],
    ] as const) {
      const refused = await expectNothingSaved(() => app.put("ext/new-1/", body));
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: message });
    }
    const res = await app.put("ext/new-1/", { ...base, properties: { a: "1" } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["xform_id", "form_id", "case"]);
    expect(res.body.case).toMatchObject({ ...base, external_id: "new-1", properties: { a: "1" }, closed: false });
    expect(await countExt("new-1")).toBe(1);
  });

  it("updates the case that has that external id (no required fields), merging properties", async () => {
    const c = await app.createCase({ external_id: "known", properties: { a: "1" } });
    const res = await app.put("ext/known/", { properties: { b: "2" }, owner_id: "owner-9" });
    expect(res.status).toBe(200);
    expect(res.body.case).toMatchObject({ case_id: c.case_id, case_name: c.case_name, owner_id: "owner-9", external_id: "known" });
    expect(res.body.case.properties).toEqual({ a: "1", b: "2" });
    expect(res.body.case.date_opened).toBe(c.date_opened);
    expect(await countCases(app)).toBe(1);
  });

  it("repeating the same PUT is idempotent: one case, same id", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await app.put("ext/again/", { ...base, properties: { n: "1" } });
      expect(res.status).toBe(200);
      ids.add(res.body.case.case_id);
    }
    expect(ids.size).toBe(1);
    expect(await countCases(app)).toBe(1);
  });

  it("a body external_id other than the path's is refused (the PUT must stay idempotent); the same one is accepted", async () => {
    const refused = await expectNothingSaved(() => app.put("ext/path-id/", { ...base, external_id: "body-id" }));
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body)).toEqual(["error"]);
    const c = await app.createCase({ external_id: "path-id" });
    const renamed = await expectNothingSaved(() => app.put("ext/path-id/", { external_id: "" }));
    expect(renamed.status).toBe(400);
    const same = await app.put("ext/path-id/", { ...base, external_id: "path-id" });
    expect(same.status).toBe(200);
    expect(same.body.case.case_id).toBe(c.case_id);
  });

  it("the external id is percent-decoded and may hold '/', '?', '#', '&', '=', '+', spaces and unicode", async () => {
    const ext = "a/b?c#d&e=f+g h-ü☃";
    const res = await app
      .http()
      .put(`${CASES}ext/${encodeURIComponent(ext)}/`)
      .set("Authorization", app.editor.authorization)
      .send(base);
    expect(res.status).toBe(200);
    expect(res.body.case.external_id).toBe(ext);
    const again = await app
      .http()
      .put(`${CASES}ext/${encodeURIComponent(ext)}/`)
      .set("Authorization", app.editor.authorization)
      .send({ case_name: "second" });
    expect(again.body.case.case_id).toBe(res.body.case.case_id);
    expect(again.body.case.case_name).toBe("second");
    expect(await countExt(ext)).toBe(1);
  });

  it("a case created by POST with a duplicate external id is still allowed; PUT ext then updates one case only", async () => {
    await app.put("ext/shared/", base);
    const dup = await app.post({ ...base, external_id: "shared" });
    expect(dup.status).toBe(200);
    expect(await countExt("shared")).toBe(2);
    const res = await app.put("ext/shared/", { properties: { touched: "yes" } });
    expect(res.status).toBe(200);
    expect(await countExt("shared")).toBe(2);
    const touched = await caseRows(app, { externalId: "shared" });
    expect(touched.filter((c) => (c.properties as Record<string, string>).touched === "yes")).toHaveLength(1);
  });
});

describe("PUT '' with an object", () => {
  it("upserts by the body's external_id: creates when absent, updates when present", async () => {
    const created = await app.put("", { ...base, external_id: "body-ext" });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(["xform_id", "form_id", "case"]);
    expect(created.body.case.external_id).toBe("body-ext");
    const updated = await app.put("", { external_id: "body-ext", case_name: "Changed" });
    expect(updated.status).toBe(200);
    expect(updated.body.case.case_id).toBe(created.body.case.case_id);
    expect(updated.body.case.case_name).toBe("Changed");
    expect(await countExt("body-ext")).toBe(1);

    const refused = await expectNothingSaved(() => app.put("", { external_id: "other-ext", case_name: "n" }));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: "Property case_type is required." });
  });

  it("updates by the body's case_id", async () => {
    const c = await app.createCase();
    const res = await app.put("", { case_id: c.case_id, case_name: "By id" });
    expect(res.status).toBe(200);
    expect(res.body.case).toMatchObject({ case_id: c.case_id, case_name: "By id" });
    expect(await countCases(app)).toBe(1);
  });
});

describe("bulk upserts", () => {
  it("an item with create omitted (or null) and an external_id upserts", async () => {
    const existing = await app.createCase({ external_id: "bulk-known", properties: { a: "1" } });
    const res = await app.post([
      { external_id: "bulk-known", properties: { b: "2" } },
      { ...base, external_id: "bulk-new", create: null },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.cases[0].case_id).toBe(existing.case_id);
    expect(res.body.cases[0].properties).toEqual({ a: "1", b: "2" });
    expect(res.body.cases[1].external_id).toBe("bulk-new");
    expect(await countCases(app)).toBe(2);

    const refused = await expectNothingSaved(() => app.post([{ external_id: "bulk-absent", case_name: "n", owner_id: "o" }]));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: "Error in row 1: Property case_type is required." });
  });

  it("two items with one external_id in one request end as one case, changes applied in order", async () => {
    const res = await app.put("", [
      { ...base, external_id: "twice", properties: { a: "1", b: "1" } },
      { external_id: "twice", properties: { b: "2" }, case_name: "second" },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.cases[0].case_id).toBe(res.body.cases[1].case_id);
    expect(res.body.cases[1]).toMatchObject({ case_name: "second", properties: { a: "1", b: "2" } });
    expect(await countExt("twice")).toBe(1);
    const stored = await app.get("ext/twice/");
    expect(stored.body.properties).toEqual({ a: "1", b: "2" });
    expect(await countFormCases(app, res.body.xform_id)).toBe(1);
  });
});

describe("an external id several cases share (POST creates duplicates)", () => {
  it("§2: an upsert, and an index naming it, take the oldest case by date_opened", async () => {
    const older = await app.createCase({ external_id: "shared", properties: { n: "older" } });
    await new Promise((r) => setTimeout(r, 5));
    const newer = await app.createCase({ external_id: "shared", properties: { n: "newer" } });
    const res = await app.post([
      { external_id: "shared", properties: { touched: "yes" } },
      { ...base, create: true, indices: { parent: { external_id: "shared", case_type: "patient", relationship: "child" } } },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.cases[0]).toMatchObject({ case_id: older.case_id, properties: { n: "older", touched: "yes" } });
    expect(res.body.cases[1].indices.parent.case_id).toBe(older.case_id);
    expect((await app.get(newer.case_id)).body.properties).toEqual({ n: "newer" });
  });

  it("§2: among cases opened at the same moment, the one with the lowest case_id", async () => {
    const created = await app.post([
      { ...base, create: true, external_id: "tied" },
      { ...base, create: true, external_id: "tied" },
      { ...base, create: true, external_id: "tied" },
    ]);
    expect(created.status).toBe(200);
    const lowest = created.body.cases.map((c: { case_id: string }) => c.case_id).sort()[0];
    const res = await app.put("ext/tied/", { case_name: "chosen" });
    expect(res.status).toBe(200);
    expect(res.body.case.case_id).toBe(lowest);
  });
});

describe("concurrency", () => {
  it("simultaneous writes adding children to one case, beside updates of it, all succeed and keep every change", async () => {
    const parent = await app.createCase({ case_type: "household", external_id: "home" });
    const child = (i: number, ref: Record<string, string>) => ({
      ...base,
      create: true,
      case_name: `child ${i}`,
      indices: { parent: { ...ref, case_type: "household", relationship: "child" } },
    });
    const responses = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => app.post([child(i, { case_id: parent.case_id })])),
      ...Array.from({ length: 6 }, (_, i) => app.post([child(10 + i, { external_id: "home" })])),
      ...Array.from({ length: 4 }, (_, i) => app.put(parent.case_id, { properties: { [`p${i}`]: "x" } })),
    ]);
    for (const res of responses) expect(res.status, JSON.stringify(res.body)).toBe(200);
    const children = await app.get(`?indices.parent=${parent.case_id}`);
    expect(children.body.cases).toHaveLength(12);
    expect(Object.keys((await app.get(parent.case_id)).body.properties).sort()).toEqual(["p0", "p1", "p2", "p3"]);
  });

  it("20 simultaneous PUT ext/{same}/ requests end as exactly one case", async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => app.put("ext/race/", { ...base, properties: { [`p${i}`]: "x" } })));
    for (const res of responses) expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(new Set(responses.map((r) => r.body.case.case_id)).size).toBe(1);
    expect(await countExt("race")).toBe(1);
    // every request's change survived
    const stored = await app.get("ext/race/");
    expect(Object.keys(stored.body.properties)).toHaveLength(20);
    expect(await countForms(app)).toBe(20);
  });

  it("simultaneous upserts of one external id through PUT '', bulk and PUT ext/ end as one case", async () => {
    const responses = await Promise.all([
      app.put("", { ...base, external_id: "mixed" }),
      app.post([{ ...base, external_id: "mixed" }]),
      app.put("ext/mixed/", base),
      app.put("", [{ ...base, external_id: "mixed" }]),
      app.put("ext/mixed/", base),
    ]);
    for (const res of responses) expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await countExt("mixed")).toBe(1);
  });
});
