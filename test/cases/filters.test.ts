import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";

/**
 * CONTRACT §2 "List": every filter of the seed, repeated parameters OR, different parameters AND,
 * and the 400s for names, range suffixes and dates.
 */

let app: CaseTestApp;
beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

type Case = Record<string, any>;

/** Creates the items in one bulk POST (create: true) and returns the created cases by case_name. */
async function createAll(items: Record<string, unknown>[]): Promise<Record<string, Case>> {
  const res = await app.post(items.map((item) => ({ create: true, case_type: "patient", owner_id: "owner-1", ...item })));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Object.fromEntries(res.body.cases.map((c: Case) => [c.case_name, c]));
}

/** case_names of the list for a query string, sorted; the request must succeed. */
async function names(query: string): Promise<string[]> {
  const res = await app.get(`?limit=100&${query}`);
  expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
  expect(res.body.matching_records, query).toBe(res.body.cases.length);
  return res.body.cases.map((c: Case) => c.case_name).sort();
}

async function expectError(query: string, message: string) {
  const res = await app.get(`?${query}`);
  expect(res.status, query).toBe(400);
  expect(res.body, query).toEqual({ error: message });
}

/**
 * Mother (mother, o1, ext m-1, color red); House (household, o2); Ann (child of Mother, o1, c-1,
 * color Red, size ""); Bob (child of Mother, extension of House, o2, c-2, color blue, size L);
 * ann (extension of House, o3, no properties, guardian -> Mother); Done (closed, o3, c-1 again).
 */
async function fixture() {
  return createAll([
    { temporary_id: "mother", case_type: "mother", case_name: "Mother", owner_id: "o1", external_id: "m-1", properties: { color: "red" } },
    { temporary_id: "house", case_type: "household", case_name: "House", owner_id: "o2" },
    {
      case_type: "child",
      case_name: "Ann",
      owner_id: "o1",
      external_id: "c-1",
      properties: { color: "Red", size: "" },
      indices: { parent: { temporary_id: "mother", case_type: "mother", relationship: "child" } },
    },
    {
      case_type: "child",
      case_name: "Bob",
      owner_id: "o2",
      external_id: "c-2",
      properties: { color: "blue", size: "L" },
      indices: {
        parent: { temporary_id: "mother", case_type: "mother", relationship: "child" },
        host: { temporary_id: "house", case_type: "household", relationship: "extension" },
      },
    },
    {
      case_type: "child",
      case_name: "ann",
      owner_id: "o3",
      indices: {
        host: { temporary_id: "house", case_type: "household", relationship: "extension" },
        guardian: { temporary_id: "mother", case_type: "mother", relationship: "child" },
      },
    },
    { case_type: "visit", case_name: "Done", owner_id: "o3", external_id: "c-1", close: true },
  ]);
}

describe("exact filters: external_id, case_type, owner_id, case_name", () => {
  it("each matches exactly and case-sensitively", async () => {
    await fixture();
    expect(await names("external_id=c-1")).toEqual(["Ann", "Done"]);
    expect(await names("external_id=c")).toEqual([]);
    expect(await names("case_type=child")).toEqual(["Ann", "Bob", "ann"]);
    expect(await names("case_type=Child")).toEqual([]);
    expect(await names("owner_id=o2")).toEqual(["Bob", "House"]);
    expect(await names("case_name=Ann")).toEqual(["Ann"]);
    expect(await names("case_name=ann")).toEqual(["ann"]);
    expect(await names("case_name=An")).toEqual([]);
  });

  it("no filter lists every case of the domain", async () => {
    await fixture();
    expect(await names("")).toEqual(["Ann", "Bob", "Done", "House", "Mother", "ann"]);
  });
});

describe("repeating a parameter ORs its values; different parameters AND", () => {
  it("owner_id=a&owner_id=b is either owner", async () => {
    await fixture();
    expect(await names("owner_id=o1&owner_id=o3")).toEqual(["Ann", "Done", "Mother", "ann"]);
    expect(await names("external_id=c-2&external_id=m-1")).toEqual(["Bob", "Mother"]);
    expect(await names("case_name=Ann&case_name=Bob&case_name=nobody")).toEqual(["Ann", "Bob"]);
  });

  it("case_type=x&owner_id=y is both", async () => {
    await fixture();
    expect(await names("case_type=child&owner_id=o2")).toEqual(["Bob"]);
    expect(await names("case_type=child&owner_id=o1&owner_id=o3")).toEqual(["Ann", "ann"]);
    expect(await names("case_type=child&case_type=visit&external_id=c-1")).toEqual(["Ann", "Done"]);
    expect(await names("case_type=mother&owner_id=o2")).toEqual([]);
  });
});

