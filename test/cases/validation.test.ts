import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildCaseApp, CASES, caseInAnotherDomain, type CaseTestApp } from "../helpers/cases.ts";
import { caseRows, countCaseIndices, countCases } from "../helpers/rows.ts";

/**
 * CONTRACT §2 "Writes", the validation table: each refused write is a 400 `{"error": <exact
 * message>}` and saves nothing (no case, index or form row changes). Bulk rows report
 * `Error in row <n>: <msg>` joined with `; `. CONTRACT §1: invalid JSON is 400
 * `Payload must be valid JSON`, and no body produces a 500.
 */

let app: CaseTestApp;

beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

const base = { case_type: "patient", case_name: "Ada", owner_id: "owner-1" };
const child = (target: Record<string, string>) => ({ parent: { case_type: "household", relationship: "child", ...target } });

async function snapshot() {
  const p = app.db.prisma;
  return {
    cases: await p.case.findMany({ orderBy: { id: "asc" } }),
    indices: await p.caseIndex.findMany({ orderBy: [{ caseId: "asc" }, { name: "asc" }] }),
    forms: await p.form.findMany({ orderBy: { id: "asc" } }),
    formCases: await p.formCase.count(),
  };
}

type Res = { status: number; body: any };

/** 400 with exactly `{"error": message}`. */
function expectError(res: Res, message: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(Object.keys(res.body)).toEqual(["error"]);
  expect(res.body.error).toBe(message);
}

/** Runs the requests and checks each is refused with its message, and that nothing was saved. */
async function expectRefused(cases: [Promise<Res> | (() => Promise<Res>), string][]) {
  const before = await snapshot();
  for (const [request, message] of cases) {
    expectError(await (typeof request === "function" ? request() : request), message);
  }
  expect(await snapshot()).toEqual(before);
}

describe("unknown keys: '<key>' is not a valid field.", () => {
  it("an unknown key, 'create' outside bulk and 'temporary_id' on an update are refused", async () => {
    const c = await app.createCase({ external_id: "e1" });
    await expectRefused([
      [() => app.post({ ...base, colour: "red" }), "'colour' is not a valid field."],
      [() => app.post({ ...base, create: true }), "'create' is not a valid field."],
      [() => app.put(c.case_id, { create: false, case_name: "x" }), "'create' is not a valid field."],
      [() => app.put("ext/e1/", { create: true }), "'create' is not a valid field."],
      [() => app.put(c.case_id, { temporary_id: "t1" }), "'temporary_id' is not a valid field."],
      [() => app.put("", { case_id: c.case_id, temporary_id: "t1" }), "'temporary_id' is not a valid field."],
      [() => app.post([{ case_id: c.case_id, create: false, temporary_id: "t1" }]), "Error in row 1: 'temporary_id' is not a valid field."],
      [() => app.post([{ ...base, create: true, date_opened: "2020-01-01" }]), "Error in row 1: 'date_opened' is not a valid field."],
    ]);
  });
});

describe("required fields on create: Property <field> is required.", () => {
  it("checks case_type, then case_name, then owner_id", async () => {
    await expectRefused([
      [() => app.post({}), "Property case_type is required."],
      [() => app.post({ case_name: "n", owner_id: "o" }), "Property case_type is required."],
      [() => app.post({ case_type: "t" }), "Property case_name is required."],
      [() => app.post({ case_type: "t", owner_id: "o" }), "Property case_name is required."],
      [() => app.post({ case_type: "t", case_name: "n" }), "Property owner_id is required."],
      [() => app.post([{ case_type: "t", owner_id: "o", create: true }]), "Error in row 1: Property case_name is required."],
    ]);
  });
});

describe("case_id on a create", () => {
  it("is refused: You cannot specify case_id when creating a new case", async () => {
    await expectRefused([
      [() => app.post({ ...base, case_id: randomUUID() }), "You cannot specify case_id when creating a new case"],
      [() => app.post([{ ...base, create: true, case_id: randomUUID() }]), "Error in row 1: You cannot specify case_id when creating a new case"],
    ]);
  });
});

describe("update with neither case_id nor external_id", () => {
  it("is refused: Case updates must provide either a case_id or external_id", async () => {
    await app.createCase();
    await expectRefused([
      [() => app.put("", { case_name: "x" }), "Case updates must provide either a case_id or external_id"],
      [() => app.post([{ create: false, case_name: "x" }]), "Error in row 1: Case updates must provide either a case_id or external_id"],
    ]);
  });
});

