import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDomain, createUser, type TestUser } from "../helpers/app.ts";
import { buildCaseApp, CASES, type CaseTestApp, CASE_KEYS } from "../helpers/cases.ts";
import { countCases } from "../helpers/rows.ts";

/**
 * CONTRACT §2 "Case serialization" and "Single and multi reads", plus who may read: GET {case_id},
 * GET ext/{ext_id}/, GET id1,id2,… and the list, seen by the editor, the reader and outsiders.
 */

let app: CaseTestApp;
beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

type Case = Record<string, any>;

const CASE_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const as = (user: TestUser, path: string, domain = "demo") =>
  app.http().get(`/a/${domain}/api/case/v2/${path}`).set("Authorization", user.authorization);

async function createAll(items: Record<string, unknown>[]): Promise<Case[]> {
  const res = await app.post(items.map((item) => ({ create: true, case_type: "patient", owner_id: "owner-1", ...item })));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.cases;
}

async function otherDomainUser(): Promise<TestUser> {
  await createDomain(app, "other");
  return createUser(app, { domain: "other", permissions: ["access_api", "edit_data"] });
}

describe("case serialization: key order exactly domain, case_id, …, properties, indices", () => {
  it("a new case without extras: external_id null, properties and indices {}, open", async () => {
    const created = await app.createCase({ case_type: "patient", case_name: "Plain", owner_id: "o-1" });
    expect(Object.keys(created)).toEqual(CASE_KEYS);
    const res = await app.get(created.case_id);
    expect(res.status).toBe(200);
    const c = res.body;
    expect(Object.keys(c)).toEqual(CASE_KEYS);
    expect(c).toMatchObject({
      domain: "demo",
      case_type: "patient",
      case_name: "Plain",
      external_id: null,
      owner_id: "o-1",
      closed: false,
      date_closed: null,
      properties: {},
      indices: {},
    });
    expect(c.case_id).toMatch(LOWER_UUID);
    for (const key of ["date_opened", "last_modified", "server_last_modified", "indexed_on"]) {
      expect(c[key], key).toMatch(CASE_DATE);
    }
  });

  it("the same order and values in the create response, single GET, list, multi GET and bulk-fetch", async () => {
    const created = await app.createCase({ external_id: "e-1", properties: { b: "2", a: "1" } });
    const single = (await app.get(created.case_id)).body;
    const listed = (await app.get("")).body.cases[0];
    const multi = (await app.get(`${created.case_id},${created.case_id}`)).body.cases[0];
    const bulk = (
      await app
        .http()
        .post(`${CASES}bulk-fetch/`)
        .set("Authorization", app.editor.authorization)
        .send({ case_ids: [created.case_id] })
    ).body.cases[0];
    const ext = (await app.get("ext/e-1/")).body;
    for (const [label, c] of Object.entries({ single, listed, multi, bulk, ext })) {
      expect(Object.keys(c), label).toEqual(CASE_KEYS);
      expect(c, label).toEqual(created);
    }
  });

  it("properties are the user's, all strings; indices are {case_id, case_type, relationship}", async () => {
    const [mother, house, kid] = await createAll([
      { temporary_id: "m", case_type: "mother", case_name: "Mum", properties: { age: "31", empty: "" } },
      { temporary_id: "h", case_type: "household", case_name: "Home" },
      {
        case_name: "Kid",
        properties: { weight: "3.2" },
        indices: {
          parent: { temporary_id: "m", case_type: "mother", relationship: "child" },
          host: { temporary_id: "h", case_type: "household", relationship: "extension" },
        },
      },
    ]);
    expect(mother.properties).toEqual({ age: "31", empty: "" });
    const res = await app.get(kid.case_id);
    expect(res.body.properties).toEqual({ weight: "3.2" });
    expect(res.body.indices).toEqual({
      host: { case_id: house.case_id, case_type: "household", relationship: "extension" },
      parent: { case_id: mother.case_id, case_type: "mother", relationship: "child" },
    });
    for (const index of Object.values(res.body.indices)) {
      expect(Object.keys(index as object)).toEqual(["case_id", "case_type", "relationship"]);
    }
    // the parent itself has no indices of its own: reverse indices are a list filter
    expect((await app.get(mother.case_id)).body.indices).toEqual({});
  });

  it("closed is true and date_closed the closing write's time once closed", async () => {
    const created = await app.createCase();
    const closing = await app.put(created.case_id, { close: true });
    expect(closing.status).toBe(200);
    const c = (await app.get(created.case_id)).body;
    expect(c.closed).toBe(true);
    expect(c.date_closed).toMatch(CASE_DATE);
    expect(c.date_closed).toBe(c.last_modified);
    expect(c.date_opened).toBe(created.date_opened);
    expect(Object.keys(c)).toEqual(CASE_KEYS);
  });

  it("dates are in UTC with six fraction digits whatever the stored instant", async () => {
    const created = await app.createCase();
    await app.db.prisma.$executeRaw`UPDATE cases SET date_opened = '2024-03-11T14:29:16.845+05:00',
      last_modified = '2024-03-11T19:29:16Z', closed = true, date_closed = '2024-12-31T23:59:59.5-01:00'
      WHERE id = ${created.case_id}::uuid`;
    const c = (await app.get(created.case_id)).body;
    expect(c.date_opened).toBe("2024-03-11T09:29:16.845000Z");
    expect(c.last_modified).toBe("2024-03-11T19:29:16.000000Z");
    expect(c.date_closed).toBe("2025-01-01T00:59:59.500000Z");
  });
});