describe("closed: '', false, f, no, n, 0 (any case) mean false; any other value true", () => {
  it("the false words list open cases only", async () => {
    await fixture();
    const open = ["Ann", "Bob", "House", "Mother", "ann"];
    for (const word of ["", "false", "FALSE", "False", "f", "F", "no", "No", "NO", "n", "N", "0"]) {
      expect(await names(`closed=${encodeURIComponent(word)}`), `closed=${word}`).toEqual(open);
    }
  });

  it("any other value lists closed cases only", async () => {
    await fixture();
    for (const word of ["true", "True", "t", "yes", "y", "1", "on", "anything", "00", "nope"]) {
      expect(await names(`closed=${encodeURIComponent(word)}`), `closed=${word}`).toEqual(["Done"]);
    }
  });

  it("closed=true&closed=false ORs to every case, and closed ANDs with other filters", async () => {
    await fixture();
    expect(await names("closed=true&closed=false")).toHaveLength(6);
    expect(await names("closed=false&external_id=c-1")).toEqual(["Ann"]);
    expect(await names("closed=true&external_id=c-1")).toEqual(["Done"]);
  });
});

describe("properties.{name}=v: exact and case-sensitive; an empty value matches unset or empty", () => {
  it("matches the exact value only", async () => {
    await fixture();
    expect(await names("properties.color=red")).toEqual(["Mother"]);
    expect(await names("properties.color=Red")).toEqual(["Ann"]);
    expect(await names("properties.color=RED")).toEqual([]);
    expect(await names("properties.color=re")).toEqual([]);
    expect(await names("properties.size=L")).toEqual(["Bob"]);
    expect(await names("properties.nothing=x")).toEqual([]);
  });

  it("an empty value matches cases where the property is unset and where it is the empty string", async () => {
    await fixture();
    // Ann has size "", Bob has size "L", every other case has no size at all
    expect(await names("properties.size=")).toEqual(["Ann", "Done", "House", "Mother", "ann"]);
    expect(await names("properties.nothing=")).toHaveLength(6);
  });

  it("repeated values OR; different properties AND; properties AND with other filters", async () => {
    await fixture();
    expect(await names("properties.color=red&properties.color=blue")).toEqual(["Bob", "Mother"]);
    expect(await names("properties.color=&properties.color=blue")).toEqual(["Bob", "Done", "House", "ann"]);
    expect(await names("properties.color=Red&properties.size=")).toEqual(["Ann"]);
    expect(await names("properties.color=blue&properties.size=")).toEqual([]);
    expect(await names("properties.color=red&case_type=mother")).toEqual(["Mother"]);
    expect(await names("properties.color=red&case_type=child")).toEqual([]);
  });

  it("a NUL byte in any filter name or value matches nothing stored (200, never 500)", async () => {
    await fixture();
    for (const query of [
      "case_type=%00",
      "case_name=Ann%00",
      "external_id=c-1%00",
      "owner_id=%00&owner_id=o3",
      "properties.color=red%00",
      "properties.%00=x",
      "indices.%00=00000000-0000-4000-8000-000000000000",
    ]) {
      const res = await app.get(`?${query}`);
      expect(res.status, query).toBe(200);
    }
    expect(await names("owner_id=%00&owner_id=o3")).toEqual(["Done", "ann"]);
    expect(await names("case_name=Ann%00")).toEqual([]);
    expect(await names("properties.color=red%00")).toEqual([]);
    // no property can be named with a NUL: it is unset everywhere, which the empty value matches
    expect(await names("properties.%00=")).toHaveLength(6);
  });

  it("names and values with quotes, percent signs and unicode are plain data (no 500)", async () => {
    await createAll([{ case_name: "Uni", properties: { ville: "Zürich 100%", note: 'it\'s "quoted"' } }]);
    expect(await names(`properties.ville=${encodeURIComponent("Zürich 100%")}`)).toEqual(["Uni"]);
    expect(await names(`properties.note=${encodeURIComponent('it\'s "quoted"')}`)).toEqual(["Uni"]);
    expect(await names(`properties.${encodeURIComponent("a'b\"c")}=x`)).toEqual([]);
  });
});