describe("non-string values", () => {
  it("a number anywhere other than close/create is refused with the property and the value", async () => {
    const c = await app.createCase();
    await expectRefused([
      [() => app.post({ ...base, case_name: 5 }), "Error with case property 'case_name'. Values must be strings, received '5'"],
      [() => app.post({ ...base, properties: { age: 36 } }), "Error with case property 'age'. Values must be strings, received '36'"],
      [() => app.put(c.case_id, { owner_id: 7 }), "Error with case property 'owner_id'. Values must be strings, received '7'"],
      [
        () => app.post([{ ...base, create: true, external_id: 12 }]),
        "Error in row 1: Error with case property 'external_id'. Values must be strings, received '12'",
      ],
    ]);
  });

  it("booleans, null, lists and objects are refused too, naming the property", async () => {
    const before = await snapshot();
    for (const value of [true, null, ["a"], { a: "b" }]) {
      const res = await app.post({ ...base, properties: { p: value } });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
      expect(res.body.error.startsWith("Error with case property 'p'. Values must be strings, received '")).toBe(true);
    }
    const close = await app.post({ ...base, close: "yes" });
    expect(close.status).toBe(400);
    expect(Object.keys(close.body)).toEqual(["error"]);
    expect(await snapshot()).toEqual(before);
  });
});

describe("property names must be valid XML identifiers", () => {
  it("refuses names starting with xml (any case), a digit, '-' or '.', with a colon, space, or blank", async () => {
    const bad = ["xml_note", "XMLfoo", "Xml", "1abc", "-a", ".a", "a:b", "has space", "", " "];
    await expectRefused(
      bad.map((name) => [
        () => app.post({ ...base, properties: { [name]: "v" } }),
        `Error with case property '${name}'. Case property names must be valid XML identifiers.`,
      ]),
    );
  });

  it("accepts letters, digits, '_', '-', '.' after a letter or '_'", async () => {
    const res = await app.post({ ...base, properties: { _a: "1", "a-b.c": "2", a1: "3", xm: "4", myxml: "5" } });
    expect(res.status).toBe(200);
    expect(res.body.case.properties).toEqual({ _a: "1", "a-b.c": "2", a1: "3", myxml: "5", xm: "4" });
  });
});

describe("a property named like a top-level field", () => {
  it("is refused: This must be specified at the top level.", async () => {
    await expectRefused(
      ["case_type", "case_name", "owner_id", "external_id", "case_id"].map((name) => [
        () => app.post({ ...base, properties: { [name]: "v" } }),
        `Error with case property '${name}'. This must be specified at the top level.`,
      ]),
    );
  });
});

