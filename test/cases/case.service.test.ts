/**
 * The service tier of cases: `CaseReads.in` and `CaseWrites.in` called directly, with no HTTP and
 * no Apollo. Each scenario is named after the CONTRACT §2 rule it pins and expects the exact
 * DomainError (code, status, message); the faces' suites (reads, writes, filters, validation,
 * graphql…) keep what only the wire shows. One database serves the file and each test writes in a
 * domain of its own: domains are the isolation the product guarantees, and it keeps this tier fast.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.ts";
import type { CaseRecord } from "../../src/cases/case.record.ts";
import { badInput, forbidden, notFound, rejection } from "../helpers/errors.ts";
import { caseRows, countCaseIndices, countCases, countFormCases, countForms } from "../helpers/rows.ts";
import { services, type TestServices } from "../helpers/services.ts";
import { ACCEPTED_QUERIES, action, bulkRow, caseQuery, create, HOUSEHOLD, parentIndex, REFUSED_QUERIES } from "./case.scenarios.ts";

let t: TestServices;
/** this test's domain, with an editor (edit_data) and a reader (view_data) in it */
let demo: string;
let editor: Principal;
let reader: Principal;

beforeAll(async () => {
  t = await services();
});
afterAll(() => t.close());
beforeEach(async () => {
  demo = await t.domain();
  editor = await t.member(demo, ["access_api", "edit_data"]);
  reader = await t.member(demo, ["access_api", "view_data"]);
});

const reads = (who: Principal = reader, domain = demo) => t.services.caseReads.in(who, domain);
const writes = (who: Principal = editor, domain = demo) => t.services.caseWrites.in(who, domain);
const write = async (actions: Parameters<Awaited<ReturnType<typeof writes>>["write"]>[0], bulk = false) =>
  (await writes()).write(actions, { deviceId: "test", bulk });
const names = (records: CaseRecord[]) => records.map((r) => r.caseName);

describe("who may: the scope is opened before any input is looked at", () => {
  it("a member without view_data may not read: 403 'You do not have permission to do this.'", async () => {
    const locationsOnly = await t.member(demo, ["access_api", "view_locations"]);
    expect(await rejection(reads(locationsOnly))).toEqual(forbidden("You do not have permission to do this."));
  });

  it("a reader may not write: 403 'You do not have permission to do this.'", async () => {
    expect(await rejection(writes(reader))).toEqual(forbidden("You do not have permission to do this."));
  });

  it("a user of another domain gets the same 403 for a domain that exists and one that does not", async () => {
    expect(await rejection(reads(reader, "nowhere"))).toEqual(forbidden("You are not a member of the domain 'nowhere'."));
    const other = await t.domain();
    expect(await rejection(reads(reader, other))).toEqual(forbidden(`You are not a member of the domain '${other}'.`));
  });

  it("a superuser is told the domain does not exist: 404 Domain '<name>' not found", async () => {
    expect(await rejection(reads(t.root, "nowhere"))).toEqual(notFound("Domain 'nowhere' not found"));
    expect(await rejection(writes(t.root, "nowhere"))).toEqual(notFound("Domain 'nowhere' not found"));
  });
});

describe("list: the query's value rules (checkQuery), each with its exact message", () => {
  for (const [rule, { query, refused }] of Object.entries(REFUSED_QUERIES)) {
    it(rule, async () => {
      expect(await rejection((await reads()).list(query))).toEqual(refused);
    });
  }

  it("queries at each bound are answered", async () => {
    const scope = await reads();
    for (const [rule, query] of Object.entries(ACCEPTED_QUERIES)) {
      expect((await scope.list(query)).records, rule).toEqual([]);
    }
  });

  it("a slice (GraphQL's page) checks the same filter rules, but has no page size", async () => {
    const scope = await reads();
    const slice = { order: { field: "indexed_on", direction: "asc" } as const, size: 5, backward: false };
    for (const rule of ["at most 100 values of one property", "an index filter needs a name", "a date range's value is a date or a datetime"]) {
      const { limit: _limit, ...filter } = REFUSED_QUERIES[rule].query;
      expect(await rejection(scope.slice(filter, slice)), rule).toEqual(REFUSED_QUERIES[rule].refused);
    }
    const { limit: _limit, ...unlimited } = REFUSED_QUERIES["at most 5000 cases per request"].query;
    expect((await scope.slice(unlimited, slice)).read).toEqual([]);
  });
});

