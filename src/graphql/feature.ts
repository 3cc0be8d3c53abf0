/**
 * What a feature hands the gateway to take part in GraphQL: its resolver classes, how `Query.node`
 * fetches each of its Node types, and how its per-request loaders are made. Each feature exports one
 * from its `*.graphql.ts`, beside the `declare module` lines that add its members to the context
 * (context.ts) and its type names to `NodeTypes` (node.ts); src/gateway/features.ts lists them.
 */
import type { Principal } from "../auth/principal.ts";
import type { GraphQLContext, Loaders, ResolverServices } from "./context.ts";
import type { NodeFetcher, NodeTypeName } from "./node.ts";

/** How each of a feature's loaders is made for one request. */
export type LoaderFactories = { [K in keyof Loaders]: (principal: Principal, services: ResolverServices) => Loaders[K] };

export interface GraphQLFeature {
  /** type-graphql resolver classes, in the order the schema is built from */
  // biome-ignore lint/complexity/noBannedTypes: type-graphql takes its resolver classes as Function
  resolvers: readonly Function[];
  /** the fetcher of each Node type the feature owns */
  nodes?: { [T in NodeTypeName]?: NodeFetcher<GraphQLContext> };
  /** the loaders the feature adds to `Loaders` */
  loaders?: Partial<LoaderFactories>;
}
