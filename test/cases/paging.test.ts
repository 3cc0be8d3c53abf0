import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildCaseApp, CASES, type CaseTestApp } from "../helpers/cases.ts";

/**
 * CONTRACT §2 "List": limit, order (indexed_on, then case_id), `next` links with an opaque cursor,
 * matching_records from this page on, and cursors that carry the whole query.
 */

let app: CaseTestApp;
beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

type Case = Record<string, any>;

/** Creates `count` cases in bulk POSTs of at most 100; returns them in creation order. */
async function createMany(count: number, extra: (i: number) => Record<string, unknown> = () => ({})): Promise<Case[]> {
  const cases: Case[] = [];
  for (let start = 0; start < count; start += 100) {
    const items = [];
    for (let i = start; i < Math.min(count, start + 100); i++) {
      items.push({ create: true, case_type: "patient", case_name: `case ${i}`, owner_id: "owner-1", ...extra(i) });
    }
    const res = await app.post(items);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    cases.push(...res.body.cases);
  }
  return cases;
}

/** The path and query of a `next` link, for supertest. */
function relative(next: string): string {
  const url = new URL(next);
  return `${url.pathname}${url.search}`;
}

async function getAbsolute(pathAndQuery: string) {
  return app.http().get(pathAndQuery).set("Authorization", app.editor.authorization);
}

/** Follows `next` from the first page; returns every page body. */
async function pull(query: string): Promise<Record<string, any>[]> {
  const pages = [];
  let res = await app.get(query);
  for (;;) {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push(res.body);
    if (!("next" in res.body)) return pages;
    expect(pages.length).toBeLessThan(100);
    res = await getAbsolute(relative(res.body.next));
  }
}

/** The (indexed_on, case_id) order of the contract. */
const byKeyset = (a: Case, b: Case) =>
  a.indexed_on < b.indexed_on ? -1 : a.indexed_on > b.indexed_on ? 1 : a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : 0;

describe("limit: default 20, maximum 5000", () => {
  it("without limit a page holds 20 cases", async () => {
    await createMany(25);
    const res = await app.get("");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["matching_records", "cases", "next"]);
    expect(res.body.cases).toHaveLength(20);
    expect(res.body.matching_records).toBe(25);
  });

  it("limit=n gives n cases; limit=5000 is allowed", async () => {
    await createMany(7);
    expect((await app.get("?limit=3")).body.cases).toHaveLength(3);
    const all = await app.get("?limit=5000");
    expect(all.status).toBe(200);
    expect(all.body.cases).toHaveLength(7);
    expect("next" in all.body).toBe(false);
  });

  it("a non-integer limit is 400 '<v>' is not a valid value for 'limit'", async () => {
    for (const value of ["abc", "1.5", "ten", "1e3", "-5", "", "0x10"]) {
      const res = await app.get(`?limit=${encodeURIComponent(value)}`);
      expect(res.status, value).toBe(400);
      expect(res.body, value).toEqual({ error: `'${value}' is not a valid value for 'limit'` });
    }
  });

  it("a limit over 5000 is 400 You cannot request more than 5000 cases per request.", async () => {
    for (const value of ["5001", "10000", "99999999999999999999999"]) {
      const res = await app.get(`?limit=${value}`);
      expect(res.status, value).toBe(400);
      expect(res.body, value).toEqual({ error: "You cannot request more than 5000 cases per request." });
    }
  });
});

