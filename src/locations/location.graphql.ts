/**
 * Locations in GraphQL: the resolvers, the Node types `Location` and `LocationType`, the
 * per-request location loaders, and the services resolvers reach them through. The gateway
 * (src/gateway/features.ts) takes `locationGraphQL`; the `declare module` lines add the feature's
 * members to the kit's context.
 */
import type { GraphQLFeature } from "../graphql/feature.ts";
import { createLocationLoaders, type LocationLoaders } from "./location.loaders.ts";
import { LOCATION_NODES, LocationResolver } from "./location.resolver.ts";
import type { LocationService } from "./location.service.ts";
// after location.resolver.ts: type-graphql lists root fields in the order resolvers are declared
import { LocationTypeResolver } from "./location-type.resolver.ts";
import type { LocationTypeService } from "./location-type.service.ts";

declare module "../graphql/context.ts" {
  interface ResolverServices {
    locations: LocationService;
    locationTypes: LocationTypeService;
  }
  interface Loaders {
    locations: LocationLoaders;
  }
}

declare module "../graphql/node.ts" {
  interface NodeTypes {
    Location: true;
    LocationType: true;
  }
}

export const locationGraphQL = {
  resolvers: [LocationTypeResolver, LocationResolver],
  nodes: LOCATION_NODES,
  loaders: { locations: (principal, services) => createLocationLoaders(principal, services.locations) },
} satisfies GraphQLFeature;