describe("GET {case_id}", () => {
  it("returns the case; a trailing slash is optional", async () => {
    const created = await app.createCase();
    for (const path of [created.case_id, `${created.case_id}/`]) {
      const res = await app.get(path);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toEqual(created);
    }
  });

  it("a missing case is 404 Case '<id>' not found", async () => {
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid", "abc_def", "12345"]) {
      const res = await app.get(id);
      expect(res.status, id).toBe(404);
      expect(res.body, id).toEqual({ error: `Case '${id}' not found` });
    }
  });

  it("another domain's case is 404 Case '<id>' not found, as if it did not exist", async () => {
    const outsider = await otherDomainUser();
    const theirs = await app
      .http()
      .post("/a/other/api/case/v2/")
      .set("Authorization", outsider.authorization)
      .send({ case_type: "t", case_name: "secret", owner_id: "o" });
    expect(theirs.status).toBe(200);
    const id = theirs.body.case.case_id;
    expect((await as(outsider, id, "other")).status).toBe(200);
    const res = await app.get(id);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: `Case '${id}' not found` });
  });

  it("any parameter but fields/exclude is 400 '<key>' is not a valid parameter.", async () => {
    const created = await app.createCase();
    for (const key of ["limit", "case_type", "cursor", "properties.a", "bogus"]) {
      const res = await app.get(`${created.case_id}?${key}=1`);
      expect(res.status, key).toBe(400);
      expect(res.body, key).toEqual({ error: `'${key}' is not a valid parameter.` });
    }
    expect((await app.get(`${created.case_id}?fields=case_id`)).body).toEqual({ case_id: created.case_id });
  });

  it("a written case is readable at once (read-your-writes)", async () => {
    const created = await app.createCase({ properties: { v: "1" } });
    const updated = await app.put(created.case_id, { properties: { v: "2" } });
    expect(updated.status).toBe(200);
    expect((await app.get(created.case_id)).body.properties).toEqual({ v: "2" });
  });
});

