import { afterEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { WebSocket } from "ws";
import type { Config } from "../../src/config.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/**
 * F1: the per-operation budget (GRAPHQL_MAX_RESULT_OBJECTS, GRAPHQL_MAX_EXECUTION_MS) aborts an
 * operation that the cost estimate admits but that produces too much or runs too long, over HTTP
 * and over WebSocket, each subscription event with a budget of its own.
 */

let app: TestApp;
let reader: TestUser;
let editor: TestUser;
let client: Client | undefined;

async function setUp(limits: Partial<Config>): Promise<void> {
  app = await build(limits);
  await createDomain(app, "demo");
  reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
}
afterEach(async () => {
  await client?.dispose();
  client = undefined;
  await app.close();
});

/** `count` new cases of type "t", in one bulk write. */
async function seedCases(count: number): Promise<void> {
  const items = Array.from({ length: count }, (_, i) => ({ create: true, case_type: "t", case_name: `c${i}`, owner_id: "o" }));
  const res = await app.http().post("/a/demo/api/case/v2/").set("Authorization", editor.authorization).send(items);
  expect(res.status).toBe(200);
}

const post = (query: string) =>
  app.http().post("/graphql").set("Authorization", reader.authorization).set("Content-Type", "application/json").send({ query });

async function wsClient(): Promise<Client> {
  const url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
  client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: reader.authorization }, retryAttempts: 0, lazy: true });
  return client;
}

/** The first result a WebSocket operation gets. */
async function wsFirst(ws: Client, query: string): Promise<unknown> {
  const events = ws.iterate({ query });
  try {
    return (await events.next()).value;
  } finally {
    await events.return?.();
  }
}

const TOO_LARGE = {
  data: null,
  errors: [
    {
      message: "Query result is too large: it exceeds the limit of 10 objects. Ask for smaller pages or fewer relations.",
      extensions: { code: "RESULT_TOO_LARGE" },
    },
  ],
};

const TIMEOUT = {
  data: null,
  errors: [
    {
      message: "Query took too long: it exceeds the limit of 1 ms. Ask for smaller pages or fewer relations.",
      extensions: { code: "QUERY_TIMEOUT" },
    },
  ],
};

describe("GraphQL execution budget", () => {
  it("F1: a mutation is never cut halfway: each write runs whole, and none starts once the budget is spent", async () => {
    await setUp({ graphqlMaxResultObjects: 1 });
    const write = (name: string) =>
      `${name}: createCase(domain: "demo", input: { caseType: "t", caseName: "${name}", ownerId: "o" }) { case { caseId } }`;
    const res = await app
      .http()
      .post("/graphql")
      .set("Authorization", editor.authorization)
      .send({ query: `mutation { ${write("first")} ${write("second")} ${write("third")} }` });
    // the first write's case fits the budget; the second write runs whole, but its case is one object
    // too many (and, as non-null, nulls the answer's data); the third does not start
    expect(res.status).toBe(200);
    expect(res.body.errors.map((e: { path: string[]; extensions: { code: string } }) => [e.path.join("."), e.extensions.code])).toEqual([
      ["second.case", "RESULT_TOO_LARGE"],
    ]);
    const stored = await app.http().get("/a/demo/api/case/v2/").set("Authorization", editor.authorization);
    expect(stored.body.cases.map((c: { case_name: string }) => c.case_name).sort()).toEqual(["first", "second"]);
  });

  it("F1: an operation that produces more objects than GRAPHQL_MAX_RESULT_OBJECTS answers one RESULT_TOO_LARGE error and no data", async () => {
    await setUp({ graphqlMaxResultObjects: 10 });
    await seedCases(12);
    // the connection and 9 cases fit the budget
    const fits = await post('{ cases(domain: "demo", first: 9) { nodes { caseName } } }');
    expect([fits.status, fits.body.errors, fits.body.data.cases.nodes.length]).toEqual([200, undefined, 9]);
    const res = await post('{ cases(domain: "demo", first: 12) { totalCount nodes { caseName parent { caseId } } } }');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(TOO_LARGE);
    expect(Object.keys(res.body)).toEqual(["errors", "data"]); // Apollo's order, as in every answer
    // the budget is per operation: the next request has its own
    expect((await post('{ cases(domain: "demo", first: 9) { nodes { caseId } } }')).body.errors).toBeUndefined();
  });

  it("F1: an operation that runs longer than GRAPHQL_MAX_EXECUTION_MS answers one QUERY_TIMEOUT error and no data", async () => {
    await setUp({ graphqlMaxExecutionMs: 1 });
    await seedCases(3);
    // the page and each case's parent are two database round trips at least: over 1 ms
    const res = await post('{ cases(domain: "demo") { nodes { caseId parent { caseId } forms { id } } } }');
    expect([res.status, res.body]).toEqual([200, TIMEOUT]);
  });

  it("F1: over WebSocket, a query over GRAPHQL_MAX_RESULT_OBJECTS gets the same single RESULT_TOO_LARGE error, and casesByIds its per-id cost", async () => {
    await setUp({ graphqlMaxResultObjects: 10 });
    await seedCases(12);
    const ws = await wsClient();
    expect(await wsFirst(ws, '{ cases(domain: "demo", first: 12) { nodes { caseId } } }')).toEqual(TOO_LARGE);
    expect(await wsFirst(ws, '{ cases(domain: "demo", first: 3) { totalCount } }')).toEqual({ data: { cases: { totalCount: 12 } } });
    // the estimate still refuses first what it can price: 5,000 ids with up to 100 children each
    const ids = JSON.stringify(Array.from({ length: 5000 }, (_, i) => `id-${i}`));
    // (a refusal before execution is graphql-ws's error message, which iterate throws)
    await expect(wsFirst(ws, `{ casesByIds(domain: "demo", caseIds: ${ids}) { entries { case { children { caseId } } } } }`)).rejects.toMatchObject([
      { message: "Query is too expensive: cost 515001 exceeds the limit of 250000.", extensions: { code: "QUERY_TOO_COMPLEX" } },
    ]);
  });

  it("F1: over WebSocket, GRAPHQL_MAX_EXECUTION_MS aborts a query with QUERY_TIMEOUT", async () => {
    await setUp({ graphqlMaxExecutionMs: 1 });
    await seedCases(3);
    const ws = await wsClient();
    expect(await wsFirst(ws, '{ cases(domain: "demo") { nodes { caseId parent { caseId } forms { id } } } }')).toEqual(TIMEOUT);
  });

  it("F1: each subscription event runs with a budget of its own", async () => {
    // one object per event: a budget shared by the events would refuse the second
    await setUp({ graphqlMaxResultObjects: 1 });
    const ws = await wsClient();
    const events = ws.iterate({ query: 'subscription { caseChanged(domain: "demo") { caseType } }' });
    try {
      const first = events.next();
      await new Promise((resolve) => setTimeout(resolve, 300)); // let the subscription start
      await seedCases(1);
      expect((await first).value).toEqual({ data: { caseChanged: { caseType: "t" } } });
      await seedCases(1);
      expect((await events.next()).value).toEqual({ data: { caseChanged: { caseType: "t" } } });
    } finally {
      await events.return?.();
    }
  });
});
