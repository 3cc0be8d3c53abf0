import fc from "fast-check";
import { XMLParser } from "fast-xml-parser";
import { afterEach, describe, expect, it } from "vitest";
import { isXmlName } from "../../src/cases/case.actions.ts";
import { formXml, type CaseBlock } from "../../src/cases/case.form.ts";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";
import { xmlProblem } from "../helpers/xml.ts";
import { formRow } from "../helpers/rows.ts";

/**
 * The generated form's XML is written by hand (src/cases/case.form.ts), so a well-kept parser
 * checks it: whatever text the values hold, the XML is well formed and gives every value back,
 * with the characters XML cannot carry (C0 controls, U+FFFE/U+FFFF) as U+FFFD.
 */

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  htmlEntities: true,
});

/** What a value reads as from the form: every character XML cannot carry becomes U+FFFD. */
const asStored = (value: string) => value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd");

/** Text a case value may hold: anything but NUL (refused earlier) and lone surrogates (refused earlier). */
const text = fc.string({ unit: "binary", maxLength: 40 }).map((s) => s.replace(/[\u0000\ud800-\udfff]/g, ""));
const nonEmpty = text.filter((s) => s.length > 0);
/**
 * Property and index names as the rules accept them, unicode letters and digits included (not
 * astral ones such as 𝔘: XML 1.0 allows them in names, fast-xml-parser's validator does not).
 */
const xmlName = fc
  .string({ unit: fc.constantFrom("a", "Z", "_", "-", ".", "1", "é", "µ", "²", "日", "ͅ", "Ω"), minLength: 1, maxLength: 8 })
  .filter(isXmlName);

describe("generated form XML", () => {
  it("parses, and gives back every value and attribute as written (300 random forms)", () => {
    fc.assert(
      fc.property(
        nonEmpty,
        nonEmpty,
        nonEmpty,
        fc.dictionary(xmlName, nonEmpty, { maxKeys: 5 }),
        nonEmpty,
        nonEmpty,
        (caseType, caseName, ownerId, properties, username, deviceId) => {
          const block: CaseBlock = {
            caseId: "11111111-1111-4111-8111-111111111111",
            created: true,
            fields: { caseType, caseName, ownerId, properties, indices: [], close: false },
            indices: new Map([["parent", { caseId: "22222222-2222-4222-8222-222222222222", caseType: caseType, relationship: "child" }]]),
          };
          const xml = formXml([block], { formId: "f", userId: "u", username, deviceId, receivedOn: new Date(0) });
          expect(xmlProblem(xml)).toBeUndefined();
          const data = parser.parse(xml).data;
          expect(data.case.create).toEqual({ case_type: asStored(caseType), case_name: asStored(caseName), owner_id: asStored(ownerId) });
          for (const [name, value] of Object.entries(properties)) expect(String(data.case.update[name])).toBe(asStored(value));
          expect(data.case.index.parent).toMatchObject({ "@case_type": asStored(caseType), "@relationship": "child" });
          expect(data.meta).toMatchObject({ username: asStored(username), deviceID: asStored(deviceId) });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("F15: names that are letters or digits to Unicode but no XML 1.0 name (µ, ª, a²) are refused, as no form could hold them", () => {
    for (const name of ["µ", "ª", "a²", "x¹", "º"]) expect(isXmlName(name), name).toBe(false);
    for (const name of ["é", "Ω", "日本", "a.b-c_1", "𝔘x"]) expect(isXmlName(name), name).toBe(true);
  });
});

describe("F15: the stored form of a write through the API", () => {
  let app: CaseTestApp;
  afterEach(() => app.close());

  it("F15: values with C0 control characters give a well-formed form whose text holds U+FFFD (REST and GraphQL)", async () => {
    app = await buildCaseApp();
    const value = "</p><injected>1</injected>\u0001\u001f\ufffe";
    const res = await app.post({ case_type: "t\u0007", case_name: "n", owner_id: "o", properties: { p: value } });
    expect(res.status).toBe(200);
    // the case keeps the value as sent (JSON carries any character); only the form's XML replaces them
    expect([res.body.case.case_type, res.body.case.properties.p]).toEqual(["t\u0007", value]);
    const gql = await app
      .http()
      .post("/graphql")
      .set("Authorization", app.editor.authorization)
      .send({ query: 'query($id: ID!) { form(domain: "demo", formId: $id) { xml } }', variables: { id: res.body.xform_id } });
    const xml: string = gql.body.data.form.xml;
    expect(xmlProblem(xml)).toBeUndefined();
    const data = parser.parse(xml).data;
    expect(data.case.update.p).toBe("</p><injected>1</injected>\ufffd\ufffd\ufffd");
    expect(data.case.create.case_type).toBe("t\ufffd");

    const viaGraphQL = await app
      .http()
      .post("/graphql")
      .set("Authorization", app.editor.authorization)
      .send({
        query:
          'mutation($p: JSONObject) { createCase(domain: "demo", input: {caseType: "t", caseName: "n\\u0002", ownerId: "o", properties: $p}) { xformId } }',
        variables: { p: { q: "a\u0008b" } },
      });
    const formId = viaGraphQL.body.data.createCase.xformId;
    const stored = await formRow(app, formId);
    expect(xmlProblem(stored.xml)).toBeUndefined();
    expect(parser.parse(stored.xml).data.case.update.q).toBe("a\ufffdb");
  });

  it("F15: a property name such as µ answers 400 as any invalid name, nothing saved", async () => {
    app = await buildCaseApp();
    const res = await app.post({ case_type: "t", case_name: "n", owner_id: "o", properties: { µ: "v" } });
    expect([res.status, res.body]).toEqual([400, { error: "Error with case property 'µ'. Case property names must be valid XML identifiers." }]);
    const index = await app.post({
      case_type: "t",
      case_name: "n",
      owner_id: "o",
      indices: { "a²": { case_id: "", case_type: "t", relationship: "child" } },
    });
    expect([index.status, index.body]).toEqual([400, { error: "Error with index 'a²'. Index names must be valid XML identifiers." }]);
    expect((await app.get("")).body.matching_records).toBe(0);
  });
});