describe("list: what the filters match", () => {
  beforeEach(() => write(HOUSEHOLD));

  it("no filter lists every case of the domain, with the total", async () => {
    const page = await (await reads()).list(caseQuery());
    expect(names(page.records).sort()).toEqual(["Ana", "Rui", "The Silvas"]);
    expect(page.total).toBe(3);
    expect(page.next).toBeUndefined();
  });

  it("a page smaller than the matches carries where the next one starts", async () => {
    const scope = await reads();
    const first = await scope.list(caseQuery((q) => (q.limit = 2)));
    expect(first.records).toHaveLength(2);
    expect(first.next).toBeDefined();
    const second = await scope.list(
      caseQuery((q) => (q.limit = 2)),
      first.next,
    );
    expect(second.total).toBe(1);
    expect(names([...first.records, ...second.records]).sort()).toEqual(["Ana", "Rui", "The Silvas"]);
  });

  it("repeated values of one filter OR; different filters AND", async () => {
    const scope = await reads();
    expect(names((await scope.list(caseQuery((q) => (q.exact.case_name = ["Ana", "Rui"])))).records).sort()).toEqual(["Ana", "Rui"]);
    const both = caseQuery((q) => ((q.exact.case_name = ["Ana", "Rui"]), (q.closed = [false])));
    expect(names((await scope.list(both)).records)).toEqual(["Ana"]);
  });

  it("properties match exactly; an empty value matches cases without the property", async () => {
    const scope = await reads();
    expect(names((await scope.list(caseQuery((q) => q.properties.set("age", ["9"])))).records)).toEqual(["Rui"]);
    expect(names((await scope.list(caseQuery((q) => q.properties.set("age", [""])))).records)).toEqual(["The Silvas"]);
  });

  it("indices.parent=<id> lists the children of that case", async () => {
    const scope = await reads();
    const [home] = (await scope.list(caseQuery((q) => (q.exact.case_type = ["household"])))).records;
    expect(names((await scope.list(caseQuery((q) => q.indices.set("parent", [home.id])))).records).sort()).toEqual(["Ana", "Rui"]);
    expect((await scope.list(caseQuery((q) => q.indices.set("parent", ["not-a-uuid"])))).records).toEqual([]);
  });

  it("a date-only bound covers its whole day: gte today lists all, gt today none", async () => {
    const scope = await reads();
    const today = new Date().toISOString().slice(0, 10);
    const range = (op: "gte" | "gt") => caseQuery((q) => q.ranges.push({ field: "date_opened", op, values: [today] }));
    expect((await scope.list(range("gte"))).total).toBe(3);
    expect((await scope.list(range("gt"))).total).toBe(0);
  });
});

describe("single reads and the bulk fetch", () => {
  beforeEach(() => write(HOUSEHOLD));

  it("byId finds a case whatever the case of its id; byExternalId is exact", async () => {
    const scope = await reads();
    const ana = (await scope.byExternalId("ana-1"))!;
    expect((await scope.byId(ana.id.toUpperCase()))?.caseName).toBe("Ana");
    expect(await scope.byExternalId("ANA-1")).toBeUndefined();
  });

  it("a bulk fetch names some ids: 400 Payload must include 'case_ids' or 'external_ids' fields", async () => {
    expect(await rejection((await reads()).fetch({ caseIds: [], externalIds: [] }))).toEqual(
      badInput("Payload must include 'case_ids' or 'external_ids' fields"),
    );
  });

  it("a bulk fetch names at most 5000 ids in all: 400 You cannot request more than 5000 cases per request.", async () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `id-${i}`);
    expect(await rejection((await reads()).fetch({ caseIds: ids(2500), externalIds: ids(2501) }))).toEqual(
      badInput("You cannot request more than 5000 cases per request."),
    );
    expect(await (await reads()).fetch({ caseIds: ids(2500), externalIds: ids(2500) })).toHaveLength(5000);
  });

  it("a bulk fetch answers case ids first, then external ids, each in request order, duplicates repeated", async () => {
    const scope = await reads();
    const ana = (await scope.byExternalId("ana-1"))!;
    const entries = await scope.fetch({ caseIds: ["missing", ana.id, ana.id], externalIds: ["ana-1", "nope"] });
    expect(entries.map((e) => [e.by, e.id, e.record?.caseName])).toEqual([
      ["case_id", "missing", undefined],
      ["case_id", ana.id, "Ana"],
      ["case_id", ana.id, "Ana"],
      ["external_id", "ana-1", "Ana"],
      ["external_id", "nope", undefined],
    ]);
  });

  it("another domain's cases are not found from inside this one", async () => {
    const other = await t.domain();
    const theirEditor = await t.member(other, ["access_api", "edit_data"]);
    const [theirs] = (await (await writes(theirEditor, other)).write([create({ externalId: "ana-1" })], { deviceId: "t", bulk: false })).cases;
    const scope = await reads();
    expect(await scope.byId(theirs.id)).toBeUndefined();
    expect((await scope.byExternalId("ana-1"))?.domainName).toBe(demo);
  });
});

