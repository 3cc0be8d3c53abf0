import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { WebSocket } from "ws";
import { loadConfig } from "../../src/config.ts";
import { basic, build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { wsUrl } from "../helpers/ws.ts";

/**
 * CONTRACT §5 Protections: query depth and cost limits, and CSRF prevention (its whole rule:
 * csrf.test.ts). (Aliases, batching, uploads and WebSocket message size: test/security/limits.test.ts.)
 */

let app: TestApp;
let user: TestUser;
beforeEach(async () => {
  app = await build({ graphqlMaxDepth: 6, graphqlMaxCost: 1000 });
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
});
afterEach(() => app.close());

const post = (query: string, extra: { operationName?: string; variables?: Record<string, unknown> } = {}) =>
  app
    .http()
    .post("/graphql")
    .set("Authorization", user.authorization)
    .set("Content-Type", "application/json")
    .send({ query, ...extra });

const codesOf = (res: { body: { errors?: { extensions?: { code?: string } }[] } }) => (res.body.errors ?? []).map((e) => e.extensions?.code);

/** Fragments spreading the next one twice, `levels` deep: a small document with 2^levels selections. */
const fragmentBlowUp = (levels: number) =>
  `{ ...F0 } ${Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(" ")} fragment F${levels} on Query { __typename }`;

const FULL_CASE =
  "caseId caseName caseType closed dateClosed dateOpened domain externalId indexedOn indices { name caseType caseId relationship } lastModified openedBy { userId username } ownerId properties serverLastModified";

/** A case id that names no case. */
const HUB_ID = "00000000-0000-4000-8000-000000000000";

type Payload = { query: string; operationName?: string; variables?: Record<string, unknown> };

/** The error codes a WebSocket subscribe message gets back, whether as a result or as an error message. */
async function wsErrorCodes(client: Client, payload: Payload): Promise<unknown[]> {
  const events = client.iterate(payload);
  try {
    const { value } = await events.next();
    return (value?.errors ?? []).map((e: { extensions?: { code?: unknown } }) => e.extensions?.code);
  } catch (errors) {
    return (errors as { extensions?: { code?: string } }[]).map((e) => e.extensions?.code);
  } finally {
    await events.return?.();
  }
}

/** A graphql-ws client of the app, as the test user, on a port of its own. */
async function wsClient() {
  const url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
  return createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: user.authorization }, retryAttempts: 0, lazy: true });
}

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
      // `last` multiplies as `first` does, through edges as through nodes
      const backward = await send(
        `{ cases(domain: "demo", last: 5000) { edges { node { ${FULL_CASE} children { caseId children { caseId } } } } } }`,
      );
      expect(backward.status).toBe(400);
      expect(backward.body.errors[0].extensions.code).toBe("QUERY_TOO_COMPLEX");
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

  it("estimates cost per field: a page of 100 cases is cheap, the same page with each case's children (first: 100 by default) is not", async () => {
    const cheap = await post('{ cases(domain: "demo", first: 100) { nodes { caseId } } }');
    expect(cheap.status).toBe(200);
    const costly = await post('{ cases(domain: "demo", first: 100) { nodes { caseId children { caseId } } } }');
    expect(costly.status).toBe(400);
    // 1 + 100 × (nodes 1 + caseId 1 + children (1 + 100 × caseId 1)): a list field multiplies what it selects by its bound
    expect(costly.body.errors[0]).toMatchObject({
      message: "Query is too expensive: cost 10301 exceeds the limit of 1000.",
      extensions: { code: "QUERY_TOO_COMPLEX" },
    });
  });

  it("applies depth and cost over WebSocket too, with the same codes", async () => {
    const client = await wsClient();
    const codes = (query: string) => wsErrorCodes(client, { query });
    try {
      expect(await codes('{ cases(domain: "demo") { nodes { parent { parent { parent { parent { parent { caseId } } } } } } } }')).toEqual([
        "GRAPHQL_VALIDATION_FAILED",
      ]);
      expect(await codes('{ cases(domain: "demo", first: 5000) { nodes { caseId children { caseId } } } }')).toEqual(["QUERY_TOO_COMPLEX"]);
      expect(await codes('{ cases(domain: "demo", first: 10) { totalCount } }')).toEqual([]);
    } finally {
      await client.dispose();
    }
  });

  it("counts depth through fragments, and neither loops nor throws on a fragment cycle or an unknown fragment", async () => {
    const deep = await post(
      '{ cases(domain: "demo") { nodes { ...P } } } fragment P on Case { parent { parent { parent { parent { parent { caseId } } } } } }',
    );
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0].message).toMatch(/exceeds maximum operation depth of 6/);
    for (const query of [
      "{ me { ...F } } fragment F on User { ...F }",
      "{ me { ...F } } fragment F on User { ...G } fragment G on User { id ...F }",
      "{ me { ...Nope } }",
    ]) {
      const res = await post(query);
      expect(res.status, query).toBe(400);
      expect(new Set(codesOf(res)), query).toEqual(new Set(["GRAPHQL_VALIDATION_FAILED"]));
    }
  });

  it("a few fragments spread twice each (2^20 selections) are QUERY_TOO_COMPLEX, not an internal error", async () => {
    const res = await post(fragmentBlowUp(20));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      {
        message: "Query is too expensive: it has more than 10000 selections once its fragments are spread.",
        extensions: { code: "QUERY_TOO_COMPLEX" },
      },
    ]);
  });

  it("prices the operation that runs: operationName picks it among several", async () => {
    const document =
      'query Cheap { cases(domain: "demo", first: 10) { totalCount } } query Costly { cases(domain: "demo", first: 5000) { nodes { children { caseId } } } }';
    expect((await post(document, { operationName: "Cheap" })).status).toBe(200);
    expect(codesOf(await post(document, { operationName: "Costly" }))).toEqual(["QUERY_TOO_COMPLEX"]);
  });

  it("leaves an operation it cannot price to Apollo: no such operation is OPERATION_RESOLUTION_FAILURE, a bad variable BAD_USER_INPUT, both 400", async () => {
    for (const operationName of ["Nope", ""]) {
      const res = await post("{ me { username } }", { operationName });
      expect([res.status, codesOf(res)], operationName).toEqual([400, ["OPERATION_RESOLUTION_FAILURE"]]);
      expect(res.body.errors[0].message).toBe(`Unknown operation named "${operationName}".`);
    }
    const missing = await post('query Q($n: Int!) { cases(domain: "demo", first: $n) { totalCount } }', { variables: {} });
    expect([missing.status, missing.body.errors]).toEqual([
      400,
      [expect.objectContaining({ message: 'Variable "$n" of required type "Int!" was not provided.', extensions: { code: "BAD_USER_INPUT" } })],
    ]);
    const wrong = await post('query Q($n: Int!) { cases(domain: "demo", first: $n) { totalCount } }', { variables: { n: "ten" } });
    expect([wrong.status, codesOf(wrong)]).toEqual([400, ["BAD_USER_INPUT"]]);
    // the variables still count toward the cost once they coerce
    expect(
      codesOf(await post('query Q($n: Int!) { cases(domain: "demo", first: $n) { nodes { children { caseId } } } }', { variables: { n: 5000 } })),
    ).toEqual(["QUERY_TOO_COMPLEX"]);
  });

  it("refuses a subscription over HTTP with 400 BAD_REQUEST, before it runs", async () => {
    const res = await post('subscription { caseChanged(domain: "demo") { caseId } }');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { message: "Subscriptions are served over WebSocket (graphql-transport-ws) on /graphql.", extensions: { code: "BAD_REQUEST" } },
    ]);
  });

  it("over WebSocket, the client's mistakes that Apollo answers over HTTP get the same codes", async () => {
    const client = await wsClient();
    const codes = (payload: Payload) => wsErrorCodes(client, payload);
    try {
      expect(new Set(await codes({ query: "{ me { ...F } } fragment F on User { ...F }" }))).toEqual(new Set(["GRAPHQL_VALIDATION_FAILED"]));
      expect(await codes({ query: "{ me { username } }", operationName: "Nope" })).toEqual(["OPERATION_RESOLUTION_FAILURE"]);
      expect(await codes({ query: "query A { me { id } } query B { me { id } }" })).toEqual(["OPERATION_RESOLUTION_FAILURE"]);
      expect(await codes({ query: 'query Q($n: Int!) { cases(domain: "demo", first: $n) { totalCount } }', variables: {} })).toEqual([
        "BAD_USER_INPUT",
      ]);
      expect(await codes({ query: fragmentBlowUp(20) })).toEqual(["QUERY_TOO_COMPLEX"]);
      expect(await codes({ query: "query A { me { id } } query B { me { username } }", operationName: "B" })).toEqual([]);
    } finally {
      await client.dispose();
    }
  });

  it("F1: children(first: n) costs n times what it selects, to the limit exactly; first below 1 is BAD_USER_INPUT", async () => {
    const query = (first: number) => `{ case(domain: "demo", caseId: "${HUB_ID}") { children(first: ${first}) { caseId } } }`;
    // case 1 + children (1 + first × caseId 1)
    const within = await post(query(998));
    expect([within.status, within.body]).toEqual([200, { data: { case: null } }]);
    const over = await post(query(999));
    expect([over.status, over.body]).toEqual([
      400,
      { errors: [{ message: "Query is too expensive: cost 1001 exceeds the limit of 1000.", extensions: { code: "QUERY_TOO_COMPLEX" } }] },
    ]);
    // the other bounded lists price alike: a location's descendants, a case's extensions and forms
    for (const field of ["extensions(first: 999) { caseId }", "forms(first: 999) { id }"]) {
      expect(codesOf(await post(`{ case(domain: "demo", caseId: "${HUB_ID}") { ${field} } }`)), field).toEqual(["QUERY_TOO_COMPLEX"]);
    }
    expect(codesOf(await post(`{ location(domain: "demo", locationId: "x") { descendants(first: 999) { name } } }`))).toEqual(["QUERY_TOO_COMPLEX"]);
    const editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    const created = await app
      .http()
      .post("/a/demo/api/case/v2/")
      .set("Authorization", editor.authorization)
      .send({ case_type: "hub", case_name: "hub", owner_id: "o" });
    const caseId = created.body.case.case_id;
    // (first: 1001 would cost more than this app's limit: test/graphql/fan-out.test.ts meets it under the default one)
    for (const first of [0, -1]) {
      const res = await post(`{ case(domain: "demo", caseId: "${caseId}") { children(first: ${first}) { caseId } } }`);
      expect(res.body.errors, String(first)).toEqual([
        expect.objectContaining({ message: "'first' must be between 1 and 1000.", extensions: { code: "BAD_USER_INPUT" } }),
      ]);
    }
  });

  it("F1: casesByIds costs per requested id, case ids and external ids alike, given inline or as variables", async () => {
    const ids = Array.from({ length: 250 }, () => HUB_ID);
    // 1 + 500 ids × (entries 1 + case (1 + caseId 1))
    const inline = await post(
      `{ casesByIds(domain: "demo", caseIds: ${JSON.stringify(ids)}, externalIds: ${JSON.stringify(ids)}) { entries { case { caseId } } } }`,
    );
    expect([inline.status, inline.body]).toEqual([
      400,
      { errors: [{ message: "Query is too expensive: cost 1501 exceeds the limit of 1000.", extensions: { code: "QUERY_TOO_COMPLEX" } }] },
    ]);
    const byVariables = await post('query Q($ids: [String!]) { casesByIds(domain: "demo", caseIds: $ids) { entries { case { caseId } } } }', {
      variables: { ids: [...ids, ...ids] },
    });
    expect(byVariables.body.errors).toEqual([
      { message: "Query is too expensive: cost 1501 exceeds the limit of 1000.", extensions: { code: "QUERY_TOO_COMPLEX" } },
    ]);
    const few = await post(`{ casesByIds(domain: "demo", caseIds: ${JSON.stringify(ids.slice(0, 10))}) { missingRecords } }`);
    expect([few.status, few.body]).toEqual([200, { data: { casesByIds: { missingRecords: 10 } } }]);
  });

  it("runs a query within both limits", async () => {
    const res = await post('{ cases(domain: "demo", first: 10) { totalCount nodes { caseId } } }');
    expect(res.status).toBe(200);
    expect(res.body.data.cases.totalCount).toBe(0);
  });

  it("blocks a GET query with the Basic credentials a browser keeps and no preflight header (CSRF prevention), and serves it with one", async () => {
    const query = encodeURIComponent("{ me { username } }");
    const credentials = basic(user.username, user.password);
    const blocked = await app.http().get(`/graphql?query=${query}`).set("Authorization", credentials);
    expect(blocked.status).toBe(400);
    const allowed = await app.http().get(`/graphql?query=${query}`).set("Authorization", credentials).set("apollo-require-preflight", "true");
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.me.username).toBe(user.username);
  });

  it("refuses a mutation over GET", async () => {
    const query = encodeURIComponent('mutation { createDomain(name: "x") { id } }');
    const res = await app.http().get(`/graphql?query=${query}`).set("Authorization", user.authorization).set("apollo-require-preflight", "true");
    expect(res.status).toBe(405);
  });

  /** The error codes a one-off WebSocket client of `user` gets for `query`. */
  async function wsCodesOf(query: string) {
    const client = createClient({
      url: await wsUrl(app),
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: user.authorization },
      retryAttempts: 0,
      lazy: true,
    });
    try {
      return await wsErrorCodes(client, { query });
    } finally {
      await client.dispose();
    }
  }

  it("CONTRACT §5 limits: a document of more than GRAPHQL_MAX_TOKENS tokens is refused as it is parsed, over HTTP and WebSocket", async () => {
    const huge = `{ ${"__typename ".repeat(20_001)}}`;
    const res = await post(huge);
    expect([res.status, res.body.errors]).toEqual([
      400,
      [
        expect.objectContaining({
          // graphql-js's own words ("more that")
          message: expect.stringMatching(/^Syntax Error: Document contains more tha[nt] 20000 tokens/),
          extensions: { code: "GRAPHQL_PARSE_FAILED" },
        }),
      ],
    ]);
    // within the token limit it is parsed (and then refused by the other limits)
    const parsed = codesOf(await post(`{ ${"__typename ".repeat(19_990)}}`));
    expect(parsed.length).toBeGreaterThan(0);
    expect(parsed).not.toContain("GRAPHQL_PARSE_FAILED");
    expect(await wsCodesOf(huge)).toEqual(["GRAPHQL_PARSE_FAILED"]);
  });

  it("CONTRACT §5 limits: an operation with more than GRAPHQL_MAX_DIRECTIVES directives (graphql-armor), fragments included, is GRAPHQL_VALIDATION_FAILED", async () => {
    const fields = (n: number, prefix = "f") => Array.from({ length: n }, (_, i) => `${prefix}${i}: __typename @include(if: true)`).join(" ");
    expect((await post(`{ ${fields(50)} }`)).status).toBe(200);
    const res = await post(`{ ${fields(40)} ...F } fragment F on Query { ${fields(11, "g")} }`);
    expect([res.status, res.body.errors]).toEqual([
      400,
      [{ message: "Directives limit of 50 exceeded, found 51.", extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }],
    ]);
    expect(await wsCodesOf(`{ ${fields(51)} }`)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
  });

  it("CONTRACT §5 limits: GRAPHQL_MAX_TOKENS and GRAPHQL_MAX_DIRECTIVES are configurable", async () => {
    const small = await build({ graphqlMaxTokens: 40, graphqlMaxDirectives: 1 });
    try {
      const admin = await createUser(small, { superuser: true });
      const send = (query: string) => small.http().post("/graphql").set("Authorization", admin.authorization).send({ query });
      expect(codesOf(await send(`{ ${"__typename ".repeat(39)}}`))).toEqual(["GRAPHQL_PARSE_FAILED"]);
      expect(codesOf(await send("{ a: __typename @skip(if: false) }"))).toEqual([]);
      expect(codesOf(await send("{ __typename @skip(if: false) ...F } fragment F on Query { __typename @skip(if: false) }"))).toEqual([
        "GRAPHQL_VALIDATION_FAILED",
      ]);
    } finally {
      await small.close();
    }
    expect(loadConfig({ GRAPHQL_MAX_TOKENS: "500", GRAPHQL_MAX_DIRECTIVES: "3" })).toMatchObject({ graphqlMaxTokens: 500, graphqlMaxDirectives: 3 });
  });
});
