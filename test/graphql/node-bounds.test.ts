import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Config } from "../../src/config.ts";
import { globalId } from "../../src/graphql/node.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/**
 * CONTRACT §7.3 `Query.nodes(ids)` within bounds (security review 2026-11-26, G3): at most 1000 ids,
 * one check for all the domains the ids name, and no fetch started once the execution budget is spent.
 */

let app: TestApp | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await app?.close();
  app = undefined;
});

async function setUp(limits: Partial<Config> = {}): Promise<{ app: TestApp; reader: TestUser }> {
  app = await build({ workers: 0, ...limits });
  await createDomain(app, "demo");
  const reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  return { app, reader };
}

const NODES = "query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }";
const postNodes = (a: TestApp, authorization: string, ids: string[]) =>
  a.http().post("/graphql").set("Authorization", authorization).set("Content-Type", "application/json").send({ query: NODES, variables: { ids } });

/** Counts the case read scopes opened (each one authorization) and the case ids they fetched, each fetch taking `delayMs`. */
function watchCaseReads(a: TestApp, delayMs = 0): { scopes: () => number; fetched: () => number } {
  const caseReads = a.services.caseReads;
  const open = caseReads.in.bind(caseReads);
  let scopes = 0;
  let fetched = 0;
  vi.spyOn(caseReads, "in").mockImplementation(async (principal, domain) => {
    scopes += 1;
    const scope = await open(principal, domain);
    const byIds = scope.byIds.bind(scope);
    scope.byIds = async (ids) => {
      fetched += ids.length;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return byIds(ids);
    };
    return scope;
  });
  return { scopes: () => scopes, fetched: () => fetched };
}

describe("CONTRACT §7.3 nodes(ids) within bounds (G3)", () => {
  it("nodes takes at most 1000 ids: 1001 is BAD_USER_INPUT 'ids' must hold at most 1000 ids. with no data, and nothing is fetched", async () => {
    const { app, reader } = await setUp();
    const watch = watchCaseReads(app);
    const ids = Array.from({ length: 1001 }, () => globalId("Case", "demo", randomUUID()));
    const refused = await postNodes(app, reader.authorization, ids);
    expect([refused.status, refused.body]).toEqual([
      200,
      {
        errors: [
          {
            message: "'ids' must hold at most 1000 ids.",
            locations: [{ line: 1, column: 23 }],
            path: ["nodes"],
            extensions: { code: "BAD_USER_INPUT" },
          },
        ],
        data: null,
      },
    ]);
    expect([watch.scopes(), watch.fetched()]).toEqual([0, 0]);
    const answered = await postNodes(app, reader.authorization, ids.slice(0, 1000));
    expect([answered.status, answered.body.errors, answered.body.data.nodes.length]).toEqual([200, undefined, 1000]);
    expect(answered.body.data.nodes.every((n: unknown) => n === null)).toBe(true);
  });

  it("ids naming 999 domains the caller is not in are null without an authorization each: one case read scope, for the member's domain", async () => {
    const { app, reader } = await setUp();
    const editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    const created = await app
      .http()
      .post("/a/demo/api/case/v2/")
      .set("Authorization", editor.authorization)
      .send({ case_type: "t", case_name: "n", owner_id: "o" });
    const caseId: string = created.body.case.case_id;
    const watch = watchCaseReads(app);
    const ids = [...Array.from({ length: 999 }, (_, i) => globalId("Case", `made-up-${i}`, caseId)), globalId("Case", "demo", caseId)];
    const res = await postNodes(app, reader.authorization, ids);
    expect(res.status).toBe(200);
    expect(res.body.data.nodes.slice(0, 999).every((n: unknown) => n === null)).toBe(true);
    expect(res.body.data.nodes[999]).toEqual({ __typename: "Case", id: globalId("Case", "demo", caseId) });
    expect(watch.scopes()).toBe(1);
  });

  it("a user with no membership at all: 1000 ids of 1000 domains answer 1000 nulls, and open no scope", async () => {
    const { app } = await setUp();
    const loner = await createUser(app, {});
    const watch = watchCaseReads(app);
    const ids = Array.from({ length: 1000 }, (_, i) => globalId("Case", `d${i}`, "k"));
    const res = await postNodes(app, loner.authorization, ids);
    expect([res.status, res.body.errors, res.body.data.nodes.filter((n: unknown) => n !== null).length]).toEqual([200, undefined, 0]);
    expect(watch.scopes()).toBe(0);
  });

  it("once GRAPHQL_MAX_EXECUTION_MS is spent, nodes starts no more fetches: one batch of 100 ids of 1000, then QUERY_TIMEOUT", async () => {
    const { app, reader } = await setUp({ graphqlMaxExecutionMs: 50 });
    const watch = watchCaseReads(app, 150);
    const ids = Array.from({ length: 1000 }, () => globalId("Case", "demo", randomUUID()));
    const res = await postNodes(app, reader.authorization, ids);
    expect([res.status, res.body]).toEqual([
      200,
      {
        data: null,
        errors: [
          {
            message: "Query took too long: it exceeds the limit of 50 ms. Ask for smaller pages or fewer relations.",
            extensions: { code: "QUERY_TIMEOUT" },
          },
        ],
      },
    ]);
    expect(watch.fetched()).toBe(100);
  });
});
