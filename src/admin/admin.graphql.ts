/**
 * Administration in GraphQL: the resolvers, the Node types `User`, `Domain` and `ApiKey`, and the service
 * resolvers reach them through (no loaders). The gateway (src/gateway/features.ts) takes
 * `adminGraphQL`; the `declare module` lines add the feature's members to the kit's context.
 */
import type { GraphQLFeature } from "../graphql/feature.ts";
import { ADMIN_NODES, AdminResolver, ApiKeyResolver, DomainResolver } from "./admin.resolver.ts";
import type { AdminService } from "./admin.service.ts";

declare module "../graphql/context.ts" {
  interface ResolverServices {
    admin: AdminService;
  }
}

declare module "../graphql/node.ts" {
  interface NodeTypes {
    User: true;
    Domain: true;
    ApiKey: true;
  }
}

export const adminGraphQL = {
  resolvers: [AdminResolver, DomainResolver, ApiKeyResolver],
  nodes: ADMIN_NODES,
} satisfies GraphQLFeature;
