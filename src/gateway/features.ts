/**
 * The features the GraphQL gateway is assembled from: the one list a new feature joins. Each
 * feature's `*.graphql.ts` says what it brings (resolvers, Node fetchers, loaders); the schema
 * (schema.ts), `Query.node` (node.resolver.ts) and each request's context (context.ts) are made
 * from this list, and the kit (src/graphql) names no feature.
 */
// The order in which the features' modules load here is the order of the root fields in
// introspection (type-graphql lists them as the resolver classes are declared): keep it.
import { adminGraphQL } from "../admin/admin.graphql.ts";
import { appGraphQL } from "../apps/app.graphql.ts";
import { caseGraphQL } from "../cases/case.graphql.ts";
import type { GraphQLContext, Loaders } from "../graphql/context.ts";
import type { GraphQLFeature, LoaderFactories } from "../graphql/feature.ts";
import { registerNodeTypes, type NodeFetcher, type NodeTypeName } from "../graphql/node.ts";
import { locationGraphQL } from "../locations/location.graphql.ts";
import { multimediaGraphQL } from "../multimedia/multimedia.graphql.ts";

export const FEATURES = [adminGraphQL, locationGraphQL, caseGraphQL, appGraphQL, multimediaGraphQL] as const;

/** Each Node type's fetcher, from the feature that owns the type. */
export const NODE_FETCHERS: Partial<Record<NodeTypeName, NodeFetcher<GraphQLContext>>> = Object.assign(
  {},
  ...FEATURES.map((feature: GraphQLFeature) => feature.nodes),
);

// a global id names exactly the types that have a fetcher (node.ts reads no other)
registerNodeTypes(Object.keys(NODE_FETCHERS) as NodeTypeName[]);

/**
 * Compiles only when every member of `Loaders` is made by a listed feature: a feature that adds
 * loaders to the context but registers no factory for them, or is missing from FEATURES, fails here
 * with the loaders' name.
 */
// biome-ignore lint/correctness/noUnusedVariables: a check at compile time, never used as a type
type EveryLoaderIsMade = Unmade<Exclude<keyof Loaders, LoadersOf<(typeof FEATURES)[number]>>>;
type LoadersOf<Feature> = Feature extends { loaders: infer Made } ? keyof Made : never;
type Unmade<Names extends never> = Names;

/** How each feature's loaders are made, by the loaders' name. */
export const LOADER_FACTORIES = Object.assign({}, ...FEATURES.map((feature: GraphQLFeature) => feature.loaders)) as LoaderFactories;
