import { afterEach, describe, expect, it, vi } from "vitest";
import { checkFilter, checkQuery, MAX_FILTER_VALUES, MAX_NAMED_FILTERS, type CaseQuery } from "../../src/cases/case.query.ts";
import { CaseRepository } from "../../src/cases/case.repository.ts";
import { postgresDatabase, type Database } from "../../src/db/client.ts";
import { DomainError } from "../../src/errors.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { CASES } from "../helpers/cases.ts";
import { usingPostgres } from "../helpers/db.ts";

/**
 * CONTRACT §2 "List" filters within bounds (security review 2026-11-26, G4): "repeating a parameter
 * ORs its values", up to 100 values per filter and 20 property and index filters per request, the
 * same 400 on REST and GraphQL; and, on PostgreSQL, no statement outlives its request.
 */

const TOO_MANY_VALUES = "You cannot give more than 100 values to one filter.";
const TOO_MANY_FILTERS = "You cannot filter on more than 20 properties and indices per request.";

const values = (n: number, prefix = "v") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const emptyQuery = (): CaseQuery => ({ limit: 20, exact: {}, properties: new Map(), indices: new Map(), ranges: [] });

/** The message a value rule refuses the query with, or undefined when it passes. */
function refusal(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof DomainError && error.code === "BAD_USER_INPUT") return error.message;
    throw error;
  }
}

describe("value rules: the list query's filters are bounded (service level)", () => {
  const withOne = (change: (q: CaseQuery) => void): CaseQuery => {
    const query = emptyQuery();
    change(query);
    return query;
  };
  const oneFilterOf = (n: number) => ({
    owner_id: withOne((q) => (q.exact.owner_id = values(n))),
    case_type: withOne((q) => (q.exact.case_type = values(n))),
    external_id: withOne((q) => (q.exact.external_id = values(n))),
    case_name: withOne((q) => (q.exact.case_name = values(n))),
    closed: withOne((q) => (q.closed = Array.from({ length: n }, (_, i) => i % 2 === 0))),
    "properties.n": withOne((q) => q.properties.set("n", values(n))),
    "indices.parent": withOne((q) => q.indices.set("parent", values(n))),
    "last_modified.gte": withOne((q) => q.ranges.push({ field: "last_modified", op: "gte", values: Array.from({ length: n }, () => "2024-01-01") })),
  });

  it("every repeated filter takes at most 100 values: 101 is 'You cannot give more than 100 values to one filter.', for REST's query and GraphQL's filter alike", () => {
    expect(MAX_FILTER_VALUES).toBe(100);
    for (const [name, query] of Object.entries(oneFilterOf(MAX_FILTER_VALUES + 1))) {
      expect(
        refusal(() => checkQuery(query)),
        name,
      ).toBe(TOO_MANY_VALUES);
      const { limit: _limit, ...filter } = query;
      expect(
        refusal(() => checkFilter(filter)),
        name,
      ).toBe(TOO_MANY_VALUES);
    }
    for (const [name, query] of Object.entries(oneFilterOf(MAX_FILTER_VALUES)))
      expect(
        refusal(() => checkQuery(query)),
        name,
      ).toBeUndefined();
  });

  it("at most 20 property and index filters: 21 is 'You cannot filter on more than 20 properties and indices per request.'", () => {
    expect(MAX_NAMED_FILTERS).toBe(20);
    const query = (properties: number, indices: number) =>
      withOne((q) => {
        for (let i = 0; i < properties; i++) q.properties.set(`p${i}`, ["x"]);
        for (let i = 0; i < indices; i++) q.indices.set(`i${i}`, ["x"]);
      });
    expect(refusal(() => checkQuery(query(21, 0)))).toBe(TOO_MANY_FILTERS);
    expect(refusal(() => checkQuery(query(11, 10)))).toBe(TOO_MANY_FILTERS);
    expect(refusal(() => checkQuery(query(10, 10)))).toBeUndefined();
    // a bound on the filters comes before the page size's, as REST's names come first
    expect(refusal(() => checkQuery({ ...query(21, 0), limit: 5001 }))).toBe(TOO_MANY_FILTERS);
  });
});

let app: TestApp | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await app?.close();
  app = undefined;
});

async function setUp(wrapDb?: (db: Database) => Database): Promise<{ app: TestApp; reader: TestUser }> {
  app = await build({ workers: 0 }, wrapDb);
  await createDomain(app, "demo");
  const editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  const reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  const items = Array.from({ length: 100 }, (_, i) => ({
    create: true,
    case_type: "t",
    case_name: `c${i}`,
    owner_id: "o",
    properties: Object.fromEntries(Array.from({ length: 20 }, (_, p) => [`p${p}`, `v${i}`])),
  }));
  expect((await app.http().post(CASES).set("Authorization", editor.authorization).send(items)).status).toBe(200);
  return { app, reader };
}

const CASES_QUERY = 'query($filter: CaseFilter) { cases(domain: "demo", first: 5, filter: $filter) { totalCount nodes { caseName } } }';
const gqlCases = (a: TestApp, authorization: string, filter: unknown) =>
  a
    .http()
    .post("/graphql")
    .set("Authorization", authorization)
    .set("Content-Type", "application/json")
    .send({ query: CASES_QUERY, variables: { filter } });