describe("GET ext/{ext_id}/", () => {
  const SPECIAL = ["a/b", "what?", "hash#tag", "a&b=c", "1+1", "with space", "100%", "ünïcödé", "日本語/テスト", "trailing/", "?x=1&y=2#z"];

  it("the id is percent-decoded and may hold / ? # & = + spaces and unicode", async () => {
    const created = await createAll(SPECIAL.map((ext, i) => ({ case_name: `n${i}`, external_id: ext })));
    for (const [i, ext] of SPECIAL.entries()) {
      for (const path of [`ext/${encodeURIComponent(ext)}/`, `ext/${encodeURIComponent(ext)}`]) {
        const res = await app.get(path);
        expect(res.status, path).toBe(200);
        expect(res.body.external_id, path).toBe(ext);
        expect(res.body.case_id, path).toBe(created[i].case_id);
      }
    }
  });

  it("an unencoded / in the id works too", async () => {
    await createAll([{ case_name: "slashed", external_id: "a/b/c" }]);
    const res = await app.get("ext/a/b/c/");
    expect(res.status).toBe(200);
    expect(res.body.case_name).toBe("slashed");
  });

  it("no case with that external id is 404 Case '<ext_id>' not found (decoded)", async () => {
    await app.createCase({ external_id: "present" });
    for (const ext of ["absent", "a/b", "Present", "100%", "ünï"]) {
      const res = await app.get(`ext/${encodeURIComponent(ext)}/`);
      expect(res.status, ext).toBe(404);
      expect(res.body, ext).toEqual({ error: `Case '${ext}' not found` });
    }
  });

  it("another domain's external id is 404", async () => {
    const outsider = await otherDomainUser();
    await app
      .http()
      .post("/a/other/api/case/v2/")
      .set("Authorization", outsider.authorization)
      .send({ case_type: "t", case_name: "secret", owner_id: "o", external_id: "theirs" });
    expect((await as(outsider, "ext/theirs/", "other")).status).toBe(200);
    const res = await app.get("ext/theirs/");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "Case 'theirs' not found" });
  });

  it("with several cases of one external id, the oldest by date_opened wins, then the lowest case_id", async () => {
    // same request: same date_opened, so the lowest case_id
    const twins = await createAll([
      { case_name: "x", external_id: "dup" },
      { case_name: "y", external_id: "dup" },
    ]);
    const lowest = [...twins].sort((a, b) => (a.case_id < b.case_id ? -1 : 1))[0];
    expect((await app.get("ext/dup/")).body.case_id).toBe(lowest.case_id);
    // a backdated case wins over both, whatever its case_id
    const late = await app.createCase({ case_name: "z", external_id: "dup" });
    expect((await app.get("ext/dup/")).body.case_id).toBe(lowest.case_id);
    await app.db.prisma.$executeRaw`UPDATE cases SET date_opened = '2000-01-01T00:00:00Z' WHERE id = ${late.case_id}::uuid`;
    expect((await app.get("ext/dup/")).body.case_id).toBe(late.case_id);
  });

  it("any parameter but fields/exclude is 400; malformed encoding is 400, never 500", async () => {
    await app.createCase({ external_id: "e" });
    const res = await app.get("ext/e/?limit=1");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "'limit' is not a valid parameter." });
    const bad = await app.get("ext/%E0%A4%A/");
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(["error"]);
  });

  it("an id holding a NUL byte is 404 Case '<ext_id>' not found, never 500", async () => {
    await app.createCase({ external_id: "e" });
    for (const ext of ["\u0000", "e\u0000"]) {
      const res = await app.get(`ext/${encodeURIComponent(ext)}/`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: `Case '${ext}' not found` });
    }
  });
});

