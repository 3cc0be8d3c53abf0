import { XMLParser } from "fast-xml-parser";
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CASE_API_XMLNS } from "../../src/cases/case.form.ts";
import { buildCaseApp, CASES, type CaseTestApp } from "../helpers/cases.ts";
import { xmlProblem } from "../helpers/xml.ts";
import { caseRow, countFormCases, countForms, domainRow, formRow, userRow } from "../helpers/rows.ts";

/**
 * CONTRACT §2 "Writes": every write stores one generated form (domain, the fixed case-API xmlns,
 * the caller's user id and username, device_id = User-Agent, received time, and the case blocks it
 * applied as XML); a bulk write stores one form for all its cases; a refused request stores no
 * form, except a submission error, whose form records the problem.
 */

let app: CaseTestApp;

beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

const base = { case_type: "patient", case_name: "Ada", owner_id: "owner-1" };
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", parseTagValue: false, parseAttributeValue: false });

/** POST/PUT as the editor with a User-Agent. */
function send(method: "post" | "put", path: string, body: unknown, userAgent = "test-agent/1.0") {
  return app
    .http()
    [method](`${CASES}${path}`)
    .set("Authorization", app.editor.authorization)
    .set("User-Agent", userAgent)
    .send(body as object);
}

/** The root element of a form's XML, which must be well-formed (characters included). */
function formRoot(xml: string): Record<string, any> {
  expect(xmlProblem(xml)).toBeUndefined();
  const doc = parser.parse(xml);
  return Object.values(doc).find((v) => typeof v === "object") as Record<string, any>;
}

/** The case blocks of a form's XML, as parsed objects, in document order. */
function caseBlocks(xml: string): Record<string, any>[] {
  const blocks = formRoot(xml).case;
  return Array.isArray(blocks) ? blocks : blocks ? [blocks] : [];
}

const form = (id: string) => formRow(app, id);

describe("the form of a single write", () => {
  it("holds domain, fixed xmlns, caller's user id and username, device_id = User-Agent, received time", async () => {
    const before = Date.now();
    const res = await send("post", "", { ...base, external_id: "e-1", properties: { age: "36" } }, "MobileClient/3.2 (iOS)");
    const after = Date.now();
    expect(res.status).toBe(200);
    const f = await form(res.body.xform_id);
    const domain = await domainRow(app, "demo");
    const user = await userRow(app, app.editor.username);
    expect(f.domainId).toBe(domain.id);
    expect(f.xmlns).toBe(CASE_API_XMLNS);
    expect(CASE_API_XMLNS.length).toBeGreaterThan(0);
    expect(f.userId).toBe(user.id);
    expect(f.username).toBe(app.editor.username);
    expect(f.deviceId).toBe("MobileClient/3.2 (iOS)");
    expect(f.problem).toBeNull();
    expect(f.receivedOn.getTime()).toBeGreaterThanOrEqual(before);
    expect(f.receivedOn.getTime()).toBeLessThanOrEqual(after);
    expect(Date.parse(res.body.case.last_modified)).toBe(f.receivedOn.getTime());
    expect(f.formCases.map((fc) => fc.caseId)).toEqual([res.body.case.case_id]);
  });

  it("a create's XML holds one case block with the case id, a create element and the updates", async () => {
    const res = await send("post", "", { ...base, external_id: "e-1", properties: { age: "36" } });
    const [block] = caseBlocks((await form(res.body.xform_id)).xml);
    expect(block["@case_id"]).toBe(res.body.case.case_id);
    expect(block.create).toEqual({ case_type: "patient", case_name: "Ada", owner_id: "owner-1" });
    expect(block.update).toMatchObject({ external_id: "e-1", age: "36" });
    expect(block.close).toBeUndefined();
    expect(block.index).toBeUndefined();
  });

  it("an update's XML holds update, index and close elements, and no create", async () => {
    const parent = await app.createCase({ case_type: "household" });
    const c = await app.createCase({ properties: { a: "1" } });
    const res = await send("put", c.case_id, {
      case_name: "Renamed",
      properties: { b: "2" },
      indices: { parent: { case_id: parent.case_id, case_type: "household", relationship: "child" } },
      close: true,
    });
    expect(res.status).toBe(200);
    const f = await form(res.body.xform_id);
    const blocks = caseBlocks(f.xml);
    expect(blocks).toHaveLength(1);
    const [block] = blocks;
    expect(block["@case_id"]).toBe(c.case_id);
    expect(block.create).toBeUndefined();
    expect(block.update).toEqual({ case_name: "Renamed", b: "2" });
    expect(block.index.parent).toMatchObject({ "@case_type": "household", "@relationship": "child", "#text": parent.case_id });
    expect(block.close).toBeDefined();
    expect(f.formCases.map((fc) => fc.caseId)).toEqual([c.case_id]);

    const removed = await send("put", c.case_id, { indices: { parent: { case_id: "" } } });
    const [removal] = caseBlocks((await form(removed.body.xform_id)).xml);
    expect(removal.index).toHaveProperty("parent");
    expect(removal.index.parent["#text"] ?? "").toBe("");
  });

  it("the XML stays well-formed whatever the values and the User-Agent hold", async () => {
    const tricky = `<b>&amp; "quoted" 'single' ]]> \u00e9\u2603`;
    const agent = `agent <x> & "q" 'a' ]]> </meta>`; // header values are Latin-1 only
    const res = await send("post", "", { ...base, case_name: tricky, properties: { note: tricky } }, agent);
    expect(res.status).toBe(200);
    const f = await form(res.body.xform_id);
    expect(f.deviceId).toBe(agent);
    expect(formRoot(f.xml).meta.deviceID).toBe(agent);
    const [block] = caseBlocks(f.xml);
    expect(block.create.case_name).toBe(tricky);
    expect(block.update.note).toBe(tricky);
  });
});

