import { graphql as execute, parse, print, type GraphQLObjectType, type GraphQLSchema, type OperationTypeNode } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";
import { globalId } from "../../src/graphql/node.ts";
import { composeWithVisits, executeIn, executePlan, fetchesOf, GATEWAY, planOf, VISITS, visitsSubgraph } from "../helpers/federation.ts";

/**
 * FEDERATION=true: the gateway's subgraph SDL (`_service { sdl }`) composes with another team's
 * subgraph that extends its entities by key (`@apollo/composition`, as `rover supergraph compose`
 * and GraphOS compose), and the supergraph's query plans (`@apollo/query-planner`, Apollo
 * Gateway's planner) fetch the gateway's fields through `_entities` with `{ __typename id }`
 * representations. The same plans run against a real server process: test/process/federation.test.ts.
 */

let sdl: string;

beforeAll(async () => {
  const schema = await buildGatewaySchema({ federation: true });
  const answer = await execute({ schema, source: "{ _service { sdl } }" });
  sdl = (answer.data as { _service: { sdl: string } })._service.sdl;
});

describe("federation: composition of the gateway's subgraph", () => {
  it("composes with a subgraph that extends Case, Location, App and MultimediaJob by key: no errors, no hints", () => {
    const composed = composeWithVisits(sdl);
    expect(composed.errors?.map((e) => e.message)).toBeUndefined();
    // a hint points at something composition had to guess or reconcile: none here
    expect((composed.hints ?? []).map((hint) => `${hint.definition.code}: ${hint.message}`)).toEqual([]);
    expect(composed.supergraphSdl).toContain('join__type(graph: GATEWAY, key: "id")');
    expect(composed.supergraphSdl).toContain('join__type(graph: VISITS, key: "id")');
  });

  it("the supergraph serves every root field of the plain schema, the other subgraph's fields sit on the gateway's types, and no federation machinery shows", async () => {
    const composed = composeWithVisits(sdl);
    if (composed.errors) throw composed.errors[0];
    const api = composed.schema.toAPISchema().toGraphQLJSSchema();
    const plain = await buildGatewaySchema();
    for (const operation of ["query", "mutation", "subscription"] as const) {
      const names = (schema: GraphQLSchema) => Object.keys(schema.getRootType(operation as OperationTypeNode)?.getFields() ?? {});
      expect(names(api), operation).toEqual(expect.arrayContaining(names(plain)));
    }
    expect(Object.keys(api.getQueryType()!.getFields())).not.toContain("_entities");
    expect(Object.keys(api.getQueryType()!.getFields())).not.toContain("_service");
    const caseType = api.getType("Case") as GraphQLObjectType;
    expect(Object.keys(caseType.getFields())).toEqual(expect.arrayContaining(["id", "caseId", "caseName", "visitNotes"]));
  });

  it("a supergraph query reaches the gateway's fields through _entities, each representation `{ __typename id }`, for each of the four types", () => {
    const composed = composeWithVisits(sdl);
    if (composed.errors) throw composed.errors[0];
    const cases = [
      ["{ visitsDue { visitNotes caseName } }", "Case", "caseName"],
      ["{ plannedAt { visitsPlanned name } }", "Location", "name"],
      ["{ reviewedApps { reviewedBy name } }", "App", "name"],
      ["{ checkedUploads { checkedBy state } }", "MultimediaJob", "state"],
    ] as const;
    for (const [query, type, field] of cases) {
      const [first, second] = fetchesOf(planOf(composed.supergraphSdl, query).node);
      expect(first?.serviceName).toBe(VISITS);
      expect(second?.serviceName).toBe(GATEWAY);
      expect(print(parse(second!.operation))).toBe(
        print(parse(`query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on ${type} { ${field} } } }`)),
      );
      expect(second?.requires).toEqual([
        {
          kind: "InlineFragment",
          typeCondition: type,
          selections: [
            { kind: "Field", name: "__typename" },
            { kind: "Field", name: "id" },
          ],
        },
      ]);
    }
  });

  it("the plan's first fetch runs on the other subgraph and hands the gateway the global ids it holds as representations", async () => {
    const composed = composeWithVisits(sdl);
    if (composed.errors) throw composed.errors[0];
    const id = globalId("Case", "demo", "3f1c1d2e-0000-4000-8000-000000000001");
    const visits = visitsSubgraph({ cases: [id] });
    const plan = planOf(composed.supergraphSdl, "{ visitsDue { visitNotes caseName } }");
    const sent: unknown[] = [];
    const result = await executePlan(plan, async (service, operation, variables) => {
      if (service === VISITS) return executeIn(visits, operation, variables);
      sent.push(variables);
      return { data: { _entities: [{ caseName: "Ann" }] } };
    });
    expect(sent).toEqual([{ representations: [{ __typename: "Case", id }] }]);
    expect(result.data).toEqual({ visitsDue: [{ __typename: "Case", id, visitNotes: [expect.any(String)], caseName: "Ann" }] });
  });
});