describe("order: indexed_on ascending, then case_id ascending", () => {
  it("cases come oldest indexed_on first, ties broken by case_id", async () => {
    const cases = await createMany(12);
    // Three groups by indexed_on, given against creation order: ties inside each group.
    const stamps = ["2024-05-03T00:00:00Z", "2024-05-01T00:00:00Z", "2024-05-02T00:00:00Z"];
    for (const [i, c] of cases.entries()) {
      await app.db.prisma.$executeRaw`UPDATE cases SET indexed_on = ${stamps[i % 3]}::timestamptz WHERE id = ${c.case_id}::uuid`;
    }
    const res = await app.get("?limit=100");
    const listed: Case[] = res.body.cases;
    expect(listed).toHaveLength(12);
    expect(listed.map((c) => c.case_id)).toEqual([...listed].sort(byKeyset).map((c) => c.case_id));
    expect(listed[0].indexed_on).toBe("2024-05-01T00:00:00.000000Z");
    expect(listed[11].indexed_on).toBe("2024-05-03T00:00:00.000000Z");
  });

  it("an update moves a case to the end (its indexed_on is the write time)", async () => {
    const [first] = await createMany(3);
    expect((await app.put(first.case_id, { properties: { touched: "yes" } })).status).toBe(200);
    const res = await app.get("");
    expect(res.body.cases.map((c: Case) => c.case_id).at(-1)).toBe(first.case_id);
  });
});

describe("next: an absolute URL with an opaque cursor, present only when more remain", () => {
  it("next is an absolute URL of this path carrying only a cursor parameter", async () => {
    await createMany(3);
    const res = await app.get("?limit=2&case_type=patient");
    expect(res.status).toBe(200);
    const next = new URL(res.body.next);
    expect(next.protocol).toBe("http:");
    expect(next.host).not.toBe("");
    expect(next.pathname).toBe(CASES);
    expect([...next.searchParams.keys()]).toEqual(["cursor"]);
    // opaque: the query is not readable off the link
    expect(res.body.next).not.toContain("case_type");
    expect(res.body.next).not.toContain("patient");
  });

  it("there is no next key on the last page, nor when the results fit exactly", async () => {
    await createMany(10);
    const exact = await app.get("?limit=10");
    expect(Object.keys(exact.body)).toEqual(["matching_records", "cases"]);
    expect(exact.body.cases).toHaveLength(10);
    const none = await app.get("?case_type=nothing");
    expect(none.body).toEqual({ matching_records: 0, cases: [] });
  });

  it("following next yields every case exactly once, in order (45 cases, limit=10)", async () => {
    // three writes, so pages cross both equal and different indexed_on values
    const created = [...(await createMany(15)), ...(await createMany(15)), ...(await createMany(15))];
    const pages = await pull("?limit=10");
    expect(pages.map((p) => p.cases.length)).toEqual([10, 10, 10, 10, 5]);
    expect(pages.map((p) => p.matching_records)).toEqual([45, 35, 25, 15, 5]);
    const seen: Case[] = pages.flatMap((p) => p.cases);
    expect(new Set(seen.map((c) => c.case_id)).size).toBe(45);
    expect(seen.map((c) => c.case_id).sort()).toEqual(created.map((c) => c.case_id).sort());
    expect(seen.map((c) => c.case_id)).toEqual([...seen].sort(byKeyset).map((c) => c.case_id));
  });

  it("matching_records counts what remains from this page on", async () => {
    await createMany(5, (i) => ({ case_type: i < 4 ? "a" : "b" }));
    const pages = await pull("?case_type=a&limit=3");
    expect(pages.map((p) => [p.matching_records, p.cases.length])).toEqual([
      [4, 3],
      [1, 1],
    ]);
  });

  it("cases whose indexed_on carries microseconds are still each seen exactly once", async () => {
    const cases = await createMany(6);
    const stamps = [
      "2024-05-01T00:00:00.000001Z",
      "2024-05-01T00:00:00.000002Z",
      "2024-05-01T00:00:00.000002Z",
      "2024-05-01T00:00:00.000900Z",
      "2024-05-01T00:00:00.001500Z",
      "2024-05-01T00:00:00.001500Z",
    ];
    for (const [i, c] of cases.entries()) {
      await app.db.prisma.$executeRaw`UPDATE cases SET indexed_on = ${stamps[i]}::timestamptz WHERE id = ${c.case_id}::uuid`;
    }
    for (const limit of [1, 2]) {
      const pages = await pull(`?limit=${limit}`);
      const ids = pages.flatMap((p) => p.cases.map((c: Case) => c.case_id));
      expect(ids, `limit=${limit}`).toHaveLength(6);
      expect(new Set(ids).size, `limit=${limit}`).toBe(6);
    }
  });
});