describe("indices.{name}={case_id}: the cases whose index {name} points at that case", () => {
  it("indices.parent finds the children and indices.host the extensions", async () => {
    const cases = await fixture();
    const mother = cases.Mother.case_id;
    const house = cases.House.case_id;
    expect(await names(`indices.parent=${mother}`)).toEqual(["Ann", "Bob"]);
    expect(await names(`indices.host=${house}`)).toEqual(["Bob", "ann"]);
    expect(await names(`indices.guardian=${mother}`)).toEqual(["ann"]);
  });

  it("the index name matters, repeated ids OR, and other filters AND", async () => {
    const cases = await fixture();
    const mother = cases.Mother.case_id;
    const house = cases.House.case_id;
    expect(await names(`indices.parent=${house}`)).toEqual([]);
    expect(await names(`indices.host=${mother}`)).toEqual([]);
    expect(await names(`indices.host=${house}&indices.guardian=${mother}`)).toEqual(["ann"]);
    expect(await names(`indices.parent=${mother}&indices.parent=${house}`)).toEqual(["Ann", "Bob"]);
    expect(await names(`indices.parent=${mother}&owner_id=o2`)).toEqual(["Bob"]);
  });

  it("an id that names no case, or is no UUID at all, matches nothing (not an error)", async () => {
    const cases = await fixture();
    expect(await names("indices.parent=00000000-0000-4000-8000-000000000000")).toEqual([]);
    expect(await names("indices.parent=not-a-uuid")).toEqual([]);
    expect(await names("indices.parent=")).toEqual([]);
    expect(await names(`indices.parent=${cases.Ann.case_id}`)).toEqual([]);
  });
});

describe("date ranges: {field}.gt/.gte/.lt/.lte", () => {
  const FIELDS = ["last_modified", "server_last_modified", "indexed_on", "date_opened", "date_closed"] as const;
  /** each field gets its own year, so a filter on the wrong column cannot pass */
  const YEAR: Record<(typeof FIELDS)[number], number> = {
    last_modified: 2020,
    server_last_modified: 2021,
    indexed_on: 2022,
    date_opened: 2023,
    date_closed: 2024,
  };
  const STAMPS = { A: "01-09T12:00:00Z", B: "01-10T00:00:00Z", C: "01-10T23:59:59.999Z", D: "01-11T00:00:00Z" };

  /** A..D closed, every date field set to its year's STAMPS. */
  async function datedCases() {
    const created = await createAll(Object.keys(STAMPS).map((name) => ({ case_name: name, close: true })));
    for (const [name, stamp] of Object.entries(STAMPS)) {
      const at = (field: (typeof FIELDS)[number]) => `${YEAR[field]}-${stamp}`;
      await app.db.prisma.$executeRaw`UPDATE cases SET
        last_modified = ${at("last_modified")}::timestamptz,
        server_last_modified = ${at("server_last_modified")}::timestamptz,
        indexed_on = ${at("indexed_on")}::timestamptz,
        date_opened = ${at("date_opened")}::timestamptz,
        date_closed = ${at("date_closed")}::timestamptz
        WHERE id = ${created[name].case_id}::uuid`;
    }
  }

  it("the cases carry the dates the filters are checked against", async () => {
    await datedCases();
    const res = await app.get("?case_name=C");
    expect(res.body.cases[0]).toMatchObject({
      last_modified: "2020-01-10T23:59:59.999000Z",
      server_last_modified: "2021-01-10T23:59:59.999000Z",
      indexed_on: "2022-01-10T23:59:59.999000Z",
      date_opened: "2023-01-10T23:59:59.999000Z",
      date_closed: "2024-01-10T23:59:59.999000Z",
    });
  });

  it("a date-only value covers the whole day: gte from 00:00, gt after the end, lt before 00:00, lte through the end", async () => {
    await datedCases();
    for (const field of FIELDS) {
      const day = `${YEAR[field]}-01-10`;
      expect(await names(`${field}.gte=${day}`), `${field}.gte`).toEqual(["B", "C", "D"]);
      expect(await names(`${field}.gt=${day}`), `${field}.gt`).toEqual(["D"]);
      expect(await names(`${field}.lt=${day}`), `${field}.lt`).toEqual(["A"]);
      expect(await names(`${field}.lte=${day}`), `${field}.lte`).toEqual(["A", "B", "C"]);
    }
  });

  it("a datetime compares as an instant; naive means UTC", async () => {
    await datedCases();
    for (const field of FIELDS) {
      const y = YEAR[field];
      expect(await names(`${field}.gt=${y}-01-10T00:00:00Z`), `${field}.gt`).toEqual(["C", "D"]);
      expect(await names(`${field}.gte=${y}-01-10T00:00:00`), `${field}.gte`).toEqual(["B", "C", "D"]);
      expect(await names(`${field}.lt=${y}-01-10T00:00:00`), `${field}.lt`).toEqual(["A"]);
      expect(await names(`${field}.lte=${y}-01-10T00:00:00Z`), `${field}.lte`).toEqual(["A", "B"]);
      expect(await names(`${field}.lt=${y}-01-10T23:59:59.999`), `${field}.lt ms`).toEqual(["A", "B"]);
      expect(await names(`${field}.lte=${y}-01-10T23:59:59.999000`), `${field}.lte ms`).toEqual(["A", "B", "C"]);
    }
  });

  it("a datetime with an offset is converted to UTC", async () => {
    await datedCases();
    for (const field of FIELDS) {
      const y = YEAR[field];
      // 05:00+05:00 and 19:00-05:00 the day before are both 00:00Z on the 10th
      expect(await names(`${field}.lte=${y}-01-10T05:00:00%2B05:00`), `${field}.lte`).toEqual(["A", "B"]);
      expect(await names(`${field}.gt=${y}-01-09T19:00:00-05:00`), `${field}.gt`).toEqual(["C", "D"]);
      expect(await names(`${field}.gte=${y}-01-10T05:30:00%2B0530`), `${field}.gte`).toEqual(["B", "C", "D"]);
    }
  });

  it("two different bounds AND; a repeated bound ORs", async () => {
    await datedCases();
    expect(await names("date_opened.gte=2023-01-10&date_opened.lt=2023-01-11")).toEqual(["B", "C"]);
    expect(await names("date_opened.gt=2023-01-09T12:00:00Z&last_modified.lte=2020-01-10")).toEqual(["B", "C"]);
    expect(await names("date_opened.lt=2023-01-10&date_opened.lt=2023-01-11")).toEqual(["A", "B", "C"]);
    expect(await names("date_opened.gte=2023-01-11&date_opened.lt=2023-01-10")).toEqual([]);
  });

  it("date_closed ranges never match open cases", async () => {
    await createAll([{ case_name: "open" }, { case_name: "shut", close: true }]);
    expect(await names("date_closed.lt=2999-01-01")).toEqual(["shut"]);
    expect(await names("date_closed.gte=1970-01-01")).toEqual(["shut"]);
    expect(await names("date_opened.lt=2999-01-01")).toEqual(["open", "shut"]);
  });

  it("the extreme dates a value can name are accepted (no 500)", async () => {
    await createAll([{ case_name: "now" }]);
    expect(await names("date_opened.lte=9999-12-31")).toEqual(["now"]);
    expect(await names("date_opened.gt=9999-12-31")).toEqual([]);
    expect(await names("date_opened.gte=0001-01-01")).toEqual(["now"]);
    expect(await names("date_opened.gte=0050-01-01T00:00:00Z")).toEqual(["now"]);
    expect(await names("date_opened.lt=0001-01-01T00:00:00%2B05:00")).toEqual([]);
    expect(await names("date_opened.lt=9999-12-31T23:59:59-05:00")).toEqual(["now"]);
  });
});

