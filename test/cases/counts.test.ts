import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CountCache } from "../../src/cases/case.counts.ts";
import { Prisma } from "../../src/generated/prisma/client.ts";
import { graphql } from "../generated/gql.ts";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";
import { gql } from "../helpers/graphql.ts";

/**
 * CONTRACT §2 `matching_records` and GraphQL `totalCount` stay exact while the list remembers its
 * counts (src/cases/case.counts.ts): a repeated list does not count again, and any write to the
 * domain's cases or case indices, through the service or straight in SQL, is counted by the next list.
 */

describe("CountCache", () => {
  it("answers only at the version the count was read at", () => {
    const cache = new CountCache<number>();
    cache.set("q", "7", 42);
    expect(cache.get("q", "7")).toBe(42);
    expect(cache.get("q", "8")).toBeUndefined();
    expect(cache.get("q", undefined)).toBeUndefined();
    expect(cache.get("other", "7")).toBeUndefined();
  });

  it("keeps the most recently used counts within its capacity", () => {
    const cache = new CountCache<number>(2);
    cache.set("a", "1", 1);
    cache.set("b", "1", 2);
    cache.get("a", "1");
    cache.set("c", "1", 3);
    expect([cache.get("a", "1"), cache.get("b", "1"), cache.get("c", "1")]).toEqual([1, undefined, 3]);
  });
});

const CountedCases = graphql(`
  query CountedCases($domain: String!, $first: Int!, $caseType: [String!]) {
    cases(domain: $domain, first: $first, filter: { caseType: $caseType }) {
      totalCount
      nodes {
        caseId
      }
    }
  }
`);

const PagedCases = graphql(`
  query PagedCases($domain: String!, $first: Int, $after: String, $last: Int, $before: String) {
    cases(domain: $domain, first: $first, after: $after, last: $last, before: $before, filter: { caseType: ["patient"] }) {
      totalCount
      nodes {
        caseId
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
    }
  }
`);

