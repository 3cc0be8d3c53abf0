import { execute, parse, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.ts";
import { CompiledExecution } from "../../src/graphql/compiled-execution.ts";
import { createContext } from "../../src/gateway/context.ts";
import { formatError } from "../../src/graphql/errors.ts";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";
import { connectWs, type WsTestClient } from "../helpers/ws.ts";

/**
 * One executor behind both transports: queries and mutations over HTTP and over WebSocket, and
 * each subscription event, run compiled (graphql-jit, src/graphql/compiled-execution.ts). The
 * same document with the same variables must get the same answer on both transports and as
 * graphql-js's interpreter gives it, byte for byte: data and its key order, errors with their
 * messages, paths, locations and codes, nulls where a field failed.
 */

let app: CaseTestApp;
let ws: WsTestClient;
let schema: GraphQLSchema;
let editor: Principal;
const ids: Record<string, string> = {};

beforeAll(async () => {
  app = await buildCaseApp();
  const household = await app.createCase({ case_type: "household", external_id: "hh-1", properties: { village: "north" } });
  const child = await app.createCase({
    case_type: "patient",
    properties: { age: "7", village: "north" },
    indices: { parent: { case_id: household.case_id, case_type: "household", relationship: "child" } },
  });
  expect((await app.put(child.case_id, { close: true })).status).toBe(200);
  ids.household = household.case_id;
  ids.child = child.case_id;
  ws = await connectWs(app, app.editor.authorization);
  schema = await buildGatewaySchema();
  editor = await app.services.admission.authenticate({ authorization: app.editor.authorization, method: "POST", uri: "/graphql" });
});

/** `args` run by graphql-js's interpreter or by the compiled executor, as the wire formats them (errors first). */
async function answered(run: (args: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult, args: Omit<ExecutionArgs, "contextValue">) {
  const { graphqlMaxResultObjects: maxObjects, graphqlMaxExecutionMs: maxMs, graphqlMaxResultBytes: maxBytes } = app.services.config;
  const result = await run({ ...args, contextValue: createContext(editor, app.services, { maxObjects, maxMs, maxBytes }) });
  return JSON.stringify(result.errors ? { errors: result.errors.map((e) => formatError(e.toJSON(), e)), data: result.data } : { data: result.data });
}
afterAll(async () => {
  await ws.dispose();
  await app.close();
});

const FULL_CASE = `id caseId caseName caseType closed dateClosed dateOpened domain externalId indexedOn lastModified ownerId
  properties serverLastModified indices { name caseType caseId relationship } parent { caseId caseName } children { caseId }
  openedBy { userId username }`;

const DOCUMENTS: [string, string, Record<string, unknown>?][] = [
  [
    "a page of cases with every field, cursors and page info",
    `{ cases(domain: "demo", first: 10) { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
       edges { cursor node { ${FULL_CASE} } } } }`,
  ],
  [
    "aliases, a filter, variables with a default",
    `query ($n: Int = 1, $types: [String!]) { a: cases(domain: "demo", first: $n) { totalCount nodes { caseName } }
       b: cases(domain: "demo", first: 5, filter: { caseType: $types }) { nodes { caseName closed } } }`,
    { types: ["patient"] },
  ],
  [
    "the Node interface: fragments, __typename, an id nobody can see",
    `query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on Case { caseId caseType } ...U } me { ...U } }
     fragment U on User { username isActive }`,
  ],
  ["@skip and @include", `query ($yes: Boolean!) { me { username id @include(if: $yes) isActive @skip(if: $yes) } }`, { yes: true }],
  ["a refused field beside an answered one (partial data)", `{ me { username } domains { name } }`],
  ["an unknown domain", `{ cases(domain: "nowhere", first: 1) { totalCount } }`],
  ["introspection", `{ __type(name: "Case") { name kind fields { name type { kind name ofType { kind name } } } } }`],
];

describe("both transports run one executor, which answers as graphql-js does", () => {
  it.each(DOCUMENTS)("%s", async (_name, query, variables) => {
    const vars = { ...variables, ...(query.includes("$ids") ? { ids: [] as string[] } : {}) };
    if (query.includes("$ids")) {
      const page = await app
        .http()
        .post("/graphql")
        .set("Authorization", app.editor.authorization)
        .send({ query: `{ cases(domain: "demo", first: 2) { nodes { id } } }` });
      vars.ids = [...page.body.data.cases.nodes.map((n: { id: string }) => n.id), "Q2FzZTpub3doZXJl"];
    }
    const http = await app.http().post("/graphql").set("Authorization", app.editor.authorization).send({ query, variables: vars });
    const overWs = await ws.run(query, vars);
    expect(JSON.stringify(http.body)).toBe(JSON.stringify(overWs));
    expect(http.body.data ?? http.body.errors).toBeTruthy();
    const interpreted = await answered(execute, { schema, document: parse(query), variableValues: vars });
    expect(JSON.stringify(overWs)).toBe(interpreted);
  });

  it("a subscription event: its selection run on the event as graphql-js runs it", async () => {
    const document = parse(`subscription ($d: String!) { caseChanged(domain: $d) { __typename caseId caseType domain formId } }`);
    const event = { domain: "demo", caseId: ids.child, caseType: "patient", formId: "f-1" };
    const args = { schema, document, rootValue: event, variableValues: { d: "demo" } };
    const compiled = await answered(new CompiledExecution(schema).execute, args);
    expect(compiled).toBe(await answered(execute, args));
    expect(JSON.parse(compiled)).toEqual({ data: { caseChanged: { __typename: "CaseChange", ...event } } });
  });
});