describe("400s: invalid parameter, range suffix and date", () => {
  it("any parameter the seed does not list is 400 '<key>' is not a valid parameter.", async () => {
    await fixture();
    for (const key of [
      "foo",
      "case_id",
      "domain",
      "properties",
      "indices",
      "indices.",
      "properties.",
      "last_modified",
      "date_opened",
      "Limit",
      "CASE_TYPE",
      "fields_",
      "toString",
      "__proto__",
      "constructor",
      "hasOwnProperty",
      "valueOf",
    ]) {
      await expectError(`${encodeURIComponent(key)}=x`, `'${key}' is not a valid parameter.`);
    }
  });

  it("an invalid parameter is refused even next to valid ones", async () => {
    await expectError("case_type=child&bogus=1&limit=5", "'bogus' is not a valid parameter.");
  });

  it("a bad range suffix is 400 '<suffix>' is not a valid type of date range.", async () => {
    await expectError("last_modified.between=2024-01-01", "'between' is not a valid type of date range.");
    await expectError("indexed_on.eq=2024-01-01", "'eq' is not a valid type of date range.");
    await expectError("date_closed.gtx=2024-01-01", "'gtx' is not a valid type of date range.");
    await expectError("date_opened.=2024-01-01", "'' is not a valid type of date range.");
  });

  it("an invalid date is 400 Cannot parse datetime '<v>', for every date field and range", async () => {
    for (const field of ["last_modified", "server_last_modified", "indexed_on", "date_opened", "date_closed"]) {
      for (const op of ["gt", "gte", "lt", "lte"]) {
        await expectError(`${field}.${op}=2020-02-30`, "Cannot parse datetime '2020-02-30'");
      }
    }
    for (const value of ["yesterday", "2024-13-01", "2024-01-10T25:00:00", "2024-01-10T10:00:00+99:00", ""]) {
      await expectError(`date_opened.gte=${encodeURIComponent(value)}`, `Cannot parse datetime '${value}'`);
    }
  });
});
