import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildCaseApp, CASES, type CaseTestApp, CASE_KEYS } from "../helpers/cases.ts";
import { caseRows, countCaseIndices, countCases, countFormCases, countForms, formRow } from "../helpers/rows.ts";

/**
 * CONTRACT §2 "Writes" (semantics and responses): POST object creates, PUT {case_id} updates,
 * bulk lists write one form, references inside a request resolve, the write time is stamped on
 * every write, and the written case is readable at once.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CASE_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

let app: CaseTestApp;

beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

const base = { case_type: "patient", case_name: "Ada", owner_id: "owner-1" };

/** ms since epoch of a Case API date */
const at = (value: string) => Date.parse(value);

/** The write time stamps of a case all equal one instant inside [before, after]. */
function expectWriteTime(c: Record<string, any>, before: number, after: number) {
  expect(c.last_modified).toMatch(CASE_DATE);
  expect(c.server_last_modified).toBe(c.last_modified);
  expect(c.indexed_on).toBe(c.last_modified);
  expect(at(c.last_modified)).toBeGreaterThanOrEqual(Math.floor(before));
  expect(at(c.last_modified)).toBeLessThanOrEqual(after);
}

async function snapshot() {
  const p = app.db.prisma;
  return {
    cases: await p.case.findMany({ orderBy: { id: "asc" } }),
    indices: await p.caseIndex.findMany({ orderBy: [{ caseId: "asc" }, { name: "asc" }] }),
    forms: await p.form.count(),
    formCases: await p.formCase.count(),
  };
}

describe("POST with an object: create", () => {
  it("answers 200 with keys exactly xform_id, form_id, case; form_id equals xform_id; case keys in contract order", async () => {
    const before = Date.now();
    const res = await app.post({ ...base, properties: { age: "36" } });
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["xform_id", "form_id", "case"]);
    expect(res.body.xform_id).toMatch(UUID);
    expect(res.body.form_id).toBe(res.body.xform_id);
    const c = res.body.case;
    expect(Object.keys(c)).toEqual(CASE_KEYS);
    expect(c).toMatchObject({
      domain: "demo",
      case_type: "patient",
      case_name: "Ada",
      external_id: null,
      owner_id: "owner-1",
      closed: false,
      date_closed: null,
      properties: { age: "36" },
      indices: {},
    });
    expect(c.case_id).toMatch(UUID);
    expect(c.date_opened).toBe(c.last_modified);
    expectWriteTime(c, before, after);
  });

  it("a duplicate external_id creates a second case (POST is not an upsert)", async () => {
    const first = await app.post({ ...base, external_id: "dup" });
    const second = await app.post({ ...base, external_id: "dup" });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.case.case_id).not.toBe(first.body.case.case_id);
    expect(second.body.case.external_id).toBe("dup");
    expect(await countCases(app, { externalId: "dup" })).toBe(2);
  });
});

