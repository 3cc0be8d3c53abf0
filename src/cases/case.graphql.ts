/**
 * Cases in GraphQL: the resolvers, the Node types `Case` and `Form`, the per-request case loaders,
 * and the services resolvers reach them through. The gateway (src/gateway/features.ts) takes
 * `caseGraphQL`; the `declare module` lines add the feature's members to the kit's context.
 */
import type { GraphQLFeature } from "../graphql/feature.ts";
import { createCaseLoaders, type CaseLoaders } from "./case.loaders.ts";
import type { CaseReads } from "./case.read.service.ts";
import { CASE_NODES, CaseIndexResolver, CaseResolver, FormResolver } from "./case.resolver.ts";
import type { CaseWrites } from "./case.write.service.ts";

declare module "../graphql/context.ts" {
  interface ResolverServices {
    caseReads: CaseReads;
    caseWrites: CaseWrites;
  }
  interface Loaders {
    cases: CaseLoaders;
  }
}

declare module "../graphql/node.ts" {
  interface NodeTypes {
    Case: true;
    Form: true;
  }
}

export const caseGraphQL = {
  resolvers: [CaseResolver, CaseIndexResolver, FormResolver],
  nodes: CASE_NODES,
  loaders: { cases: (principal, services) => createCaseLoaders(principal, services.caseReads) },
} satisfies GraphQLFeature;
