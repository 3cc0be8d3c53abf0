/**
 * Apps in GraphQL: the resolvers, the Node types `App` and `AppVersion`, the per-request app
 * loaders, and the service resolvers reach them through. The gateway (src/gateway/features.ts)
 * takes `appGraphQL`; the `declare module` lines add the feature's members to the kit's context.
 */
import type { GraphQLFeature } from "../graphql/feature.ts";
import { createAppLoaders, type AppLoaders } from "./app.loaders.ts";
import { APP_NODES, AppResolver, AppVersionResolver } from "./app.resolver.ts";
import type { AppService } from "./app.service.ts";

declare module "../graphql/context.ts" {
  interface ResolverServices {
    apps: AppService;
  }
  interface Loaders {
    apps: AppLoaders;
  }
}

declare module "../graphql/node.ts" {
  interface NodeTypes {
    App: true;
    AppVersion: true;
  }
}

export const appGraphQL = {
  resolvers: [AppResolver, AppVersionResolver],
  nodes: APP_NODES,
  loaders: { apps: (principal, services) => createAppLoaders(principal, services.apps) },
} satisfies GraphQLFeature;