describe("writes: create, update, close, parent and child", () => {
  it("a create returns the case and the form that wrote it; one form, one form_cases row per case", async () => {
    const { formId, cases } = await write([create({ properties: { age: "34" } })]);
    expect(cases[0]).toMatchObject({ caseType: "patient", caseName: "Ana", ownerId: "owner-1", closed: false, properties: { age: "34" } });
    expect([await countForms(t, demo), await countFormCases(t, formId)]).toEqual([1, 1]);
  });

  it("an update merges properties and keeps what it does not name", async () => {
    const [ana] = (await write([create({ properties: { age: "34", town: "Alto" } })])).cases;
    const [updated] = (await write([action({ properties: { age: "35" } }, { kind: "update", caseId: ana.id })])).cases;
    expect(updated).toMatchObject({ caseName: "Ana", properties: { age: "35", town: "Alto" } });
  });

  it("an update of an unknown case: 400 No case found with ID '<id>'; in a list, the row is named", async () => {
    const unknown = "5c7a1b1e-0000-4000-8000-000000000000";
    const update = action({ caseName: "x" }, { kind: "update", caseId: unknown });
    expect(await rejection(write([update]))).toEqual(badInput(`No case found with ID '${unknown}'`));
    const rows = [bulkRow({ create: true, caseType: "t", caseName: "n", ownerId: "o" }), bulkRow({ create: false, caseId: unknown })];
    expect(await rejection(write(rows, true))).toEqual(badInput(`Error in row 2: No case found with ID '${unknown}'`));
    expect(await countCases(t, { domain: demo })).toBe(0);
  });

  it("an update by an unknown external id: 400 Could not find a case with external_id '<id>'", async () => {
    expect(await rejection(write([bulkRow({ create: false, externalId: "ghost" })], true))).toEqual(
      badInput("Error in row 1: Could not find a case with external_id 'ghost'"),
    );
  });

  it("an upsert that creates needs the create fields: 400 Property case_type is required.", async () => {
    expect(await rejection(write([action({ caseName: "n", ownerId: "o" }, { kind: "upsert", externalId: "new" })]))).toEqual(
      badInput("Property case_type is required."),
    );
  });

  it("two upserts of one external id in a request write one case", async () => {
    const upsert = (caseName: string) => action({ caseType: "t", caseName, ownerId: "o" }, { kind: "upsert", externalId: "same" });
    const { cases } = await write([upsert("first"), upsert("second")]);
    expect(cases[0].id).toBe(cases[1].id);
    expect(await countCases(t, { domain: demo, externalId: "same" })).toBe(1);
  });

  it("close sets closed and date_closed once; closing again keeps the first date", async () => {
    const [ana] = (await write([create()])).cases;
    const [closed] = (await write([action({ close: true }, { kind: "update", caseId: ana.id })])).cases;
    expect(closed.closed).toBe(true);
    expect(closed.dateClosed).toBeInstanceOf(Date);
    const [again] = (await write([action({ close: true }, { kind: "update", caseId: ana.id })])).cases;
    expect(again.dateClosed).toEqual(closed.dateClosed);
  });

  it("a child indexes its parent by temporary_id in the same request; the parent is referenced by it", async () => {
    const { cases } = await write(HOUSEHOLD);
    const [home, ana, rui] = cases;
    expect(ana.indices).toEqual([{ name: "parent", referencedId: home.id, referencedType: "household", relationship: "child" }]);
    const links = await (await reads()).referencing([home.id]);
    expect(links.map((l) => l.caseId).sort()).toEqual([ana.id, rui.id].sort());
  });

  it("an index removed with an empty id is gone; the others stay", async () => {
    const [, ana] = (await write(HOUSEHOLD)).cases;
    const unlink = action({ indices: { parent: { case_id: "" } } }, { kind: "update", caseId: ana.id });
    expect((await write([unlink])).cases[0].indices).toEqual([]);
    expect(await countCaseIndices(t, { caseId: ana.id })).toBe(0);
    expect(await countCaseIndices(t, { domain: demo })).toBe(1);
  });

  it("an index to an unknown temporary id: 400 Could not find a case with temporary_id '<id>'", async () => {
    expect(await rejection(write([create({ indices: parentIndex("nobody") })]))).toEqual(
      badInput("Could not find a case with temporary_id 'nobody'"),
    );
  });

  it("an index to a case of another domain is a refused form: 400 with the form kept as an error, no case written", async () => {
    const other = await t.domain();
    const theirEditor = await t.member(other, ["access_api", "edit_data"]);
    const [theirs] = (await (await writes(theirEditor, other)).write([create()], { deviceId: "t", bulk: false })).cases;
    const before = [await caseRows(t, { domain: demo }), await countForms(t, demo)] as const;
    const index = { parent: { case_id: theirs.id, case_type: "patient", relationship: "child" } };
    const error = await write([create({ indices: index })]).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "BAD_USER_INPUT",
      status: 400,
      message: `Index refers to case '${theirs.id}', which does not exist in this domain`,
      extra: { xform_id: expect.any(String) },
    });
    expect(await caseRows(t, { domain: demo })).toEqual(before[0]);
    expect(await countForms(t, demo)).toBe(before[1] + 1);
  });

  it("a refused list changes nothing: every row's error, joined", async () => {
    await write([create({ caseName: "kept" })]);
    const before = await caseRows(t, { domain: demo });
    const rows = [
      bulkRow({ create: false, externalId: "ghost-1" }),
      bulkRow({ create: true, caseType: "t", caseName: "n", ownerId: "o" }),
      bulkRow({ create: false, externalId: "ghost-3" }),
    ];
    expect(await rejection(write(rows, true))).toEqual(
      badInput("Error in row 1: Could not find a case with external_id 'ghost-1'; Error in row 3: Could not find a case with external_id 'ghost-3'"),
    );
    expect(await caseRows(t, { domain: demo })).toEqual(before);
  });
});
