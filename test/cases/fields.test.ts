import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildCaseApp, CASES, type CaseTestApp, CASE_KEYS } from "../helpers/cases.ts";

/**
 * CONTRACT §2 "Field selection": fields / exclude and their dotted forms, applied to each case of
 * list, single, ext, multi, bulk-fetch and write responses, never to envelope keys.
 */

let app: CaseTestApp;
beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

type Case = Record<string, any>;

/** A parent and a child with properties a, b, c and a parent index; returns the child. */
async function child(): Promise<{ parent: Case; child: Case }> {
  const res = await app.post([
    { create: true, temporary_id: "p", case_type: "mother", case_name: "Mum", owner_id: "o1", external_id: "mum" },
    {
      create: true,
      case_type: "child",
      case_name: "Kid",
      owner_id: "o1",
      external_id: "kid",
      properties: { a: "1", b: "2", c: "3" },
      indices: { parent: { temporary_id: "p", case_type: "mother", relationship: "child" } },
    },
  ]);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { parent: res.body.cases[0], child: res.body.cases[1] };
}

/** The child case as the single GET shows it for a query. */
async function single(query: string): Promise<Case> {
  const { child: kid } = await child();
  const res = await app.get(`${kid.case_id}?${query}`);
  expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

describe("fields: only the named fields, dot notation for nested ones", () => {
  it("fields=a,b keeps exactly those keys, in serialization order", async () => {
    const { child: kid } = await child();
    const res = await app.get(`${kid.case_id}?fields=case_name,case_id`);
    expect(Object.keys(res.body)).toEqual(["case_id", "case_name"]);
    expect(res.body).toEqual({ case_id: kid.case_id, case_name: "Kid" });
  });

  it("fields=properties.a,indices.parent.case_id keeps nested parts only", async () => {
    const { parent, child: kid } = await child();
    const res = await app.get(`${kid.case_id}?fields=case_id,properties.a,indices.parent.case_id`);
    expect(res.body).toEqual({ case_id: kid.case_id, properties: { a: "1" }, indices: { parent: { case_id: parent.case_id } } });
    expect(Object.keys(res.body)).toEqual(["case_id", "properties", "indices"]);
  });

  it("fields.properties=x,y equals fields=properties.x,properties.y", async () => {
    const { child: kid } = await child();
    const dotted = await app.get(`${kid.case_id}?fields.properties=a,c`);
    const plain = await app.get(`${kid.case_id}?fields=properties.a,properties.c`);
    expect(dotted.body).toEqual({ properties: { a: "1", c: "3" } });
    expect(plain.body).toEqual(dotted.body);
    const both = await app.get(`${kid.case_id}?fields=case_name&fields.properties=b`);
    expect(both.body).toEqual({ case_name: "Kid", properties: { b: "2" } });
  });

  it("a whole field wins over its parts, whatever the order they are named in", async () => {
    const whole = { a: "1", b: "2", c: "3" };
    expect(await single("fields=properties,properties.a")).toEqual({ properties: whole });
    await app.close();
    app = await buildCaseApp();
    expect(await single("fields=properties.a,properties")).toEqual({ properties: whole });
  });

  it("naming a part after its whole field does not pull in a top-level key of the part's name", async () => {
    // properties.case_name is a part of properties, not the case's case_name
    expect(Object.keys(await single("fields=properties,properties.case_name"))).toEqual(["properties"]);
  });

  it("fields= (empty) gives {}", async () => {
    expect(await single("fields=")).toEqual({});
  });

  it("unknown names are ignored", async () => {
    const { child: kid } = await child();
    const res = await app.get(`${kid.case_id}?fields=case_id,nope,properties.zzz,indices.host,case_name.sub`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["case_id", "properties", "indices"]);
    expect(res.body.properties).toEqual({});
    expect(res.body.indices).toEqual({});
  });
});

describe("exclude: everything but the named fields", () => {
  it("exclude=a,b removes those keys and keeps the rest in order", async () => {
    const body = await single("exclude=properties,indices,domain");
    expect(Object.keys(body)).toEqual(CASE_KEYS.filter((k) => !["properties", "indices", "domain"].includes(k)));
  });

  it("exclude.properties=a and exclude=properties.a remove one property", async () => {
    const { child: kid } = await child();
    const dotted = await app.get(`${kid.case_id}?exclude.properties=a`);
    expect(Object.keys(dotted.body)).toEqual(CASE_KEYS);
    expect(dotted.body.properties).toEqual({ b: "2", c: "3" });
    const plain = await app.get(`${kid.case_id}?exclude=properties.a,indices.parent.relationship`);
    expect(plain.body.properties).toEqual({ b: "2", c: "3" });
    expect(Object.keys(plain.body.indices.parent)).toEqual(["case_id", "case_type"]);
  });

  it("excluding a whole field and one of its parts removes only that field", async () => {
    // properties.case_name names a property, not the case's case_name
    const body = await single("exclude=properties,properties.case_name");
    expect(Object.keys(body)).toEqual(CASE_KEYS.filter((k) => k !== "properties"));
  });

  it("exclude= (empty) gives everything; unknown names are ignored", async () => {
    const { child: kid } = await child();
    const full = await app.get(kid.case_id);
    for (const query of ["exclude=", "exclude=nope,properties.zzz", "exclude.properties="]) {
      const res = await app.get(`${kid.case_id}?${query}`);
      expect(res.body, query).toEqual(full.body);
      expect(Object.keys(res.body), query).toEqual(CASE_KEYS);
    }
  });
});

describe("both fields and exclude: 400 You cannot specify both 'fields' and 'exclude'", () => {
  it("on every read", async () => {
    const { child: kid } = await child();
    const ERROR = { error: "You cannot specify both 'fields' and 'exclude'" };
    for (const query of [
      "fields=case_id&exclude=case_name",
      "fields.properties=a&exclude=case_name",
      "fields=&exclude=",
      "exclude.properties=a&fields=case_id",
    ]) {
      for (const path of ["", kid.case_id, "ext/kid/", `${kid.case_id},${kid.case_id}`]) {
        const res = await app.get(`${path}?${query}`);
        expect(res.status, `${path}?${query}`).toBe(400);
        expect(res.body, `${path}?${query}`).toEqual(ERROR);
      }
      const bulk = await app
        .http()
        .post(`${CASES}bulk-fetch/?${query}`)
        .set("Authorization", app.editor.authorization)
        .send({ case_ids: [kid.case_id] });
      expect(bulk.status, `bulk ${query}`).toBe(400);
      expect(bulk.body).toEqual(ERROR);
    }
  });

  it("on writes too, and nothing is saved", async () => {
    const res = await app.post({ case_type: "t", case_name: "n", owner_id: "o" }, "?fields=case_id&exclude=case_name");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "You cannot specify both 'fields' and 'exclude'" });
    expect((await app.get("")).body.matching_records).toBe(0);
  });
});

