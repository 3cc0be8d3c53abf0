/**
 * The list's cases written as JSON by PostgreSQL (src/cases/case.json.repository.ts) are byte for
 * byte what the serializer writes (`JSON.stringify(serializeCase(record))`, CONTRACT §2 "Case
 * serialization"): over varied cases (unicode, quotes, backslashes, control characters, empty and
 * unset values, closed and open, indices, dates at microsecond precision), page by page, through
 * the repository, the service and the wire. Where PostgreSQL could write otherwise (names JavaScript
 * sorts apart from PostgreSQL, a value that is not a string, a date outside four-digit years), the
 * page is serialised in JavaScript, with the same bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CaseRepository } from "../../src/cases/case.repository.ts";
import type { CaseFilter, CaseQuery, Keyset } from "../../src/cases/case.query.ts";
import { serializeCase } from "../../src/cases/case.serializer.ts";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";
import { domainRow } from "../helpers/rows.ts";
import { createAwkwardCases } from "../helpers/awkward-text.ts";

let app: CaseTestApp;
let domain: { id: string; name: string };
let repository: CaseRepository;

const EVERY_CASE: CaseFilter = { exact: {}, properties: new Map(), indices: new Map(), ranges: [] };
/** The same, as the service takes it (unchecked), with a page size. */
const everyCase = (limit: number): CaseQuery => ({ exact: {}, properties: new Map(), indices: new Map(), ranges: [], limit });

beforeAll(async () => {
  app = await buildCaseApp();
  const row = await domainRow(app, "demo");
  domain = { id: row.id, name: "demo" };
  repository = new CaseRepository(app.db.prisma);
  await createAwkwardCases(app);
  // Dates the API does not write: microseconds (a JS Date keeps milliseconds, truncated), a day's
  // first and last instant, a closing date set in SQL.
  await app.db.prisma.$executeRaw`UPDATE cases SET
      date_opened = timestamptz '2024-02-29 23:59:59.999999+00',
      last_modified = timestamptz '1999-12-31 00:00:00.000001+00',
      server_last_modified = timestamptz '2024-06-01 12:34:56.123456+00',
      date_closed = timestamptz '0999-01-01 00:00:00.5+00'
    WHERE domain_id = ${domain.id}::uuid AND case_name LIKE 'awkward back%'`;
});
afterAll(() => app.close());

/** Both ways, every page at `limit` following the keysets: the serializer's JSON and PostgreSQL's, each page's count and keyset. */
async function bothWays(limit: number) {
  const pages: { serializer: string; postgres: string | undefined; total: number }[] = [];
  let after: Keyset | undefined;
  for (;;) {
    const page = await repository.page(domain, EVERY_CASE, limit, after);
    const json = await repository.pageJson(domain, EVERY_CASE, limit, after);
    expect(json?.total ?? page.total).toBe(page.total);
    expect(json?.lastKey ?? page.lastKey).toEqual(page.lastKey);
    pages.push({
      serializer: JSON.stringify(page.records.map(serializeCase)),
      postgres: json && `[${json.records.join(",")}]`,
      total: page.total,
    });
    if (!page.hasMore) return pages;
    after = page.lastKey;
  }
}