describe("the cursor encodes the whole query", () => {
  it("filters, limit and field selection are preserved across pages", async () => {
    await createMany(9, (i) => ({ case_type: i % 2 ? "odd" : "even", properties: { n: String(i), other: "x" } }));
    const pages = await pull("?case_type=even&limit=2&fields=case_id,case_type,properties.n");
    expect(pages.map((p) => p.cases.length)).toEqual([2, 2, 1]);
    for (const c of pages.flatMap((p) => p.cases)) {
      expect(Object.keys(c)).toEqual(["case_id", "case_type", "properties"]);
      expect(c.case_type).toBe("even");
      expect(Object.keys(c.properties)).toEqual(["n"]);
    }
    expect(pages.flatMap((p) => p.cases.map((c: Case) => c.properties.n)).sort()).toEqual(["0", "2", "4", "6", "8"]);
  });

  it("exclude is preserved across pages too", async () => {
    await createMany(3);
    const pages = await pull("?limit=1&exclude=properties,indices");
    expect(pages).toHaveLength(3);
    for (const c of pages.flatMap((p) => p.cases)) expect(Object.keys(c)).not.toContain("properties");
  });

  it("on a request with cursor, other parameters are ignored (even invalid ones)", async () => {
    await createMany(5, (i) => ({ case_type: i < 4 ? "a" : "b" }));
    const first = await app.get("?case_type=a&limit=2");
    const next = relative(first.body.next);
    const plain = await getAbsolute(next);
    expect(plain.status).toBe(200);
    for (const extra of ["case_type=b", "limit=1", "limit=abc", "bogus=1", "fields=case_id", "last_modified.gt=2020-02-30"]) {
      const res = await getAbsolute(`${next}&${extra}`);
      expect(res.status, extra).toBe(200);
      expect(res.body, extra).toEqual(plain.body);
    }
    const before = await getAbsolute(`${CASES}?case_type=b&${next.split("?")[1]}`);
    expect(before.body).toEqual(plain.body);
    expect(plain.body.cases.map((c: Case) => c.case_type)).toEqual(["a", "a"]);
    expect(plain.body.matching_records).toBe(2);
  });

  it("a tampered or undecodable cursor is 400 {error}, never 500", async () => {
    await createMany(3);
    const first = await app.get("?limit=1");
    const cursor = new URL(first.body.next).searchParams.get("cursor")!;
    const [body, signature] = [cursor.slice(0, cursor.lastIndexOf(".")), cursor.slice(cursor.lastIndexOf(".") + 1)];
    const flip = (s: string, i: number) => `${s.slice(0, i)}${s[i] === "A" ? "B" : "A"}${s.slice(i + 1)}`;
    const forged = Buffer.from(JSON.stringify([[["limit", "5000"]], "2000-01-01T00:00:00.000Z", "00000000-0000-4000-8000-000000000000"])).toString(
      "base64url",
    );
    for (const bad of [
      "",
      "garbage",
      "x.y",
      ".",
      `${flip(body, 3)}.${signature}`,
      `${body}.${flip(signature, 0)}`,
      `${body}.`,
      body,
      `${forged}.${signature}`,
      `${cursor}x`,
      `%%%`,
      `${cursor}.${signature}`,
      "W10.AAAAAAAAAAAAAAAAAAAAAA",
    ]) {
      const res = await app.get(`?cursor=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(Object.keys(res.body), bad).toEqual(["error"]);
      expect(res.body.error, bad).toEqual(expect.any(String));
    }
  });

  it("a cursor replayed in another domain lists only that domain's cases (none here)", async () => {
    await createMany(3);
    const first = await app.get("?limit=1");
    const { createDomain, createUser } = await import("../helpers/app.ts");
    await createDomain(app, "other");
    const outsider = await createUser(app, { domain: "other", permissions: ["access_api", "edit_data"] });
    const next = relative(first.body.next).replace("/a/demo/", "/a/other/");
    const res = await app.http().get(next).set("Authorization", outsider.authorization);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ matching_records: 0, cases: [] });
  });
});