describe("indices", () => {
  it("an invalid index name is refused: Index names must be valid XML identifiers.", async () => {
    const p = await app.createCase();
    await expectRefused(
      ["1parent", "xmlparent", "a:b", ""].map((name) => [
        () => app.post({ ...base, indices: { [name]: { case_id: p.case_id, case_type: "patient", relationship: "child" } } }),
        `Error with index '${name}'. Index names must be valid XML identifiers.`,
      ]),
    );
  });

  it("an index with more than one (or none) of case_id/external_id/temporary_id is refused", async () => {
    const p = await app.createCase({ external_id: "p-ext" });
    const message = "Indices must specify case_id, external_id, or temporary ID, and only one";
    await expectRefused([
      [() => app.post({ ...base, indices: child({ case_id: p.case_id, external_id: "p-ext" }) }), message],
      [() => app.post([{ ...base, create: true, indices: child({ external_id: "p-ext", temporary_id: "t" }) }]), `Error in row 1: ${message}`],
      [() => app.post({ ...base, indices: child({}) }), message],
    ]);
  });

  it("an index without case_type, then without relationship, is refused", async () => {
    const p = await app.createCase();
    await expectRefused([
      [
        () => app.post({ ...base, indices: { parent: { case_id: p.case_id } } }),
        "Property case_type is required when creating or updating case indices",
      ],
      [
        () => app.post({ ...base, indices: { parent: { case_id: p.case_id, relationship: "child" } } }),
        "Property case_type is required when creating or updating case indices",
      ],
      [
        () => app.post({ ...base, indices: { parent: { case_id: p.case_id, case_type: "patient" } } }),
        "Property relationship is required when creating or updating case indices",
      ],
    ]);
  });

  it("a relationship other than child/extension is refused with 400 naming the value", async () => {
    const p = await app.createCase();
    const before = await snapshot();
    const res = await app.post({ ...base, indices: { parent: { case_id: p.case_id, case_type: "patient", relationship: "sibling" } } });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(res.body.error).toContain("sibling");
    expect(await snapshot()).toEqual(before);
  });

  it("an index to a case_id that does not exist in the domain is a submission error: 400 with xform_id, no case changes", async () => {
    const c = await app.createCase({ properties: { a: "1" } });
    const foreignId = await caseInAnotherDomain(app);
    const casesBefore = await caseRows(app);
    const indicesBefore = await countCaseIndices(app);
    for (const target of [randomUUID(), foreignId]) {
      for (const send of [
        () => app.post({ ...base, indices: child({ case_id: target }) }),
        () => app.put(c.case_id, { properties: { a: "2" }, indices: child({ case_id: target }) }),
        () =>
          app.post([
            { ...base, create: true },
            { case_id: c.case_id, create: false, indices: child({ case_id: target }) },
          ]),
      ]) {
        const res = await send();
        expect(res.status).toBe(400);
        expect(Object.keys(res.body)).toEqual(["error", "xform_id"]);
        expect(res.body.xform_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(res.body.error).toEqual(expect.any(String));
      }
    }
    expect(await caseRows(app)).toEqual(casesBefore);
    expect(await countCaseIndices(app)).toBe(indicesBefore);
  });
});

describe("references that do not resolve", () => {
  it("an unknown case_id on update: No case found with ID '<id>' (also a case of another domain)", async () => {
    const foreignId = await caseInAnotherDomain(app);
    const missing = randomUUID();
    await expectRefused([
      [() => app.put(missing, { case_name: "x" }), `No case found with ID '${missing}'`],
      [() => app.put(foreignId, { case_name: "x" }), `No case found with ID '${foreignId}'`],
      [() => app.put("not-a-uuid", { case_name: "x" }), "No case found with ID 'not-a-uuid'"],
      [() => app.put("", { case_id: missing, case_name: "x" }), `No case found with ID '${missing}'`],
      [
        () =>
          app.post([
            { ...base, create: true },
            { case_id: missing, create: false },
          ]),
        `Error in row 2: No case found with ID '${missing}'`,
      ],
    ]);
  });

  it("an unknown external_id (update or index): Could not find a case with external_id '<ext>'", async () => {
    await app.createCase({ external_id: "known" });
    await expectRefused([
      [() => app.post([{ external_id: "nope", create: false, case_name: "x" }]), "Error in row 1: Could not find a case with external_id 'nope'"],
      [() => app.post({ ...base, indices: child({ external_id: "nope" }) }), "Could not find a case with external_id 'nope'"],
    ]);
  });

  it("an unknown temporary_id: Could not find a case with temporary_id '<tmp>'", async () => {
    await expectRefused([
      [
        () =>
          app.post([
            { ...base, create: true, temporary_id: "real" },
            { ...base, create: true, indices: child({ temporary_id: "ghost" }) },
          ]),
        "Error in row 2: Could not find a case with temporary_id 'ghost'",
      ],
    ]);
  });
});

describe("length limits", () => {
  it("more than 255 characters in case_type, case_name, owner_id or external_id is a 400 naming the field", async () => {
    const c = await app.createCase();
    const before = await snapshot();
    const long = "x".repeat(256);
    for (const field of ["case_type", "case_name", "owner_id", "external_id"]) {
      for (const send of [() => app.post({ ...base, [field]: long }), () => app.put(c.case_id, { [field]: long })]) {
        const res = await send();
        expect(res.status, field).toBe(400);
        expect(Object.keys(res.body)).toEqual(["error"]);
        expect(res.body.error).toContain(field);
      }
    }
    const viaPath = await app.put(`ext/${long}/`, base);
    expect(viaPath.status).toBe(400);
    expect(viaPath.body.error).toContain("external_id");
    expect(await snapshot()).toEqual(before);

    const exact = "é".repeat(255);
    const ok = await app.post({ case_type: exact, case_name: exact, owner_id: exact, external_id: exact });
    expect(ok.status).toBe(200);
    expect(ok.body.case.case_name).toBe(exact);
  });
});

describe("bulk limits and row errors", () => {
  it("a bulk of 101 is refused: Payload too large: you cannot submit more than 100 updates in a single request", async () => {
    await expectRefused([
      [
        () => app.post(Array.from({ length: 101 }, () => ({ ...base, create: true }))),
        "Payload too large: you cannot submit more than 100 updates in a single request",
      ],
      [
        () =>
          app.put(
            "",
            Array.from({ length: 101 }, () => ({ ...base, create: true })),
          ),
        "Payload too large: you cannot submit more than 100 updates in a single request",
      ],
    ]);
    const hundred = await app.post(Array.from({ length: 100 }, (_, i) => ({ ...base, case_name: `c${i}`, create: true })));
    expect(hundred.status).toBe(200);
    expect(hundred.body.cases).toHaveLength(100);
    expect(await countCases(app)).toBe(100);
  });

  it("errors of several rows are reported 1-based as 'Error in row <n>: <msg>' joined with '; ', nothing saved", async () => {
    const existing = await app.createCase();
    const missing = randomUUID();
    await expectRefused([
      [
        () =>
          app.post([
            { ...base, create: true },
            { case_type: "t", owner_id: "o", create: true },
            { case_id: existing.case_id, create: false, case_name: "fine" },
            { ...base, create: true, colour: "red" },
          ]),
        "Error in row 2: Property case_name is required.; Error in row 4: 'colour' is not a valid field.",
      ],
      [
        () =>
          app.put("", [
            { case_id: missing, create: false },
            { ...base, create: true },
            { external_id: "nope", create: false },
          ]),
        `Error in row 1: No case found with ID '${missing}'; Error in row 3: Could not find a case with external_id 'nope'`,
      ],
    ]);
  });

  it("a bulk item with create omitted and no external_id: Error in row <n>: A 'create' flag is required for each update.", async () => {
    const existing = await app.createCase();
    await expectRefused([
      [() => app.post([{ ...base, create: true }, { ...base }]), "Error in row 2: A 'create' flag is required for each update."],
      [() => app.post([{ case_id: existing.case_id, case_name: "x" }]), "Error in row 1: A 'create' flag is required for each update."],
      [() => app.put("", [{ case_id: existing.case_id, create: null }]), "Error in row 1: A 'create' flag is required for each update."],
    ]);
  });
});

describe("bodies that are not a payload", () => {
  const targets = (id: string) => [
    (r: ReturnType<CaseTestApp["http"]>) => r.post(CASES),
    (r: ReturnType<CaseTestApp["http"]>) => r.put(CASES),
    (r: ReturnType<CaseTestApp["http"]>) => r.put(`${CASES}${id}`),
    (r: ReturnType<CaseTestApp["http"]>) => r.put(`${CASES}ext/e1/`),
  ];

  it("invalid JSON is 400 Payload must be valid JSON", async () => {
    const c = await app.createCase({ external_id: "e1" });
    const before = await snapshot();
    for (const target of targets(c.case_id)) {
      for (const text of ['{"case_type": ', "not json", "{'a': 1}"]) {
        const res = await target(app.http()).set("Authorization", app.editor.authorization).set("Content-Type", "application/json").send(text);
        expectError(res, "Payload must be valid JSON");
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it("an empty body (Content-Length: 0) is not valid JSON either: 400 Payload must be valid JSON, nothing written", async () => {
    const c = await app.createCase({ external_id: "e1" });
    const before = await snapshot();
    for (const target of targets(c.case_id)) {
      const empty = await target(app.http()).set("Authorization", app.editor.authorization).set("Content-Type", "application/json");
      expectError(empty, "Payload must be valid JSON");
    }
    expect(await snapshot()).toEqual(before);
  });

  it("a JSON scalar body (or a list of scalars, or an empty list) is a 400, never a 500", async () => {
    const c = await app.createCase({ external_id: "e1" });
    const before = await snapshot();
    for (const target of targets(c.case_id)) {
      for (const text of ["5", '"text"', "null", "true", "[1]", '["a", null]', "[]"]) {
        const res = await target(app.http()).set("Authorization", app.editor.authorization).set("Content-Type", "application/json").send(text);
        expect(res.status, text).toBe(400);
        expect(Object.keys(res.body), text).toEqual(["error"]);
        expect(res.body.error).toEqual(expect.any(String));
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe("values PostgreSQL cannot store", () => {
  let app: CaseTestApp;
  beforeEach(async () => {
    app = await buildCaseApp();
  });
  afterEach(() => app.close());

  it.each([
    ["a property value", { properties: { p: "x\u0000" } }, "Error with case property 'p'. Values cannot contain the NUL character."],
    ["external_id", { external_id: "\u0000" }, "Error with case property 'external_id'. Values cannot contain the NUL character."],
    [
      "an index id",
      { indices: { parent: { case_id: "a\u0000", case_type: "t", relationship: "child" } } },
      "Error with case property 'case_id'. Values cannot contain the NUL character.",
    ],
  ])("refuses a NUL character in %s with 400, never 500", async (_name, fields, message) => {
    const res = await app.post({ case_type: "t", case_name: "n", owner_id: "o", ...fields });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: message });
    expect(await countCases(app)).toBe(0);
  });

  it("refuses a NUL character in the external id of PUT ext/{ext_id}/ with 400", async () => {
    const res = await app.put("ext/a%00b/", { case_type: "t", case_name: "n", owner_id: "o" });
    expect(res.status).toBe(400);
  });

  it("refuses a property named __proto__ with 400 rather than dropping it", async () => {
    const res = await app.post(JSON.parse('{"case_type":"t","case_name":"n","owner_id":"o","properties":{"__proto__":"x"}}'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "Error with case property '__proto__'. This name is reserved." });
  });
});
