import { describe, expect, it } from "vitest";
import { refusal } from "../helpers/errors.ts";
import { caseAction } from "../../src/cases/case.actions.ts";
import { parseWriteBody } from "../../src/cases/case.payload.rest.ts";

/**
 * The text rule of case writes without a database: REST's body reader checks each text field once,
 * in field order (type and storable text together), and the rules check them for GraphQL's items.
 */

const CREATE = { kind: "create" } as const;

describe("a REST case write reports the first text field's mistake, in field order", () => {
  it.each([
    [{ case_type: "t\u0000", case_name: 5, owner_id: "o" }, "Error with case property 'case_type'. Values cannot contain the NUL character."],
    [{ case_type: 5, case_name: "n\u0000", owner_id: "o" }, "Error with case property 'case_type'. Values must be strings, received '5'"],
    [
      { case_type: "t", case_name: "n\ud800", owner_id: "o\u0000" },
      "Error with case property 'case_name'. Values cannot contain an unpaired surrogate.",
    ],
    [{ case_type: "t", case_name: "n", owner_id: "o\ud800\u0000" }, "Error with case property 'owner_id'. Values cannot contain the NUL character."],
    [
      { owner_id: "o", external_id: "\udc00", case_type: "t", case_name: "n" },
      "Error with case property 'external_id'. Values cannot contain an unpaired surrogate.",
    ],
  ])("%j", (body, message) => {
    expect(refusal(() => parseWriteBody(body, CREATE))).toBe(message);
    expect(refusal(() => parseWriteBody([{ create: true, ...body }], CREATE))).toBe(`Error in row 1: ${message}`);
  });

  it("reads a body of storable texts into its action", () => {
    const { actions } = parseWriteBody({ case_type: "t", case_name: "n \ud83d\ude00", owner_id: "o" }, CREATE);
    expect(actions).toMatchObject([{ action: "create", fields: { caseType: "t", caseName: "n \ud83d\ude00", ownerId: "o" } }]);
  });
});

describe("the case rules check the text fields of a GraphQL item", () => {
  it.each([
    [{ caseType: "t\u0000", caseName: "n", ownerId: "o" }, "Error with case property 'case_type'. Values cannot contain the NUL character."],
    [{ caseType: "t", caseName: "n\ud800", ownerId: "o" }, "Error with case property 'case_name'. Values cannot contain an unpaired surrogate."],
  ])("%j", (item, message) => {
    expect(refusal(() => caseAction(item, CREATE))).toBe(message);
  });
});
