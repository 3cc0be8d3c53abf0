/**
 * Multimedia in GraphQL: the resolvers (an app's multimedia fields among them), the Node types
 * `MultimediaJob` and `MultimediaFile`, the per-request multimedia loaders, and the services
 * resolvers reach them through. The gateway (src/gateway/features.ts) takes `multimediaGraphQL`;
 * the `declare module` lines add the feature's members to the kit's context.
 */
import type { GraphQLFeature } from "../graphql/feature.ts";
import type { BlobStore } from "./blob-store.ts";
import type { MultimediaJobService } from "./job.service.ts";
import { createMultimediaLoaders, type MultimediaLoaders } from "./multimedia.loaders.ts";
import { AppMultimediaResolver, MULTIMEDIA_NODES, MultimediaFileResolver, MultimediaResolver } from "./multimedia.resolver.ts";

declare module "../graphql/context.ts" {
  interface ResolverServices {
    multimediaJobs: MultimediaJobService;
    /** where an upload is spooled before the service reads it */
    blobs: Pick<BlobStore, "tempDir">;
  }
  interface Loaders {
    multimedia: MultimediaLoaders;
  }
}

declare module "../graphql/node.ts" {
  interface NodeTypes {
    MultimediaJob: true;
    MultimediaFile: true;
  }
}

export const multimediaGraphQL = {
  resolvers: [MultimediaResolver, MultimediaFileResolver, AppMultimediaResolver],
  nodes: MULTIMEDIA_NODES,
  loaders: { multimedia: (principal, services) => createMultimediaLoaders(principal, services.multimediaJobs) },
} satisfies GraphQLFeature;
