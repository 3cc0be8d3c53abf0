import { cacheExchange, Client, fetchExchange, subscriptionExchange } from "@urql/core";
import { createClient as createWsClient, type Client as WsClient } from "graphql-ws";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { graphql } from "../generated/gql.ts";
import { basic, build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { until } from "../helpers/ws.ts";

/**
 * CONTRACT §5 and §7.3, proven with urql against a running server: queries and mutations over HTTP
 * (fetchExchange), subscriptions over graphql-transport-ws (subscriptionExchange + graphql-ws on
 * the same /graphql), authenticated by the same header on both. And urql as it comes: its default
 * exchanges send queries as GET, which CSRF prevention lets through when they carry an
 * `Authorization` a page set itself (a browser never attaches one on its own).
 */

const CaseChanged = graphql(`
  subscription UrqlCaseChanged($domain: String!, $caseType: String) {
    caseChanged(domain: $domain, caseType: $caseType) { caseId caseType domain formId }
  }
`);

const CreateCase = graphql(`
  mutation UrqlCreateCase($domain: String!, $input: CaseInput!) {
    createCase(domain: $domain, input: $input) { xformId case { id caseId } }
  }
`);

const CaseCount = graphql(`
  query UrqlCaseCount($domain: String!, $filter: CaseFilter) {
    cases(domain: $domain, filter: $filter, first: 1) { totalCount }
  }
`);

const DOMAIN = "demo";

let app: TestApp;
let editor: TestUser;
let ws: WsClient;
let client: Client;
let base: string;

beforeEach(async () => {
  app = await build();
  await createDomain(app, DOMAIN);
  editor = await createUser(app, { domain: DOMAIN, permissions: ["access_api", "edit_data"] });
  base = await app.server.listen(0, "127.0.0.1");
  ws = createWsClient({
    url: `${base.replace("http", "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: editor.authorization },
  });
  client = new Client({
    url: `${base}/graphql`,
    // POST for queries too: urql sends queries as GET by default, which Apollo Server's CSRF prevention refuses
    preferGetMethod: false,
    fetchOptions: { headers: { Authorization: editor.authorization } },
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? "" }, sink) }),
        }),
      }),
    ],
  });
});

afterEach(async () => {
  await ws?.dispose();
  await app?.close();
});

async function createCase(caseType: string, caseName: string): Promise<{ caseId: string; xformId: string }> {
  const result = await client.mutation(CreateCase, { domain: DOMAIN, input: { caseType, caseName, ownerId: "o" } }).toPromise();
  expect(result.error).toBeUndefined();
  const written = result.data!.createCase;
  return { caseId: written.case.caseId, xformId: written.xformId };
}

describe("CONTRACT §5: urql with a graphql-ws subscription exchange", () => {
  it("§5 caseChanged events of the subscribed case type arrive, one per write, carrying the write's form", async () => {
    const events: { caseId: string; caseType: string; domain: string; formId: string }[] = [];
    const errors: unknown[] = [];
    const live = client.subscription(CaseChanged, { domain: DOMAIN, caseType: "visit" }).subscribe((result) => {
      if (result.error) errors.push(result.error);
      if (result.data) events.push(result.data.caseChanged);
    });
    // the subscription starts asynchronously: write until the first event shows it is live
    await until(
      () => events.length > 0,
      () => createCase("visit", "warm-up"),
    );
    const other = await createCase("other", "not subscribed");
    const visit = await createCase("visit", "subscribed");
    await until(() => events.some((event) => event.caseId === visit.caseId));
    live.unsubscribe();

    expect(errors).toEqual([]);
    expect(events.find((event) => event.caseId === visit.caseId)).toEqual({
      caseId: visit.caseId,
      caseType: "visit",
      domain: DOMAIN,
      formId: visit.xformId,
    });
    // events arrive in write order, so the other type's write would already be here
    expect(events.map((event) => event.caseId)).not.toContain(other.caseId);
    expect(new Set(events.map((event) => event.caseType))).toEqual(new Set(["visit"]));
  });

  it("§5 queries through urql's fetchExchange see the writes its mutations made", async () => {
    await createCase("visit", "one");
    await createCase("visit", "two");
    await createCase("other", "three");
    const result = await client.query(CaseCount, { domain: DOMAIN, filter: { caseType: ["visit"] } }).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data?.cases.totalCount).toBe(2);
  });
});

/** urql as its README sets it up: the default exchanges, queries as GET (within the URL limit); every request's method recorded. */
function defaultClient(authorization: string): { client: Client; methods: string[] } {
  const methods: string[] = [];
  const recording: typeof fetch = (input, init) => {
    methods.push(init?.method ?? "GET");
    return fetch(input, init);
  };
  const urql = new Client({
    url: `${base}/graphql`,
    exchanges: [cacheExchange, fetchExchange],
    fetch: recording,
    fetchOptions: { headers: { Authorization: authorization } },
  });
  return { client: urql, methods };
}

describe("CONTRACT §5 CSRF prevention: urql's defaults work", () => {
  it("§5 urql's default exchanges: a query goes as GET with the API key header and is answered; a mutation goes as POST", async () => {
    const { client: urql, methods } = defaultClient(editor.authorization);
    const written = await urql.mutation(CreateCase, { domain: DOMAIN, input: { caseType: "visit", caseName: "by urql", ownerId: "o" } }).toPromise();
    expect(written.error).toBeUndefined();
    const result = await urql.query(CaseCount, { domain: DOMAIN, filter: { caseType: ["visit"] } }).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data?.cases.totalCount).toBe(1);
    expect(methods).toEqual(["POST", "GET"]);
  });

  it("§5 urql's default GET with a bearer token (OAuth) is answered too", async () => {
    const clientRes = await app.services.admin.createOAuthClient(app.root, { name: "urql", grants: ["password"] });
    const token = await app.http().post("/oauth/token").type("form").send({
      grant_type: "password",
      username: editor.username,
      password: editor.password,
      client_id: clientRes.client.clientId,
      client_secret: clientRes.clientSecret,
    });
    expect(token.status).toBe(200);
    const { client: urql, methods } = defaultClient(`Bearer ${token.body.access_token}`);
    const result = await urql.query(CaseCount, { domain: DOMAIN }).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data?.cases.totalCount).toBe(0);
    expect(methods).toEqual(["GET"]);
  });

  it("§5 a GET with only the Basic credentials a browser keeps for this server (and no CSRF header) is still refused, 400", async () => {
    const { client: urql, methods } = defaultClient(basic(editor.username, editor.password));
    const result = await urql.query(CaseCount, { domain: DOMAIN }).toPromise();
    expect(methods).toEqual(["GET"]);
    expect(result.data).toBeUndefined();
    expect(result.error?.response?.status).toBe(400);
    expect(result.error?.graphQLErrors.map((error) => [error.message.split(".")[0], error.extensions.code])).toEqual([
      ["This operation has been blocked as a potential Cross-Site Request Forgery (CSRF)", "BAD_REQUEST"],
    ]);
  });
});
