import fc from "fast-check";
import { XMLParser } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { formXml, type CaseBlock } from "../../src/cases/case.form.ts";

/**
 * The generated form's XML is written by hand (src/cases/case.form.ts), so a well-kept parser
 * checks it: whatever text the values hold, the XML parses and gives every value back unchanged.
 */

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  htmlEntities: true,
});

/** Text a case value may hold: any characters XML 1.0 can carry (NUL and other C0 controls are refused earlier). */
const text = fc
  .string({ unit: "binary", maxLength: 40 })
  .map((s) => s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff]/g, ""));
const nonEmpty = text.filter((s) => s.length > 0);
const xmlName = fc.stringMatching(/^[a-z_][a-z0-9_.-]{0,12}$/).filter((n) => !/^xml/i.test(n));

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
            indices: { parent: { caseId: "22222222-2222-4222-8222-222222222222", caseType: caseType, relationship: "child" } },
          };
          const xml = formXml([block], { formId: "f", userId: "u", username, deviceId, receivedOn: new Date(0) });
          const data = parser.parse(xml).data;
          expect(data.case.create).toEqual({ case_type: caseType, case_name: caseName, owner_id: ownerId });
          for (const [name, value] of Object.entries(properties)) expect(String(data.case.update[name])).toBe(value);
          expect(data.case.index.parent).toMatchObject({ "@case_type": caseType, "@relationship": "child" });
          expect(data.meta).toMatchObject({ username, deviceID: deviceId });
        },
      ),
      { numRuns: 300 },
    );
  });
});
