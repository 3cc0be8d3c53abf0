import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "graphql-ws";
import { WebSocket } from "ws";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/**
 * CONTRACT §5 Protections: query depth and cost limits, and CSRF prevention. (Aliases, batching,
 * uploads and WebSocket message size: test/security/limits.test.ts.)
 */

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

const FULL_CASE = "caseId caseName caseType closed dateClosed dateOpened domain externalId indexedOn indices { name caseType caseId relationship } lastModified openedBy { id username } ownerId properties serverLastModified";

describe("GraphQL limits", () => {
  it("the default GRAPHQL_MAX_COST admits the largest page (5,000 cases) with every case field, but not its children's children", async () => {
    const defaults = await build();
    try {
      await createDomain(defaults, "demo");
      const reader = await createUser(defaults, { domain: "demo", permissions: ["access_api", "view_data"] });
      const send = (query: string) =>
        defaults.http().post("/graphql").set("Authorization", reader.authorization).set("Content-Type", "application/json").send({ query });
      const full = await send(`{ cases(domain: "demo", first: 5000) { totalCount nodes { ${FULL_CASE} parent { caseId } host { caseId } } } }`);
      expect(full.body.errors).toBeUndefined();
      expect(full.status).toBe(200);
      const nested = await send(`{ cases(domain: "demo", first: 5000) { nodes { ${FULL_CASE} children { caseId children { caseId } } } } }`);
      expect(nested.status).toBe(400);
      expect(nested.body.errors[0].extensions.code).toBe("QUERY_TOO_COMPLEX");
    } finally {
      await defaults.close();
    }
  });

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

  it("estimates cost per field: a page of 100 cases is cheap, the same page with each case's children (10 each) is not", async () => {
    const cheap = await post('{ cases(domain: "demo", first: 100) { nodes { caseId } } }');
    expect(cheap.status).toBe(200);
    const costly = await post('{ cases(domain: "demo", first: 100) { nodes { caseId children { caseId } } } }');
    expect(costly.status).toBe(400);
    // 1 + 100 × (nodes 1 + caseId 1 + children 10 × (caseId 1)): a list field multiplies what it selects
    expect(costly.body.errors[0]).toMatchObject({
      message: "Query is too expensive: cost 1201 exceeds the limit of 1000.",
      extensions: { code: "QUERY_TOO_COMPLEX" },
    });
  });

  it("applies depth and cost over WebSocket too, with the same codes", async () => {
    const url = (await app.server.listen(0, "127.0.0.1")).replace("http", "ws") + "/graphql";
    const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: user.authorization }, retryAttempts: 0, lazy: true });
    const codes = async (query: string) => {
      const events = client.iterate({ query });
      try {
        const { value } = await events.next();
        return (value?.errors ?? []).map((e: { extensions?: { code?: unknown } }) => e.extensions?.code);
      } catch (errors) {
        return (errors as { extensions?: { code?: string } }[]).map((e) => e.extensions?.code);
      } finally {
        await events.return?.();
      }
    };
    try {
      expect(await codes('{ cases(domain: "demo") { nodes { parent { parent { parent { parent { parent { caseId } } } } } } } }')).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
      expect(await codes('{ cases(domain: "demo", first: 5000) { nodes { caseId children { caseId } } } }')).toEqual(["QUERY_TOO_COMPLEX"]);
      expect(await codes('{ cases(domain: "demo", first: 10) { totalCount } }')).toEqual([]);
    } finally {
      await client.dispose();
    }
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
