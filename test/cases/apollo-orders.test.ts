import type { ApolloClient } from "@apollo/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import type { ApolloSortedCasesQuery, CaseOrderBy } from "../generated/graphql.ts";
import { listScreenClient } from "../helpers/apollo.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/**
 * CONTRACT §7.3 `cases(orderBy)`, proven with Apollo Client 4 against a running server: a list
 * component sorted by a column pages with `relayStylePagination(["domain", "filter", "orderBy"])`;
 * after each fetchMore the cache holds the list so far, in the order, each case once, and each
 * order is a list of its own in the cache.
 */

const SortedCases = graphql(`
  query ApolloSortedCases($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String) {
    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after) {
      totalCount
      edges { cursor node { id caseId caseName dateClosed } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const DOMAIN = "demo";
const VISITS = { caseType: ["visit"] };
/** names of one write each; "b" twice, so that the name order breaks a tie; the odd ones closed */
const NAMES = ["d", "b", "f", "a", "b", "e", "c"];
const PAGE = 3;

let app: TestApp;
let editor: TestUser;
let client: ApolloClient;

beforeAll(async () => {
  app = await build();
  await createDomain(app, DOMAIN);
  editor = await createUser(app, { domain: DOMAIN, permissions: ["access_api", "edit_data"] });
  const base = await app.server.listen(0, "127.0.0.1");
  for (const [i, name] of NAMES.entries()) {
    const res = await app
      .http()
      .post(`/a/${DOMAIN}/api/case/v2/`)
      .set("Authorization", editor.authorization)
      .send({ case_type: "visit", case_name: name, owner_id: "o", close: i % 2 === 1 });
    expect(res.status).toBe(200);
  }
  client = listScreenClient(base, editor.authorization);
});

afterAll(async () => {
  client?.stop();
  await app?.close();
});

/** The list as the cache holds it for this order, merged across every page fetched so far. */
function cached(orderBy: CaseOrderBy) {
  const data = client.readQuery({ query: SortedCases, variables: { domain: DOMAIN, filter: VISITS, orderBy } });
  return (data?.cases.edges ?? []).map((edge) => edge.node);
}

type Page = ApolloSortedCasesQuery["cases"];

/** Pages the whole list in this order as a list component does (watchQuery, then fetchMore), checking the cache after each page. */
async function pageThrough(orderBy: CaseOrderBy) {
  const query = client.watchQuery({ query: SortedCases, variables: { domain: DOMAIN, filter: VISITS, orderBy, first: PAGE } });
  let subscription: { unsubscribe(): void } | undefined;
  let page = await new Promise<Page>((resolve, reject) => {
    subscription = query.subscribe({
      next: (result) => {
        if (result.dataState === "complete") resolve(result.data.cases);
      },
      error: reject,
    });
  });
  let loaded = page.edges.length;
  expect(cached(orderBy)).toHaveLength(loaded);
  while (page.pageInfo.hasNextPage) {
    page = (await query.fetchMore({ variables: { first: PAGE, after: page.pageInfo.endCursor } })).data!.cases;
    loaded += page.edges.length;
    expect(cached(orderBy)).toHaveLength(loaded);
  }
  subscription?.unsubscribe();
  return cached(orderBy);
}

describe("CONTRACT §7.3: Apollo Client 4 pages a sorted case list with relayStylePagination()", () => {
  it("§7.3 CASE_NAME_DESC: the merged list is every case once, names descending, the tie broken by caseId descending", async () => {
    const list = await pageThrough("CASE_NAME_DESC");
    expect(list.map((c) => c.caseName)).toEqual(["f", "e", "d", "c", "b", "b", "a"]);
    const [first, second] = list.filter((c) => c.caseName === "b");
    expect(first!.caseId > second!.caseId).toBe(true);
  });

  it("§7.3 DATE_CLOSED_ASC: closed cases by their closing time, then the open ones, each once", async () => {
    const list = await pageThrough("DATE_CLOSED_ASC");
    expect(list.slice(0, 3).map((c) => c.caseName)).toEqual(["b", "a", "e"]);
    expect(list.slice(0, 3).every((c) => c.dateClosed !== null)).toBe(true);
    expect(list.slice(3).every((c) => c.dateClosed === null)).toBe(true);
    expect(new Set(list.map((c) => c.caseId)).size).toBe(NAMES.length);
  });

  it("§7.3 each order is a list of its own in the cache: the name order is untouched by the other's pages", async () => {
    expect(cached("CASE_NAME_DESC").map((c) => c.caseName)).toEqual(["f", "e", "d", "c", "b", "b", "a"]);
    expect(cached("DATE_CLOSED_ASC")).toHaveLength(NAMES.length);
  });
});