describe("the list's counts are remembered for one write version of the domain", () => {
  let app: CaseTestApp;
  let countStatements: () => number;
  beforeEach(async () => {
    app = await buildCaseApp();
    for (let i = 0; i < 5; i++) await app.createCase({ case_type: "patient" });
    await app.createCase({ case_type: "household" });
    const queryRaw = vi.spyOn(app.db.prisma, "$queryRaw");
    const text = ([strings, ...values]: unknown[]) => Prisma.sql(strings as TemplateStringsArray, ...(values as Prisma.Sql[])).sql;
    countStatements = () => queryRaw.mock.calls.filter((call) => /count\(\*\)/.test(text(call))).length;
  });
  afterEach(() => app.close());

  const matching = async () => {
    const res = await app.get("?limit=2&case_type=patient");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.matching_records as number;
  };

  it("a repeated page is answered without counting again", async () => {
    expect(await matching()).toBe(5);
    const counted = countStatements();
    expect(counted).toBeGreaterThan(0);
    expect(await matching()).toBe(5);
    expect(countStatements()).toBe(counted);
  });

  it("a case created through the API is counted by the next page", async () => {
    expect(await matching()).toBe(5);
    await app.createCase({ case_type: "patient" });
    expect(await matching()).toBe(6);
  });

  it("updates and deletes made straight in SQL are counted by the next page", async () => {
    expect(await matching()).toBe(5);
    await app.db.prisma.$executeRaw`UPDATE cases SET case_type = 'patient' WHERE case_type = 'household'`;
    expect(await matching()).toBe(6);
    await app.db.prisma.$executeRaw`DELETE FROM cases WHERE id IN (SELECT id FROM cases WHERE case_type = 'patient' LIMIT 2)`;
    expect(await matching()).toBe(4);
  });

  it("an index written straight in SQL is counted by the next page filtered on indices", async () => {
    const parent = await app.createCase({ case_type: "household" });
    const children = await Promise.all(
      [0, 1, 2].map(() =>
        app.createCase({ case_type: "patient", indices: { parent: { case_id: parent.case_id, case_type: "household", relationship: "child" } } }),
      ),
    );
    const page = async () => (await app.get(`?limit=1&indices.parent=${parent.case_id}`)).body.matching_records;
    expect(await page()).toBe(3);
    await app.db.prisma.$executeRaw`DELETE FROM case_indices WHERE case_id = ${children[0].case_id}::uuid`;
    expect(await page()).toBe(2);
  });

  it("GraphQL totalCount: remembered, and a write is counted by the next query", async () => {
    const total = async () => {
      const { body } = await gql(app, app.editor.authorization, CountedCases, { domain: "demo", first: 2, caseType: ["patient"] });
      expect(body.errors).toBeUndefined();
      return body.data!.cases.totalCount;
    };
    expect(await total()).toBe(5);
    const counted = countStatements();
    expect(await total()).toBe(5);
    expect(countStatements()).toBe(counted);
    await app.createCase({ case_type: "patient" });
    expect(await total()).toBe(6);
  });

  /** GET of a `next` link (an absolute URL) as the editor. */
  const follow = (next: string) => {
    const url = new URL(next);
    return app.http().get(`${url.pathname}${url.search}`).set("Authorization", app.editor.authorization);
  };

  it("a pull through `next` counts once while nothing is written, and each page's matching_records stays exact", async () => {
    const first = await app.get("?limit=2&case_type=patient");
    const counted = countStatements();
    const second = await follow(first.body.next);
    const third = await follow(second.body.next);
    expect([first.body.matching_records, second.body.matching_records, third.body.matching_records]).toEqual([5, 3, 1]);
    expect("next" in third.body).toBe(false);
    expect(countStatements()).toBe(counted);
  });

  it("a case created between two pages of a pull is counted by the next page", async () => {
    const first = await app.get("?limit=2&case_type=patient");
    expect(first.body.matching_records).toBe(5);
    await app.createCase({ case_type: "patient" });
    const second = await follow(first.body.next);
    expect(second.body.matching_records).toBe(4);
  });

  const pageOf = async (variables: { first?: number; after?: string; last?: number; before?: string }) => {
    const { body } = await gql(app, app.editor.authorization, PagedCases, { domain: "demo", ...variables });
    expect(body.errors).toBeUndefined();
    const { totalCount, nodes, pageInfo } = body.data!.cases;
    return { totalCount, size: nodes.length, hasNextPage: pageInfo.hasNextPage, hasPreviousPage: pageInfo.hasPreviousPage, pageInfo };
  };

  it("GraphQL: paging forward through endCursor counts once while nothing is written, pageInfo exact on each page", async () => {
    const first = await pageOf({ first: 2 });
    const counted = countStatements();
    const second = await pageOf({ first: 2, after: first.pageInfo.endCursor! });
    const third = await pageOf({ first: 2, after: second.pageInfo.endCursor! });
    expect([first, second, third].map(({ pageInfo, ...page }) => page)).toEqual([
      { totalCount: 5, size: 2, hasNextPage: true, hasPreviousPage: false },
      { totalCount: 5, size: 2, hasNextPage: true, hasPreviousPage: true },
      { totalCount: 5, size: 1, hasNextPage: false, hasPreviousPage: true },
    ]);
    expect(countStatements()).toBe(counted);
  });

  it("GraphQL: paging backward through startCursor counts once while nothing is written, pageInfo exact on each page", async () => {
    const last = await pageOf({ last: 2 });
    const counted = countStatements();
    const before = await pageOf({ last: 2, before: last.pageInfo.startCursor! });
    const earliest = await pageOf({ last: 2, before: before.pageInfo.startCursor! });
    expect([last, before, earliest].map(({ pageInfo, ...page }) => page)).toEqual([
      { totalCount: 5, size: 2, hasNextPage: false, hasPreviousPage: true },
      { totalCount: 5, size: 2, hasNextPage: true, hasPreviousPage: true },
      { totalCount: 5, size: 1, hasNextPage: true, hasPreviousPage: false },
    ]);
    expect(countStatements()).toBe(counted);
  });

  it("GraphQL: a case deleted between two pages is counted by the next page", async () => {
    const first = await pageOf({ first: 2 });
    await app.db.prisma.$executeRaw`DELETE FROM cases WHERE case_type = 'household'`;
    await app.db.prisma
      .$executeRaw`DELETE FROM cases WHERE id = (SELECT id FROM cases WHERE case_type = 'patient' ORDER BY indexed_on DESC, id DESC LIMIT 1)`;
    const second = await pageOf({ first: 2, after: first.pageInfo.endCursor! });
    expect({ totalCount: second.totalCount, size: second.size, hasNextPage: second.hasNextPage }).toEqual({
      totalCount: 4,
      size: 2,
      hasNextPage: false,
    });
  });

  it("another domain's writes leave this domain's remembered count in use", async () => {
    expect(await matching()).toBe(5);
    const counted = countStatements();
    await app.db.prisma.$executeRaw`INSERT INTO domains (id, name) VALUES (gen_random_uuid(), 'elsewhere')`;
    await app.db.prisma.$executeRaw`INSERT INTO cases (id, domain_id, case_type, case_name, owner_id, date_opened, last_modified,
        server_last_modified, indexed_on)
      SELECT gen_random_uuid(), id, 'patient', 'x', 'o', now(), now(), now(), now() FROM domains WHERE name = 'elsewhere'`;
    expect(await matching()).toBe(5);
    expect(countStatements()).toBe(counted);
  });
});