describe("PUT {case_id}: update", () => {
  it("updates that case; a body case_id equal to the path is accepted", async () => {
    const c = await app.createCase();
    const res = await app.put(c.case_id, { case_id: c.case_id, case_name: "Renamed", owner_id: "owner-2" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["xform_id", "form_id", "case"]);
    expect(res.body.form_id).toBe(res.body.xform_id);
    expect(res.body.case).toMatchObject({ case_id: c.case_id, case_name: "Renamed", owner_id: "owner-2", case_type: "patient" });
    expect(await countCases(app)).toBe(1);
  });

  it("a body case_id different from the path is refused with 400 and nothing changes", async () => {
    const c = await app.createCase();
    const other = await app.createCase();
    const before = await snapshot();
    const res = await app.put(c.case_id, { case_id: other.case_id, case_name: "X" });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(await snapshot()).toEqual(before);
  });

  it("properties merge: new names are added, given names overwritten, others kept", async () => {
    const c = await app.createCase({ properties: { a: "1", b: "2" } });
    const res = await app.put(c.case_id, { properties: { b: "20", c: "30" } });
    expect(res.status).toBe(200);
    expect(res.body.case.properties).toEqual({ a: "1", b: "20", c: "30" });
    expect((await app.get(c.case_id)).body.properties).toEqual({ a: "1", b: "20", c: "30" });
  });

  it("property names that shadow Object.prototype members (constructor, toString, hasOwnProperty) are plain properties", async () => {
    const properties = { constructor: "c", hasOwnProperty: "h", toString: "t", valueOf: "v" };
    const res = await app.post({ ...base, properties });
    expect(res.status).toBe(200);
    expect(res.body.case.properties).toEqual(properties);
    expect((await app.get(res.body.case.case_id)).body.properties).toEqual(properties);
    const merged = await app.put(res.body.case.case_id, { properties: { toString: "t2" } });
    expect(merged.body.case.properties).toEqual({ ...properties, toString: "t2" });
  });

  it("omitted fields are untouched", async () => {
    const parent = await app.createCase({ case_type: "household" });
    const c = await app.createCase({
      external_id: "ext-1",
      properties: { a: "1" },
      indices: { parent: { case_id: parent.case_id, case_type: "household", relationship: "child" } },
    });
    const res = await app.put(c.case_id, { properties: { b: "2" } });
    expect(res.status).toBe(200);
    const after = res.body.case;
    for (const key of ["case_type", "case_name", "owner_id", "external_id", "date_opened", "closed", "date_closed", "indices"]) {
      expect(after[key], key).toEqual(c[key]);
    }
  });

  it('external_id "" clears it; omitting external_id keeps it', async () => {
    const c = await app.createCase({ external_id: "ext-keep" });
    const kept = await app.put(c.case_id, { case_name: "n2" });
    expect(kept.body.case.external_id).toBe("ext-keep");
    const cleared = await app.put(c.case_id, { external_id: "" });
    expect(cleared.status).toBe(200);
    expect(cleared.body.case.external_id).toBeNull();
    expect((await app.get(c.case_id)).body.external_id).toBeNull();
    expect((await app.get("ext/ext-keep/")).status).toBe(404);
  });

  it("close: true closes (closed true, date_closed = the write time); close: false never reopens", async () => {
    const c = await app.createCase();
    const before = Date.now();
    const closed = await app.put(c.case_id, { close: true });
    const after = Date.now();
    expect(closed.status).toBe(200);
    expect(closed.body.case.closed).toBe(true);
    expect(closed.body.case.date_closed).toMatch(CASE_DATE);
    expect(closed.body.case.date_closed).toBe(closed.body.case.last_modified);
    expectWriteTime(closed.body.case, before, after);

    const again = await app.put(c.case_id, { close: false, case_name: "still closed" });
    expect(again.status).toBe(200);
    expect(again.body.case.closed).toBe(true);
    expect(again.body.case.date_closed).toBe(closed.body.case.date_closed);
    const read = await app.get(c.case_id);
    expect(read.body.closed).toBe(true);
    expect(read.body.date_closed).toBe(closed.body.case.date_closed);
  });

  it("close: true on create creates a closed case", async () => {
    const res = await app.post({ ...base, close: true });
    expect(res.status).toBe(200);
    expect(res.body.case.closed).toBe(true);
    expect(res.body.case.date_closed).toBe(res.body.case.date_opened);
  });

  it("date_opened never changes; last_modified, server_last_modified, indexed_on = the write time on every write", async () => {
    const c = await app.createCase();
    for (const body of [{ case_name: "b" }, { properties: { x: "1" } }, { close: true }, {}]) {
      await new Promise((resolve) => setTimeout(resolve, 3));
      const before = Date.now();
      const res = await app.put(c.case_id, body);
      const after = Date.now();
      expect(res.status).toBe(200);
      expect(res.body.case.date_opened).toBe(c.date_opened);
      expectWriteTime(res.body.case, before, after);
      expect(at(res.body.case.last_modified)).toBeGreaterThan(at(c.date_opened));
      const read = (await app.get(c.case_id)).body;
      expect(read.date_opened).toBe(c.date_opened);
      expect(read.last_modified).toBe(res.body.case.last_modified);
      expect(read.indexed_on).toBe(res.body.case.indexed_on);
    }
  });
});

describe("indices", () => {
  it("an index is created, replaced by name, and removed by an empty case_id; other indices are kept", async () => {
    const p1 = await app.createCase({ case_type: "household" });
    const p2 = await app.createCase({ case_type: "household" });
    const host = await app.createCase({ case_type: "site" });
    const c = await app.createCase({
      indices: {
        parent: { case_id: p1.case_id, case_type: "household", relationship: "child" },
        host: { case_id: host.case_id, case_type: "site", relationship: "extension" },
      },
    });
    expect(c.indices).toEqual({
      host: { case_id: host.case_id, case_type: "site", relationship: "extension" },
      parent: { case_id: p1.case_id, case_type: "household", relationship: "child" },
    });

    const replaced = await app.put(c.case_id, { indices: { parent: { case_id: p2.case_id, case_type: "household", relationship: "child" } } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.case.indices.parent).toEqual({ case_id: p2.case_id, case_type: "household", relationship: "child" });
    expect(replaced.body.case.indices.host.case_id).toBe(host.case_id);
    const children = await app.get(`?indices.parent=${p2.case_id}`);
    expect(children.body.cases.map((x: any) => x.case_id)).toEqual([c.case_id]);
    expect((await app.get(`?indices.parent=${p1.case_id}`)).body.cases).toEqual([]);

    const removed = await app.put(c.case_id, { indices: { parent: { case_id: "" } } });
    expect(removed.status).toBe(200);
    expect(removed.body.case.indices).toEqual({ host: { case_id: host.case_id, case_type: "site", relationship: "extension" } });
    expect((await app.get(c.case_id)).body.indices).toEqual(removed.body.case.indices);
    expect(await countCaseIndices(app, { caseId: c.case_id })).toBe(1);
  });

  it("an index may refer to an existing case by external_id", async () => {
    const parent = await app.createCase({ case_type: "household", external_id: "hh-1" });
    const res = await app.post({ ...base, indices: { parent: { external_id: "hh-1", case_type: "household", relationship: "child" } } });
    expect(res.status).toBe(200);
    expect(res.body.case.indices.parent).toEqual({ case_id: parent.case_id, case_type: "household", relationship: "child" });
  });

  it("simultaneous updates of one case, each adding an index, each answer the case with every index written before it", async () => {
    const parent = await app.createCase({ case_type: "household" });
    const c = await app.createCase();
    const n = 12;
    const responses = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        app.put(c.case_id, { indices: { [`i${i}`]: { case_id: parent.case_id, case_type: "household", relationship: "child" } } }),
      ),
    );
    for (const res of responses) expect(res.status, JSON.stringify(res.body)).toBe(200);
    // the writes are applied one after another under the case's row lock: the k-th holds k indices
    const counts = responses.map((res) => Object.keys(res.body.case.indices).length).sort((a, b) => a - b);
    expect(counts).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(Object.keys((await app.get(c.case_id)).body.indices)).toHaveLength(n);
  });
});