describe("selection applies to each case, never to envelope keys", () => {
  it("list: each case is selected; matching_records, cases and next stay", async () => {
    await child();
    const res = await app.get("?limit=1&fields=case_name");
    expect(Object.keys(res.body)).toEqual(["matching_records", "cases", "next"]);
    expect(res.body.cases).toHaveLength(1);
    expect(Object.keys(res.body.cases[0])).toEqual(["case_name"]);
    const none = await app.get("?fields=");
    expect(none.body).toEqual({ matching_records: 2, cases: [{}, {}] });
    const excluded = await app.get("?exclude=matching_records,cases,next");
    expect(Object.keys(excluded.body)).toEqual(["matching_records", "cases"]);
    expect(excluded.body.cases).toHaveLength(2);
  });

  it("ext/{ext_id}/: the one case is selected", async () => {
    await child();
    const res = await app.get("ext/kid/?fields.properties=b&fields=external_id");
    expect(res.body).toEqual({ external_id: "kid", properties: { b: "2" } });
  });

  it("multi-id GET: found cases are selected, stubs and envelope keys are not", async () => {
    const { parent, child: kid } = await child();
    const res = await app.get(`${parent.case_id},nope,${kid.case_id}?fields=case_name`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      matching_records: 2,
      missing_records: 1,
      cases: [{ case_name: "Mum" }, { case_id: "nope", error: "not found" }, { case_name: "Kid" }],
    });
    const empty = await app.get(`${parent.case_id},nope?fields=`);
    expect(empty.body.cases).toEqual([{}, { case_id: "nope", error: "not found" }]);
  });

  it("bulk-fetch: query parameters select fields of found cases, not stubs", async () => {
    const { child: kid } = await child();
    const res = await app
      .http()
      .post(`${CASES}bulk-fetch/?fields=case_id,properties.c`)
      .set("Authorization", app.editor.authorization)
      .send({ case_ids: [kid.case_id, "missing"], external_ids: ["mum", "gone"] });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["matching_records", "missing_records", "cases"]);
    expect(res.body.cases).toEqual([
      { case_id: kid.case_id, properties: { c: "3" } },
      { case_id: "missing", error: "not found" },
      { case_id: expect.any(String), properties: {} },
      { external_id: "gone", error: "not found" },
    ]);
    const excluded = await app
      .http()
      .post(`${CASES}bulk-fetch/?exclude=case_id,error,external_id`)
      .set("Authorization", app.editor.authorization)
      .send({ case_ids: ["missing"], external_ids: ["gone", "kid"] });
    expect(excluded.body.cases[0]).toEqual({ case_id: "missing", error: "not found" });
    expect(excluded.body.cases[1]).toEqual({ external_id: "gone", error: "not found" });
    expect(Object.keys(excluded.body.cases[2])).toEqual(CASE_KEYS.filter((k) => k !== "case_id" && k !== "external_id"));
  });

  it("single create: {xform_id, form_id, case} with the case selected", async () => {
    const res = await app.post({ case_type: "t", case_name: "n", owner_id: "o", properties: { p: "1", q: "2" } }, "?fields=case_name,properties.q");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["xform_id", "form_id", "case"]);
    expect(res.body.case).toEqual({ case_name: "n", properties: { q: "2" } });
  });

  it("bulk write: each case selected, xform_id and form_id kept", async () => {
    const res = await app.post(
      [
        { create: true, case_type: "t", case_name: "one", owner_id: "o" },
        { create: true, case_type: "t", case_name: "two", owner_id: "o" },
      ],
      "?exclude=xform_id,form_id,domain,case_id,case_type,external_id,owner_id,date_opened,last_modified,server_last_modified,indexed_on,closed,date_closed,properties,indices",
    );
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["xform_id", "form_id", "cases"]);
    expect(res.body.cases).toEqual([{ case_name: "one" }, { case_name: "two" }]);
  });

  it("PUT {case_id} and PUT ext/{ext_id}/: the case selected", async () => {
    const { child: kid } = await child();
    const put = await app
      .http()
      .put(`${CASES}${kid.case_id}?fields=case_name`)
      .set("Authorization", app.editor.authorization)
      .send({ case_name: "Renamed" });
    expect(put.status).toBe(200);
    expect(put.body.case).toEqual({ case_name: "Renamed" });
    const upsert = await app
      .http()
      .put(`${CASES}ext/kid/?fields=external_id,case_name`)
      .set("Authorization", app.editor.authorization)
      .send({ case_name: "Again" });
    expect(upsert.status).toBe(200);
    expect(upsert.body.case).toEqual({ case_name: "Again", external_id: "kid" });
    expect(Object.keys(upsert.body.case)).toEqual(["case_name", "external_id"]);
  });
});
