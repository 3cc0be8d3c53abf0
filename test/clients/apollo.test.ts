import type { ApolloClient } from "@apollo/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import type { ApolloCasePageQuery, ApolloCasePageQueryVariables } from "../generated/graphql.ts";
import { listScreenClient } from "../helpers/apollo.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/**
 * CONTRACT §7.3, proven with Apollo Client 4 against a running server: `relayStylePagination()`
 * merges pages by the edge cursors, so a page whose edges shared one cursor lost rows in the cache
 * (issue #13: page 2 of a…f left a,d,e,f). Every test reads the cache's merged list after each
 * fetchMore, which is where that loss showed.
 */

const CasePage = graphql(`
  query ApolloCasePage($domain: String!, $filter: CaseFilter, $first: Int, $after: String, $last: Int, $before: String) {
    cases(domain: $domain, filter: $filter, first: $first, after: $after, last: $last, before: $before) {
      totalCount
      edges { cursor node { id caseId caseName } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

const RenameCase = graphql(`
  mutation ApolloRenameCase($domain: String!, $caseId: ID!, $input: CaseInput!) {
    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { id caseName } }
  }
`);

const DOMAIN = "demo";
const VISITS = { caseType: ["visit"] };
/** the filtered list: seven visits, so that pages of three end on a partial page */
const NAMES = ["a", "b", "c", "d", "e", "f", "g"];
const PAGE = 3;

let app: TestApp;
let editor: TestUser;
let client: ApolloClient;

beforeEach(async () => {
  app = await build();
  await createDomain(app, DOMAIN);
  editor = await createUser(app, { domain: DOMAIN, permissions: ["access_api", "edit_data"] });
  const base = await app.server.listen(0, "127.0.0.1");
  // other case types between the visits: the filter, not the table, makes the list
  for (const name of NAMES) {
    await writeCase("visit", name);
    await writeCase("other", `not ${name}`);
  }
  client = listScreenClient(base, editor.authorization);
});

afterEach(async () => {
  client?.stop();
  await app?.close();
});

async function writeCase(caseType: string, caseName: string): Promise<void> {
  const res = await app
    .http()
    .post(`/a/${DOMAIN}/api/case/v2/`)
    .set("Authorization", editor.authorization)
    .send({ case_type: caseType, case_name: caseName, owner_id: "o" });
  expect(res.status).toBe(200);
}

/** The filtered list as the cache holds it now, merged across every page fetched so far. */
function cachedNames(): string[] {
  const cached = client.readQuery({ query: CasePage, variables: { domain: DOMAIN, filter: VISITS } });
  return (cached?.cases.edges ?? []).map((edge) => edge.node.caseName);
}

type Page = ApolloCasePageQuery["cases"];
type PageVariables = Omit<ApolloCasePageQueryVariables, "domain" | "filter">;

/** A live query on the filtered list and a way to fetch more of it, as a paginated list component holds one. */
async function watchCases(variables: PageVariables) {
  const query = client.watchQuery({ query: CasePage, variables: { domain: DOMAIN, filter: VISITS, ...variables } });
  let subscription: { unsubscribe(): void } | undefined;
  const first = await new Promise<Page>((resolve, reject) => {
    subscription = query.subscribe({
      next: (result) => {
        if (result.dataState === "complete") resolve(result.data.cases);
      },
      error: reject,
    });
  });
  return {
    first,
    /** fetches one more page; returns that page as the server sent it */
    async more(next: PageVariables): Promise<Page> {
      const { data } = await query.fetchMore({ variables: next });
      if (!data) throw new Error("fetchMore returned no data");
      return data.cases;
    },
    /** the names the live query shows now, as a list component would render them */
    shown: () => (query.getCurrentResult().data?.cases?.edges ?? []).map((edge) => edge?.node?.caseName),
    stop: () => subscription?.unsubscribe(),
  };
}

describe("CONTRACT §7.3: Apollo Client 4 pages a filtered case list with relayStylePagination()", () => {
  it("§7.3 forward with first/after: after each fetchMore the cache holds every row so far exactly once, in order", async () => {
    const list = await watchCases({ first: PAGE });
    expect(list.first.totalCount).toBe(NAMES.length);
    expect(cachedNames()).toEqual(NAMES.slice(0, PAGE));
    let page = list.first;
    for (let loaded = PAGE; page.pageInfo.hasNextPage; loaded += PAGE) {
      page = await list.more({ first: PAGE, after: page.pageInfo.endCursor });
      expect(page.totalCount).toBe(NAMES.length);
      expect(cachedNames()).toEqual(NAMES.slice(0, loaded + PAGE));
    }
    expect(cachedNames()).toEqual(NAMES);
    list.stop();
  });

  it("§7.3 backward with last/before: after each fetchMore the cache holds every row so far exactly once, in order", async () => {
    const list = await watchCases({ last: PAGE });
    expect(list.first.totalCount).toBe(NAMES.length);
    expect(list.first.pageInfo.hasNextPage).toBe(false);
    expect(cachedNames()).toEqual(NAMES.slice(-PAGE));
    let page = list.first;
    for (let loaded = PAGE; page.pageInfo.hasPreviousPage; loaded += PAGE) {
      page = await list.more({ last: PAGE, before: page.pageInfo.startCursor });
      expect(page.totalCount).toBe(NAMES.length);
      expect(cachedNames()).toEqual(NAMES.slice(-(loaded + PAGE)));
    }
    expect(cachedNames()).toEqual(NAMES);
    list.stop();
  });

  it("§7.3 each edge's own cursor: fetchMore after the first edge of a page keeps that edge and continues right after it", async () => {
    const list = await watchCases({ first: PAGE });
    const cursors = list.first.edges.map((edge) => edge.cursor);
    expect(new Set(cursors).size).toBe(PAGE);
    // relayStylePagination cuts the cached list after the edge whose cursor is `after`
    await list.more({ first: PAGE, after: cursors[0] });
    expect(cachedNames()).toEqual(NAMES.slice(0, 1 + PAGE));
    await list.more({ first: PAGE, after: cursors[1] });
    expect(cachedNames()).toEqual(NAMES.slice(0, 2 + PAGE));
    list.stop();
  });
});

describe("CONTRACT §7.3: Apollo Client 4 normalises cases by their global id", () => {
  it("§7.3 a mutation's result updates the case inside the cached list, without refetching the list", async () => {
    const list = await watchCases({ first: PAGE });
    const b = list.first.edges[1].node;
    const renamed = await client.mutate({ mutation: RenameCase, variables: { domain: DOMAIN, caseId: b.caseId, input: { caseName: "b renamed" } } });
    expect(renamed.data?.updateCase.case.id).toBe(b.id);
    expect(client.cache.identify({ __typename: "Case", id: b.id })).toBe(`Case:${b.id}`);
    expect(cachedNames()).toEqual(["a", "b renamed", "c"]);
    expect(list.shown()).toEqual(["a", "b renamed", "c"]);
    list.stop();
  });
});