describe("bulk: POST or PUT with a list", () => {
  it("POST list answers {xform_id, form_id, cases} with cases in request order, all in one form", async () => {
    const existing = await app.createCase({ properties: { a: "1" } });
    const formsBefore = await countForms(app);
    const res = await app.post([
      { ...base, case_name: "first", create: true },
      { case_id: existing.case_id, create: false, properties: { b: "2" } },
      { ...base, case_name: "third", create: true },
    ]);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["xform_id", "form_id", "cases"]);
    expect(res.body.form_id).toBe(res.body.xform_id);
    expect(res.body.cases.map((c: any) => c.case_name)).toEqual(["first", existing.case_name, "third"]);
    expect(res.body.cases[1].case_id).toBe(existing.case_id);
    expect(res.body.cases[1].properties).toEqual({ a: "1", b: "2" });
    for (const c of res.body.cases) expect(Object.keys(c)).toEqual(CASE_KEYS);
    expect(await countForms(app)).toBe(formsBefore + 1);
    expect(await countFormCases(app, res.body.xform_id)).toBe(3);
    expect(await countCases(app)).toBe(3);
  });

  it("PUT list is the same bulk write", async () => {
    const a = await app.createCase();
    const b = await app.createCase();
    const res = await app.put("", [
      { case_id: b.case_id, create: false, case_name: "B" },
      { case_id: a.case_id, create: false, case_name: "A" },
      { ...base, create: true, case_name: "C" },
    ]);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["xform_id", "form_id", "cases"]);
    expect(res.body.form_id).toBe(res.body.xform_id);
    expect(res.body.cases.map((c: any) => [c.case_id === b.case_id, c.case_id === a.case_id, c.case_name])).toEqual([
      [true, false, "B"],
      [false, true, "A"],
      [false, false, "C"],
    ]);
    expect(await countFormCases(app, res.body.xform_id)).toBe(3);
  });

  it("an update by external_id (create: false) updates the case with that external id", async () => {
    const c = await app.createCase({ external_id: "ext-u" });
    const res = await app.post([{ external_id: "ext-u", create: false, case_name: "by ext" }]);
    expect(res.status).toBe(200);
    expect(res.body.cases[0]).toMatchObject({ case_id: c.case_id, case_name: "by ext", external_id: "ext-u" });
    expect(await countCases(app)).toBe(1);
  });

  it.each([
    ["parent first", false],
    ["child first", true],
  ])("temporary_id links a parent and a child created in one request (%s)", async (_label, childFirst) => {
    const parent = { ...base, case_type: "household", case_name: "home", create: true, temporary_id: "tmp-parent" };
    const child = {
      ...base,
      create: true,
      indices: { parent: { temporary_id: "tmp-parent", case_type: "household", relationship: "child" } },
    };
    const res = await app.post(childFirst ? [child, parent] : [parent, child]);
    expect(res.status).toBe(200);
    const [c, p] = childFirst ? res.body.cases : [...res.body.cases].reverse();
    expect(p.case_name).toBe("home");
    expect(c.indices).toEqual({ parent: { case_id: p.case_id, case_type: "household", relationship: "child" } });
    expect(Object.keys(p)).not.toContain("temporary_id");
    const stored = await app.get(c.case_id);
    expect(stored.body.indices.parent.case_id).toBe(p.case_id);
    expect(JSON.stringify(await caseRows(app))).not.toContain("tmp-parent");
  });

  it.each([
    ["earlier", false],
    ["later", true],
  ])("an index by external_id resolves to a case created %s in the same request", async (_label, childFirst) => {
    const parent = { ...base, case_type: "household", external_id: "hh-new", create: true };
    const child = { ...base, create: true, indices: { parent: { external_id: "hh-new", case_type: "household", relationship: "child" } } };
    const res = await app.post(childFirst ? [child, parent] : [parent, child]);
    expect(res.status).toBe(200);
    const [c, p] = childFirst ? res.body.cases : [...res.body.cases].reverse();
    expect(p.external_id).toBe("hh-new");
    expect(c.indices.parent).toEqual({ case_id: p.case_id, case_type: "household", relationship: "child" });
  });
});