describe("GET id1,id2,…: the bulk-fetch envelope, never 404", () => {
  it("cases in request order, duplicates repeated, stubs for missing ids", async () => {
    const [a, b] = await createAll([{ case_name: "a" }, { case_name: "b" }]);
    const res = await app.get(`${b.case_id},nope,${a.case_id},${b.case_id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["matching_records", "missing_records", "cases"]);
    expect(res.body).toEqual({ matching_records: 3, missing_records: 1, cases: [b, { case_id: "nope", error: "not found" }, a, b] });
  });

  it("all missing is still 200 with stubs", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    const res = await app.get(`${missing},other-one`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      matching_records: 0,
      missing_records: 2,
      cases: [
        { case_id: missing, error: "not found" },
        { case_id: "other-one", error: "not found" },
      ],
    });
  });

  it("another domain's case is a stub", async () => {
    const outsider = await otherDomainUser();
    const theirs = await app
      .http()
      .post("/a/other/api/case/v2/")
      .set("Authorization", outsider.authorization)
      .send({ case_type: "t", case_name: "secret", owner_id: "o" });
    const mine = await app.createCase();
    const res = await app.get(`${mine.case_id},${theirs.body.case.case_id}`);
    expect(res.body).toEqual({ matching_records: 1, missing_records: 1, cases: [mine, { case_id: theirs.body.case.case_id, error: "not found" }] });
  });

  it("any parameter but fields/exclude is 400", async () => {
    const [a, b] = await createAll([{ case_name: "a" }, { case_name: "b" }]);
    const res = await app.get(`${a.case_id},${b.case_id}?closed=true`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "'closed' is not a valid parameter." });
  });
});

describe("paths: a segment that is not a case id is an unknown path (CONTRACT §1 Paths)", () => {
  // Regression: `GET …/v2/1';--` and `…/v2/%00` answered 405 `Method 'GET' not allowed.`, as if the
  // path were known. A {case_id} segment matches [\w\-,]+; any other segment is no known path.
  it("odd case ids answer the family's JSON 404 for every method, never 405", async () => {
    for (const segment of ["1';--", "%00", "a%20b", "a.b", "%2Fx", "%C3%A9"]) {
      for (const method of ["get", "put", "post", "delete", "patch"] as const) {
        const res = await app.http()[method](`${CASES}${segment}`).set("Authorization", app.editor.authorization).send({ case_name: "x" });
        const at = `${method} ${segment}`;
        expect(res.status, at).toBe(404);
        expect(res.headers["content-type"], at).toMatch(/^application\/json/);
        expect(res.body, at).toEqual({ error: `Not found: ${CASES}${segment}` });
        expect(res.headers.allow, at).toBeUndefined();
      }
    }
    expect(await countCases(app)).toBe(0);
  });

  it("case ids, multi-id segments, ext/ and bulk-fetch/ are still known paths", async () => {
    const created = await app.createCase({ external_id: "e-1" });
    expect((await app.get(created.case_id)).status).toBe(200);
    expect((await app.get(`${created.case_id},x`)).status).toBe(200);
    expect((await app.get("ext/e-1/")).status).toBe(200);
    expect((await app.get("ext/1';--/")).status).toBe(404);
    const fetched = await app
      .http()
      .post(`${CASES}bulk-fetch/`)
      .set("Authorization", app.editor.authorization)
      .send({ case_ids: [created.case_id] });
    expect(fetched.status).toBe(200);
    // a known path answers a method it does not serve with 405
    for (const [method, path] of [
      ["delete", created.case_id],
      ["put", `${created.case_id},x`],
      ["get", "bulk-fetch/"],
    ] as const) {
      const res = await app.http()[method](`${CASES}${path}`).set("Authorization", app.editor.authorization);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.allow, `${method} ${path}`).toEqual(expect.any(String));
    }
  });
});

describe("who may read", () => {
  it("the reader (view_data) may list, get, get by external id and multi-get", async () => {
    const created = await app.createCase({ external_id: "r-1" });
    const list = await as(app.reader, "");
    expect(list.status).toBe(200);
    expect(list.body.cases).toEqual([created]);
    expect((await as(app.reader, created.case_id)).body).toEqual(created);
    expect((await as(app.reader, "ext/r-1/")).body).toEqual(created);
    expect((await as(app.reader, `${created.case_id},x`)).body.matching_records).toBe(1);
  });

  it("the reader gets 403 on POST create and PUT, and nothing is saved", async () => {
    const created = await app.createCase();
    const post = await app.http().post(CASES).set("Authorization", app.reader.authorization).send({ case_type: "t", case_name: "n", owner_id: "o" });
    expect(post.status).toBe(403);
    expect(Object.keys(post.body)).toEqual(["error"]);
    const put = await app.http().put(`${CASES}${created.case_id}`).set("Authorization", app.reader.authorization).send({ case_name: "changed" });
    expect(put.status).toBe(403);
    const list = await app.get("");
    expect(list.body.matching_records).toBe(1);
    expect(list.body.cases[0].case_name).toBe(created.case_name);
  });

  it("a user of another domain gets 403 on every read of this domain, and sees none of its cases in their own", async () => {
    const created = await app.createCase({ external_id: "mine" });
    const outsider = await otherDomainUser();
    for (const path of ["", created.case_id, "ext/mine/", `${created.case_id},x`]) {
      const res = await as(outsider, path);
      expect(res.status, path).toBe(403);
      expect(Object.keys(res.body), path).toEqual(["error"]);
    }
    const own = await as(outsider, "", "other");
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ matching_records: 0, cases: [] });
    const filtered = await as(outsider, `?external_id=mine&indices.parent=${created.case_id}`, "other");
    expect(filtered.body).toEqual({ matching_records: 0, cases: [] });
  });

  it("access_api alone, or view_data without access_api, is 403", async () => {
    const apiOnly = await createUser(app, { domain: "demo", permissions: ["access_api"] });
    const dataOnly = await createUser(app, { domain: "demo", permissions: ["view_data"] });
    for (const user of [apiOnly, dataOnly]) {
      const res = await as(user, "");
      expect(res.status).toBe(403);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
  });

  it("an unknown domain is 403 for a member elsewhere and 404 for a superuser", async () => {
    const boss = await createUser(app, { superuser: true });
    expect((await as(app.editor, "", "nowhere")).status).toBe(403);
    const res = await as(boss, "", "nowhere");
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect((await as(boss, "")).status).toBe(200);
  });
});
