/**
 * Apollo Federation around the gateway's subgraph, as a router would run it: a second subgraph
 * that references the gateway's entities by key, composition (`@apollo/composition`), query plans
 * (`@apollo/query-planner`, the planner of Apollo Gateway) and a small executor of those plans
 * that sends each fetch to its subgraph. Apollo Router itself is a binary download, unavailable
 * here; `@apollo/gateway` drags in OpenTelemetry 1.x against our 3.x (peer conflicts).
 */
import { composeServices, type CompositionResult } from "@apollo/composition";
import { operationFromDocument, Supergraph } from "@apollo/federation-internals";
import { QueryPlanner, type PlanNode, type QueryPlan, type QueryPlanSelectionNode } from "@apollo/query-planner";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { graphql, parse, type GraphQLSchema } from "graphql";
import { FEDERATION_SPEC_URL } from "../../src/graphql/federation.ts";

/** The gateway's subgraph in compositions: the name query plans send its fetches to. */
export const GATEWAY = "gateway";
/** The second subgraph. */
export const VISITS = "visits";

/**
 * Another team's subgraph: it adds a field to each of the gateway's four entities, knowing only
 * their key, and lists the ones it has something for.
 */
const VISITS_SDL = parse(`
  extend schema @link(url: "${FEDERATION_SPEC_URL}", import: ["@key"])
  type Case @key(fields: "id") { id: ID! visitNotes: [String!]! }
  type Location @key(fields: "id") { id: ID! visitsPlanned: Int! }
  type App @key(fields: "id") { id: ID! reviewedBy: String! }
  type MultimediaJob @key(fields: "id") { id: ID! checkedBy: String! }
  type Query {
    visitsDue: [Case!]!
    plannedAt: [Location!]!
    reviewedApps: [App!]!
    checkedUploads: [MultimediaJob!]!
  }
`);

/** The global ids the second subgraph has something for, by type. */
export interface VisitsData {
  cases: string[];
  locations?: string[];
  apps?: string[];
  jobs?: string[];
}

/** The second subgraph, executable, over `data`. */
export function visitsSubgraph(data: VisitsData): GraphQLSchema {
  return buildSubgraphSchema([
    {
      typeDefs: VISITS_SDL,
      resolvers: {
        Query: {
          visitsDue: () => data.cases.map((id) => ({ id, visitNotes: [`note on ${id.slice(0, 6)}`] })),
          plannedAt: () => (data.locations ?? []).map((id) => ({ id, visitsPlanned: 3 })),
          reviewedApps: () => (data.apps ?? []).map((id) => ({ id, reviewedBy: "qa" })),
          checkedUploads: () => (data.jobs ?? []).map((id) => ({ id, checkedBy: "qa" })),
        },
      },
    },
  ]);
}

/** The supergraph of the gateway's subgraph SDL (`_service { sdl }`) and the second subgraph. */
export function composeWithVisits(gatewaySdl: string): CompositionResult {
  return composeServices([
    { name: GATEWAY, typeDefs: parse(gatewaySdl), url: "http://gateway.invalid/graphql" },
    { name: VISITS, typeDefs: VISITS_SDL, url: "http://visits.invalid/graphql" },
  ]);
}

/** The query plan of `query` over a composed supergraph, as Apollo Gateway plans it. */
export function planOf(supergraphSdl: string, query: string): QueryPlan {
  const supergraph = Supergraph.build(supergraphSdl);
  const operation = operationFromDocument(supergraph.schema.toAPISchema(), parse(query));
  return new QueryPlanner(supergraph).buildQueryPlan(operation);
}

/** The fetches of a plan, in the order they run. */
export function fetchesOf(node: QueryPlan["node"]): Extract<PlanNode, { kind: "Fetch" }>[] {
  if (!node) return [];
  if (node.kind === "Fetch") return [node];
  if (node.kind === "Flatten") return fetchesOf(node.node);
  if (node.kind === "Sequence" || node.kind === "Parallel") return node.nodes.flatMap(fetchesOf);
  throw new Error(`plan node ${node.kind} is not used by these tests`);
}

/** One GraphQL request to a subgraph: its whole answer. */
export type SendToSubgraph = (
  service: string,
  operation: string,
  variables: Record<string, unknown>,
) => Promise<{ data?: Record<string, unknown> | null; errors?: unknown[] }>;

/** A subgraph executed in process (graphql-js), for `SendToSubgraph`. */
export async function executeIn(schema: GraphQLSchema, operation: string, variables: Record<string, unknown>) {
  const result = await graphql({ schema, source: operation, variableValues: variables });
  return JSON.parse(JSON.stringify(result)) as { data?: Record<string, unknown> | null; errors?: unknown[] };
}

type Json = Record<string, unknown>;

/** What a plan's fetches answered, merged as a router merges them, and every subgraph error. */
export interface PlanResult {
  data: Json;
  errors: unknown[];
  /** each entity fetch's `_entities` answer, as the subgraph sent it */
  entities: { service: string; representations: Json[]; answer: unknown }[];
}

/**
 * Runs a plan the way a router does: root fetches merge into the result; an entity fetch under a
 * Flatten sends the representations (what `requires` selects of each object at the path) and
 * merges each `_entities` answer into its object.
 */
export async function executePlan(plan: QueryPlan, send: SendToSubgraph): Promise<PlanResult> {
  const result: PlanResult = { data: {}, errors: [], entities: [] };
  await run(plan.node, result, send, []);
  return result;
}

async function run(node: QueryPlan["node"], result: PlanResult, send: SendToSubgraph, path: string[]): Promise<void> {
  if (!node) return;
  if (node.kind === "Sequence") for (const child of node.nodes) await run(child, result, send, path);
  else if (node.kind === "Parallel") await Promise.all(node.nodes.map((child) => run(child, result, send, path)));
  else if (node.kind === "Flatten") await run(node.node, result, send, node.path.map(String));
  else if (node.kind === "Fetch") {
    if (!node.requires) {
      const answer = await send(node.serviceName, node.operation, {});
      result.errors.push(...(answer.errors ?? []));
      Object.assign(result.data, answer.data ?? {});
      return;
    }
    const objects = objectsAt(result.data, path);
    const representations = objects.map((object) => represent(object, node.requires!));
    const answer = await send(node.serviceName, node.operation, { representations });
    result.errors.push(...(answer.errors ?? []));
    const found = (answer.data?._entities ?? []) as (Json | null)[];
    result.entities.push({ service: node.serviceName, representations, answer: answer.data?._entities });
    for (const [i, object] of objects.entries()) Object.assign(object, found[i] ?? {});
  } else throw new Error(`plan node ${node.kind} is not used by these tests`);
}

/** The objects at a Flatten's path (`@` stands for every item of a list). */
function objectsAt(data: unknown, path: string[]): Json[] {
  if (data === null || data === undefined) return [];
  if (!path.length) return Array.isArray(data) ? data.flatMap((item) => objectsAt(item, [])) : [data as Json];
  const [head, ...rest] = path;
  if (head === "@") return (data as unknown[]).flatMap((item) => objectsAt(item, rest));
  return objectsAt((data as Json)[head!], rest);
}

/** The representation of an object: the fields `requires` selects of it, for its type. */
function represent(object: Json, requires: QueryPlanSelectionNode[]): Json {
  const picked: Json = {};
  for (const selection of requires) {
    if (selection.kind === "Field") picked[selection.name] = object[selection.name];
    else if (selection.typeCondition === undefined || selection.typeCondition === object.__typename) {
      Object.assign(picked, represent(object, selection.selections));
    }
  }
  return picked;
}