describe("read-your-writes and field selection", () => {
  it("a written case is readable at once by id, by external id and in the list", async () => {
    const res = await app.post({ ...base, external_id: "ryw", properties: { k: "v" } });
    const id = res.body.case.case_id;
    const byId = await app.get(id);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(res.body.case);
    const byExt = await app.get("ext/ryw/");
    expect(byExt.body).toEqual(res.body.case);
    const list = await app.get("?properties.k=v");
    expect(list.body.cases).toEqual([res.body.case]);

    const upd = await app.put(id, { properties: { k: "w" } });
    expect((await app.get(id)).body).toEqual(upd.body.case);
  });

  it("fields/exclude apply to the case in single and bulk write responses, never to the envelope", async () => {
    const single = await app.post({ ...base, properties: { a: "1", b: "2" } }, "?fields=case_id");
    expect(single.status).toBe(200);
    expect(Object.keys(single.body)).toEqual(["xform_id", "form_id", "case"]);
    expect(single.body.case).toEqual({ case_id: expect.stringMatching(UUID) });

    const dotted = await app
      .http()
      .put(`${CASES}${single.body.case.case_id}?fields=case_name&fields.properties=b`)
      .set("Authorization", app.editor.authorization)
      .send({ case_name: "Z" });
    expect(dotted.body.case).toEqual({ case_name: "Z", properties: { b: "2" } });

    const bulk = await app.post(
      [
        { ...base, create: true },
        { ...base, create: true },
      ],
      "?exclude=properties,indices,domain",
    );
    expect(bulk.status).toBe(200);
    expect(Object.keys(bulk.body)).toEqual(["xform_id", "form_id", "cases"]);
    for (const c of bulk.body.cases) expect(Object.keys(c)).toEqual(CASE_KEYS.filter((k) => !["properties", "indices", "domain"].includes(k)));

    const both = await app.post(base, "?fields=case_id&exclude=case_name");
    expect(both.status).toBe(400);
    expect(both.body).toEqual({ error: "You cannot specify both 'fields' and 'exclude'" });
  });
});

describe("permissions and attribution", () => {
  it("a reader (view_data only) gets 403 on every write, even with a bad payload, and nothing changes", async () => {
    const c = await app.createCase({ external_id: "e1" });
    const before = await snapshot();
    const as = (req: any) => req.set("Authorization", app.reader.authorization);
    const attempts = [
      as(app.http().post(CASES)).send(base),
      as(app.http().post(CASES)).send([{ ...base, create: true }]),
      as(app.http().put(`${CASES}${c.case_id}`)).send({ case_name: "x" }),
      as(app.http().put(`${CASES}ext/e1/`)).send({ case_name: "x" }),
      as(app.http().put(CASES)).send({ external_id: "e1", case_name: "x" }),
      as(app.http().post(CASES)).send({ case_type: "no name" }),
      as(app.http().post(CASES)).send(Array.from({ length: 101 }, () => ({ ...base, create: true }))),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
    expect(await snapshot()).toEqual(before);
    // reads still work for the reader
    expect((await as(app.http().get(`${CASES}${c.case_id}`))).status).toBe(200);
  });

  it("the request's User-Agent is stored as the form's device_id, with the caller as user", async () => {
    const res = await app
      .http()
      .post(CASES)
      .set("Authorization", app.editor.authorization)
      .set("User-Agent", "field-app/2.1 (Android 14)")
      .send(base);
    expect(res.status).toBe(200);
    const form = await formRow(app, res.body.xform_id);
    expect(form.deviceId).toBe("field-app/2.1 (Android 14)");
    expect(form.username).toBe(app.editor.username);
  });
});
