import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/** CONTRACT §5 Protections: query depth and cost limits, and CSRF prevention. */

let app: TestApp;
let user: TestUser;
beforeEach(async () => {
  app = await build({ graphqlMaxDepth: 6, graphqlMaxCost: 1000 });
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
});
afterEach(() => app.close());

const post = (query: string) =>
  app.http().post("/graphql").set("Authorization", user.authorization).set("Content-Type", "application/json").send({ query });

describe("GraphQL limits", () => {
  it("refuses a query deeper than GRAPHQL_MAX_DEPTH before running it", async () => {
    const res = await post('{ cases(domain: "demo") { nodes { parent { parent { parent { parent { parent { caseId } } } } } } } }');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/exceeds maximum operation depth of 6/);
  });

  it("refuses a query whose estimated cost exceeds GRAPHQL_MAX_COST with QUERY_TOO_COMPLEX", async () => {
    const res = await post('{ cases(domain: "demo", first: 5000) { nodes { caseId children { caseId } } } }');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe("QUERY_TOO_COMPLEX");
  });

  it("runs a query within both limits", async () => {
    const res = await post('{ cases(domain: "demo", first: 10) { totalCount nodes { caseId } } }');
    expect(res.status).toBe(200);
    expect(res.body.data.cases.totalCount).toBe(0);
  });

  it("blocks a GET query without a preflight header (CSRF prevention) and serves it with one", async () => {
    const query = encodeURIComponent('{ me { username } }');
    const blocked = await app.http().get(`/graphql?query=${query}`).set("Authorization", user.authorization);
    expect(blocked.status).toBe(400);
    const allowed = await app.http().get(`/graphql?query=${query}`).set("Authorization", user.authorization).set("apollo-require-preflight", "true");
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.me.username).toBe(user.username);
  });

  it("refuses a mutation over GET", async () => {
    const query = encodeURIComponent('mutation { createDomain(name: "x") { id } }');
    const res = await app.http().get(`/graphql?query=${query}`).set("Authorization", user.authorization).set("apollo-require-preflight", "true");
    expect(res.status).toBe(405);
  });
});