describe("the form of a bulk write", () => {
  it("one form covers all the cases: one form_cases row per case, one case block per item in request order", async () => {
    const existing = await app.createCase();
    const formsBefore = await countForms(app);
    const res = await send("post", "", [
      { ...base, case_name: "one", create: true, temporary_id: "tmp-first-item" },
      { case_id: existing.case_id, create: false, properties: { x: "1" } },
      {
        ...base,
        case_name: "three",
        create: true,
        indices: { parent: { temporary_id: "tmp-first-item", case_type: "patient", relationship: "child" } },
      },
    ]);
    expect(res.status).toBe(200);
    expect(await countForms(app)).toBe(formsBefore + 1);
    const f = await form(res.body.xform_id);
    const ids = res.body.cases.map((c: any) => c.case_id);
    expect(new Set(f.formCases.map((fc) => fc.caseId))).toEqual(new Set(ids));
    const blocks = caseBlocks(f.xml);
    expect(blocks.map((b) => b["@case_id"])).toEqual(ids);
    expect(blocks.map((b) => b.create !== undefined)).toEqual([true, false, true]);
    expect(blocks[2].index.parent["#text"]).toBe(ids[0]);
    expect(f.xml).not.toContain("tmp-first-item");
  });
});

describe("refused requests", () => {
  it("a validation error stores no form", async () => {
    const c = await app.createCase();
    const before = [await countForms(app), await countFormCases(app)];
    const refused = await Promise.all([
      send("post", "", { case_type: "t" }),
      send("post", "", [{ ...base, create: true }, { ...base }]),
      send("put", randomUUID(), { case_name: "x" }),
      send(
        "post",
        "",
        Array.from({ length: 101 }, () => ({ ...base, create: true })),
      ),
      send("put", c.case_id, { properties: { "1bad": "x" } }),
      send("post", "", { ...base, indices: { parent: { external_id: "nope", case_type: "t", relationship: "child" } } }),
    ]);
    for (const res of refused) {
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
    expect([await countForms(app), await countFormCases(app)]).toEqual(before);
  });

  it("a submission error stores its form with `problem` set, under the xform_id it answers, and changes no case", async () => {
    const c = await app.createCase({ properties: { a: "1" } });
    const caseBefore = await caseRow(app, c.case_id);
    const missing = randomUUID();
    const res = await send(
      "put",
      c.case_id,
      { properties: { a: "2" }, indices: { parent: { case_id: missing, case_type: "t", relationship: "child" } } },
      "agent-x",
    );
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(["error", "xform_id"]);
    const f = await form(res.body.xform_id);
    expect(f.problem).toBe(res.body.error);
    expect(f.problem).toContain(missing);
    expect(f.xmlns).toBe(CASE_API_XMLNS);
    expect(f.username).toBe(app.editor.username);
    expect(f.deviceId).toBe("agent-x");
    expect(f.formCases).toEqual([]);
    expect(await caseRow(app, c.case_id)).toEqual(caseBefore);
    expect(await countForms(app)).toBe(2);
  });
});