describe("§2 Case serialization: PostgreSQL's JSON of a list page is the serializer's, byte for byte", () => {
  it("every page, at several page sizes, over cases with awkward text, indices, closed and open, microsecond dates", async () => {
    for (const limit of [1, 3, 7, 5000]) {
      const pages = await bothWays(limit);
      expect(pages.length).toBeGreaterThan(0);
      for (const page of pages) {
        expect(page.postgres, `limit ${limit}`).toBeDefined();
        expect(page.postgres).toBe(page.serializer);
      }
    }
  });

  it("the service's page (listJson) is the serializer's array of the same page, with the same count and next keyset", async () => {
    const scope = await app.services.caseReads.in(app.root, "demo");
    const query = everyCase(4);
    let after: Keyset | undefined;
    for (;;) {
      const records = await scope.list(query, after);
      const json = await scope.listJson(query, after);
      expect(json.cases).toBe(JSON.stringify(records.records.map(serializeCase)));
      expect(json.total).toBe(records.total);
      expect(json.next).toEqual(records.next);
      if (!records.next) break;
      after = records.next;
    }
  });

  it("on the wire: the list with every field is the same text as with `exclude=` (the serializer's path), Content-Type included", async () => {
    const fast = await app.get("?limit=5000");
    const serialized = await app.get("?limit=5000&exclude=");
    expect(fast.status).toBe(200);
    expect(fast.headers["content-type"]).toBe(serialized.headers["content-type"]);
    expect(fast.text).toBe(serialized.text);
    expect(fast.text).toBe(JSON.stringify(JSON.parse(fast.text)));
    // a page with `next`: the envelope's keys in order, the link as JSON.stringify writes it
    const first = await app.get("?limit=2");
    const body = JSON.parse(first.text);
    expect(Object.keys(body)).toEqual(["matching_records", "cases", "next"]);
    expect(first.text).toBe(JSON.stringify(body));
    expect(first.headers["content-length"]).toBe(String(Buffer.byteLength(first.text)));
    const next = await app
      .http()
      .get(new URL(body.next).pathname + new URL(body.next).search)
      .set("Authorization", app.editor.authorization);
    expect(next.text).toBe(JSON.stringify(JSON.parse(next.text)));
    expect(JSON.parse(next.text).cases[0].case_id).not.toBe(body.cases[1].case_id);
  });
});

describe("§2 Case serialization: properties the API does not write are serialized as the records' path does", () => {
  it.each([
    [
      "property names JavaScript and PostgreSQL sort apart (U+FF21 against U+1D400)",
      `jsonb_build_object('a\uFF21', 'wide', 'a\u{1D400}', 'bold', 'a', 'plain')`,
    ],
    [
      "property values that are not strings",
      `jsonb_build_object('n', 1.50, 'list', jsonb_build_array(1, 'two'), 'obj', jsonb_build_object('k', 'v'))`,
    ],
    ["properties that are not an object", `'"just text"'::jsonb`],
  ])("%s", async (label, properties) => {
    const made = await app.createCase({ case_name: `set in SQL: ${label}` });
    await app.db.prisma.$executeRawUnsafe(`UPDATE cases SET properties = ${properties} WHERE id = $1::uuid`, made.case_id);
    try {
      for (const page of await bothWays(5000)) expect(page.postgres).toBe(page.serializer);
      const scope = await app.services.caseReads.in(app.root, "demo");
      const records = await scope.list(everyCase(5000));
      expect((await scope.listJson(everyCase(5000))).cases).toBe(JSON.stringify(records.records.map(serializeCase)));
    } finally {
      await app.db.prisma.$executeRaw`DELETE FROM cases WHERE id = ${made.case_id}::uuid`;
    }
  });
});

describe("§2 Case serialization: where PostgreSQL could write otherwise, the page is the serializer's", () => {
  it("an index name JavaScript sorts apart from PostgreSQL", async () => {
    const made = await app.createCase({ case_name: "odd index" });
    const target = await app.createCase({ case_name: "odd target" });
    for (const name of ["i\uFF21", "i\u{1D400}"]) {
      await app.db.prisma.$executeRaw`INSERT INTO case_indices (case_id, name, domain_id, referenced_id, referenced_type, relationship)
        VALUES (${made.case_id}::uuid, ${name}, ${domain.id}::uuid, ${target.case_id}::uuid, 'patient', 'child')`;
    }
    try {
      expect(await repository.pageJson(domain, EVERY_CASE, 5000)).toBeUndefined();
      expect((await app.get("?limit=5000")).text).toBe((await app.get("?limit=5000&exclude=")).text);
    } finally {
      await app.db.prisma.$executeRaw`DELETE FROM cases WHERE id IN (${made.case_id}::uuid, ${target.case_id}::uuid)`;
    }
  });

  it("a date outside the years 0001–9999 is left to the serializer", async () => {
    const made = await app.createCase({ case_name: "odd date" });
    await app.db.prisma.$executeRaw`UPDATE cases SET date_opened = timestamptz '10000-01-01 00:00:00+00' WHERE id = ${made.case_id}::uuid`;
    try {
      // (no API write makes such a date, and the records' path cannot read it either)
      expect(await repository.pageJson(domain, EVERY_CASE, 5000)).toBeUndefined();
    } finally {
      await app.db.prisma.$executeRaw`DELETE FROM cases WHERE id = ${made.case_id}::uuid`;
    }
  });
});
