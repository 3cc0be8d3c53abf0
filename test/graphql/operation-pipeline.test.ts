import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Stage } from "../../src/graphql/operation-pipeline.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { connectWs, until, type WsTestClient } from "../helpers/ws.ts";

/**
 * One admission pipeline for both transports (src/graphql/operation-pipeline.ts): a stage added to
 * its one list, or a limit set once, refuses an operation over HTTP and over WebSocket alike, each
 * in its transport's form (HTTP: a status and `{errors}`; graphql-ws: the subscribe's error
 * message), with the same message and code.
 */

const REFUSED = "Operations named Refused do not run here.";

/** Stages of every kind a later limit could be, added once to the list both transports build. */
const EXTRA_STAGES: Stage[] = [
  {
    name: "no Refused operations",
    on: "operation",
    check: ({ operation }) =>
      operation.name?.value === "Refused" ? new GraphQLError(REFUSED, { extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }) : undefined,
  },
  {
    name: "no tabs",
    on: "text",
    status: 400,
    check: (query) => (query.includes("\t") ? new GraphQLError("Documents may not hold tabs.", { extensions: { code: "BAD_REQUEST" } }) : undefined),
  },
  {
    name: "no __typename on caseChanged",
    on: "document",
    rule: (context) => ({
      Field(node) {
        if (node.name.value === "caseChanged" && node.selectionSet?.selections.some((s) => s.kind === "Field" && s.name.value === "__typename")) {
          context.reportError(new GraphQLError("caseChanged selects no __typename here.", { nodes: [node] }));
        }
      },
    }),
  },
];

vi.mock("../../src/graphql/operation-pipeline.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/graphql/operation-pipeline.ts")>();
  return {
    ...actual,
    operationPipeline: (...[schema, limits, trusted]: Parameters<typeof actual.operationPipeline>) =>
      new actual.OperationPipeline(schema, limits, [...actual.operationStages(limits, trusted), ...EXTRA_STAGES]),
  };
});

let app: TestApp;
let user: TestUser;
let ws: WsTestClient;

beforeAll(async () => {
  app = await build({ graphqlMaxDepth: 2, workers: 0 });
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  ws = await connectWs(app, user.authorization);
});
afterAll(async () => {
  await ws?.dispose();
  await app?.close();
});

/** The errors a graphql-ws subscribe is refused with. */
async function wsRefusal(query: string): Promise<GraphQLFormattedError[]> {
  const live = ws.subscribe(query);
  await until(() => live.ended || live.errors.length > 0);
  return live.errors;
}

async function httpRefusal(query: string): Promise<{ status: number; errors: GraphQLFormattedError[] }> {
  const res = await app.http().post("/graphql").set("Authorization", user.authorization).send({ query });
  return { status: res.status, errors: res.body.errors };
}

const only = ({ message, extensions }: GraphQLFormattedError) => ({ message, code: extensions?.code });

describe("a stage added to the pipeline's one list refuses over HTTP and over WebSocket alike", () => {
  it("an operation stage: HTTP 400 and the subscribe's error, the same message and code", async () => {
    const http = await httpRefusal(`query Refused { me { username } }`);
    expect(http.status).toBe(400);
    expect(http.errors.map(only)).toEqual([{ message: REFUSED, code: "GRAPHQL_VALIDATION_FAILED" }]);
    const refused = await wsRefusal(`subscription Refused { caseChanged(domain: "demo") { caseId } }`);
    expect(refused.map(only)).toEqual([{ message: REFUSED, code: "GRAPHQL_VALIDATION_FAILED" }]);
  });

  it("a text stage: HTTP its status before Apollo, and the subscribe's error", async () => {
    const http = await httpRefusal(`{\tme { username } }`);
    expect(http.status).toBe(400);
    expect(http.errors).toEqual([{ message: "Documents may not hold tabs.", extensions: { code: "BAD_REQUEST" } }]);
    const refused = await wsRefusal(`subscription {\tcaseChanged(domain: "demo") { caseId } }`);
    expect(refused.map(only)).toEqual([{ message: "Documents may not hold tabs.", code: "BAD_REQUEST" }]);
  });

  it("a document stage: a validation failure on both", async () => {
    const query = `subscription { caseChanged(domain: "demo") { __typename } }`;
    const http = await httpRefusal(query);
    // over HTTP a subscription that validates is refused for its transport: here validation comes first
    expect(http.status).toBe(400);
    expect(http.errors.map(only)).toEqual([{ message: "caseChanged selects no __typename here.", code: "GRAPHQL_VALIDATION_FAILED" }]);
    expect((await wsRefusal(query)).map(only)).toEqual([{ message: "caseChanged selects no __typename here.", code: "GRAPHQL_VALIDATION_FAILED" }]);
  });
});

describe("a limit set once (GRAPHQL_MAX_DEPTH) refuses over HTTP and over WebSocket alike", () => {
  it("HTTP 400 and the subscribe's error: the same message and GRAPHQL_VALIDATION_FAILED", async () => {
    const deep = `query Deep { cases(domain: "demo", first: 1) { nodes { parent { parent { caseId } } } } }`;
    const expected = [{ message: "'Deep' exceeds maximum operation depth of 2", code: "GRAPHQL_VALIDATION_FAILED" }];
    const http = await httpRefusal(deep);
    expect(http.status).toBe(400);
    expect(http.errors.map(only)).toEqual(expected);
    const refused = await ws.run(deep);
    expect("refused" in refused && refused.refused.map(only)).toEqual(expected);
  });
});