describe("the wire: REST 400 {error} and GraphQL BAD_USER_INPUT with the same message", () => {
  it("101 values of one property (repeated properties.n, or one PropertyFilter's values) are refused; 100 are answered", async () => {
    const { app, reader } = await setUp();
    const rest = (n: number, parameter = "properties.p0") =>
      app
        .http()
        .get(
          `${CASES}?${values(n)
            .map((v) => `${parameter}=${v}`)
            .join("&")}`,
        )
        .set("Authorization", reader.authorization);
    for (const parameter of ["properties.p0", "owner_id", "case_type", "external_id", "case_name", "indices.parent"]) {
      const refused = await rest(101, parameter);
      expect([parameter, refused.status, refused.body], parameter).toEqual([parameter, 400, { error: TOO_MANY_VALUES }]);
    }
    const answered = await rest(100);
    expect([answered.status, answered.body.matching_records]).toEqual([200, 100]);

    const graphql = await gqlCases(app, reader.authorization, { properties: [{ name: "p0", values: values(101) }] });
    expect([
      graphql.status,
      graphql.body.data,
      graphql.body.errors.map((e: { message: string; extensions: unknown }) => [e.message, e.extensions]),
    ]).toEqual([200, null, [[TOO_MANY_VALUES, { code: "BAD_USER_INPUT" }]]]);
    // two entries for one name OR together: 60 + 41 values of p0 are 101
    const split = await gqlCases(app, reader.authorization, {
      properties: [
        { name: "p0", values: values(60) },
        { name: "p0", values: values(41, "w") },
      ],
    });
    expect(split.body.errors?.[0]?.message).toBe(TOO_MANY_VALUES);
    for (const filter of [
      { ownerId: values(101) },
      { caseType: values(101) },
      { externalId: values(101) },
      { caseName: values(101) },
      { indices: [{ name: "parent", caseIds: values(101) }] },
    ]) {
      const res = await gqlCases(app, reader.authorization, filter);
      expect([Object.keys(filter)[0], res.body.errors?.[0]?.message]).toEqual([Object.keys(filter)[0], TOO_MANY_VALUES]);
    }
  });

  it("21 property filters are refused; the largest filter allowed, 20 properties of 100 values each, is answered within a few seconds", async () => {
    const { app, reader } = await setUp();
    const properties = (n: number) => Array.from({ length: n }, (_, p) => ({ name: `p${p}`, values: values(100) }));
    const refused = await gqlCases(app, reader.authorization, { properties: properties(21) });
    expect(refused.body.errors.map((e: { message: string }) => e.message)).toEqual([TOO_MANY_FILTERS]);
    const rest = await app
      .http()
      .get(`${CASES}?${Array.from({ length: 21 }, (_, p) => `properties.p${p}=v1`).join("&")}`)
      .set("Authorization", reader.authorization);
    expect([rest.status, rest.body]).toEqual([400, { error: TOO_MANY_FILTERS }]);

    const started = performance.now();
    const largest = await gqlCases(app, reader.authorization, { properties: properties(20) });
    expect([largest.status, largest.body.errors, largest.body.data.cases.totalCount]).toEqual([200, undefined, 100]);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe.runIf(usingPostgres())("PostgreSQL: DATABASE_STATEMENT_TIMEOUT_MS", () => {
  /** The test's database, reopened with a statement timeout of `timeoutMs`. */
  const timed = (timeoutMs: number) => (db: Database) => {
    // the timeout travels as a startup parameter, which only a direct connection takes (not PgBouncer)
    const reopened = postgresDatabase(db.directUrl!, 5, 5000, timeoutMs);
    return {
      ...reopened,
      async close() {
        await reopened.close();
        await db.close();
      },
    };
  };

  it("a statement that outlives the timeout is cancelled by PostgreSQL and answered 400 QUERY_TIMEOUT on REST and GraphQL, never 500", async () => {
    const { app, reader } = await setUp(timed(300));
    // the list's statements stand for a filter that makes the database work for 5 s
    const slow = async () => {
      await app.db.prisma.$queryRawUnsafe("SELECT pg_sleep(5)");
      throw new Error("not reached: the statement was not cancelled");
    };
    vi.spyOn(CaseRepository.prototype, "page").mockImplementation(slow);
    vi.spyOn(CaseRepository.prototype, "pageJson").mockImplementation(slow);
    vi.spyOn(CaseRepository.prototype, "slice").mockImplementation(slow);
    const message = "Query took too long: the database cancelled it at its statement timeout. Ask for smaller pages or narrower filters.";

    let started = performance.now();
    const rest = await app.http().get(`${CASES}?properties.p0=v1`).set("Authorization", reader.authorization);
    expect([rest.status, rest.body]).toEqual([400, { error: message }]);
    expect(performance.now() - started).toBeLessThan(4000);

    started = performance.now();
    const graphql = await gqlCases(app, reader.authorization, { properties: [{ name: "p0", values: ["v1"] }] });
    expect([
      graphql.status,
      graphql.body.data,
      graphql.body.errors.map((e: { message: string; extensions: unknown }) => [e.message, e.extensions]),
    ]).toEqual([200, null, [[message, { code: "QUERY_TIMEOUT" }]]]);
    expect(performance.now() - started).toBeLessThan(4000);
  });

  it("requests' connections carry the timeout; migrations' connections do not (a migration may rightly run longer)", async () => {
    const { app } = await setUp(timed(300));
    const [requests] = await app.db.prisma.$queryRawUnsafe<{ statement_timeout: string }[]>("SHOW statement_timeout");
    expect(requests!.statement_timeout).toBe("300ms");
    const migrations = await app.db.adapterFactory.connect();
    try {
      const shown = await migrations.queryRaw({ sql: "SHOW statement_timeout", args: [], argTypes: [] });
      expect(shown.rows).toEqual([["0"]]);
    } finally {
      await migrations.dispose();
    }
  });
});
