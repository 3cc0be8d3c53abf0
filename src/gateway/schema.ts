/**
 * The gateway's schema: built by type-graphql from every listed feature's resolvers and
 * `Query.node`'s, under the kit's budget, with the root types described; with FEDERATION=true,
 * served as an Apollo Federation 2 subgraph (federation.ts).
 */
import "reflect-metadata";
import { lexicographicSortSchema, printSchema, type GraphQLInterfaceType, type GraphQLSchema } from "graphql";
import { buildSchema, type NonEmptyArray } from "type-graphql";
import { createLocalPubSub } from "../events/bus.ts";
import { enforceBudget } from "../graphql/budget.ts";
import { nodeTypeOf } from "../graphql/node.ts";
import type { GraphQLFeature } from "../graphql/feature.ts";
import { DateTimeISOScalar } from "../graphql/scalars.ts";
import { GATEWAY_SUBGRAPH } from "./federation.ts";
import { FEATURES } from "./features.ts";
import { NodeResolver } from "./node.resolver.ts";

// biome-ignore lint/complexity/noBannedTypes: type-graphql takes its resolver classes as Function
const RESOLVERS: NonEmptyArray<Function> = [NodeResolver, ...FEATURES.flatMap((feature: GraphQLFeature) => feature.resolvers)];

export interface GatewaySchemaOptions {
  /** an Apollo Federation 2 subgraph (FEDERATION=true): `@key`s, `_service` and `_entities` besides the same schema */
  federation?: boolean;
}

/**
 * Subscriptions subscribe through the PubSub of the request's services (after authorising), so the
 * schema does not depend on a process: type-graphql only insists that some PubSub is given.
 */
export async function buildGatewaySchema({ federation = false }: GatewaySchemaOptions = {}): Promise<GraphQLSchema> {
  const built = await buildSchema({
    resolvers: RESOLVERS,
    pubSub: createLocalPubSub(),
    validate: false,
    scalarsMap: [{ type: Date, scalar: DateTimeISOScalar }],
  });
  describeRootTypes(built);
  // the subgraph is built from the schema's SDL, so it takes the descriptions above; the budget
  // wraps the resolvers of the schema that is served
  // (@apollo/subgraph loaded only then: a server that is no subgraph never needs it)
  const schema = federation ? (await import("../graphql/federation.ts")).subgraphSchema(built, GATEWAY_SUBGRAPH) : built;
  // every operation runs under its context's budget (objects produced, time)
  enforceBudget(schema);
  // type-graphql wraps resolveType in an async function; compiled execution (graphql-jit) needs the
  // type's name at once, and graphql-js takes either
  (schema.getType("Node") as GraphQLInterfaceType).resolveType = nodeTypeOf;
  return schema;
}

/** The root types' descriptions (CONTRACT §7.3: every type has one); type-graphql has no option for them. */
function describeRootTypes(schema: GraphQLSchema): void {
  const query = schema.getQueryType();
  const mutation = schema.getMutationType();
  const subscription = schema.getSubscriptionType();
  if (query) query.description = "Reads: cases, locations, apps, multimedia jobs, users and any object by its global id (`node`).";
  if (mutation) mutation.description = "Writes: cases, locations, app imports and multimedia uploads, and the superuser's administration.";
  if (subscription)
    subscription.description = "Live events over WebSocket (`graphql-transport-ws` on /graphql): case changes and multimedia progress.";
}

/** The SDL committed as schema.graphql: sorted, so that it changes only when the schema does. */
export function schemaSdl(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
