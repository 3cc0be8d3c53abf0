import "reflect-metadata";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import { AdminResolver } from "../admin/admin.resolver.ts";
import { LocationTypeResolver } from "../locations/location-type.resolver.ts";
import type { PubSub } from "./pubsub.ts";

export const RESOLVERS = [AdminResolver, LocationTypeResolver] as const;

export function buildGatewaySchema(pubSub?: PubSub): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [...RESOLVERS],
    pubSub: pubSub as never,
    validate: false,
  });
}

/** The SDL committed as schema.graphql: sorted, so that it changes only when the schema does. */
export function schemaSdl(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
