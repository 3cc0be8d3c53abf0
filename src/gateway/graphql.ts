/** The gateway's GraphQL endpoint: the kit's two transports (graphql/http.ts, graphql/ws.ts) given each request's context. */
import type { IncomingMessage, Server } from "node:http";
import type { KeyValueCache } from "@apollo/utils.keyvaluecache";
import type { Router } from "express";
import type { GraphQLSchema } from "graphql";
import type { Admission } from "../admission/admission.ts";
import type { Principal } from "../auth/principal.ts";
import type { Config } from "../config.ts";
import type { ResolverServices } from "../graphql/context.ts";
import { createHttpEndpoint } from "../graphql/http.ts";
import type { IdeExternalSignIn } from "../graphql/ide/ide.ts";
import { loadTrustedDocuments } from "../graphql/trusted-documents.ts";
import { createWsEndpoint } from "../graphql/ws.ts";
import { createContext } from "./context.ts";

export interface GraphQLEndpoint {
  router: Router;
  /** stops accepting subscriptions and closes the open ones */
  dispose(): Promise<void>;
}

/**
 * GraphQL on /graphql over HTTP (Apollo: http.ts) and over WebSocket (graphql-ws: ws.ts), both
 * admitted by the one admission pipeline and held to the same limits. `services` only builds each
 * request's context (resolvers reach the domain through it); `ideSignIn` is a sign-in the IDE
 * offers beside its own form.
 */
export async function createGraphQLEndpoint(
  schema: GraphQLSchema,
  services: ResolverServices & { config: Config; persistedQueries: KeyValueCache<string> },
  httpServer: Server,
  admission: Admission,
  addressOf: (request: IncomingMessage) => string | undefined,
  ideSignIn?: IdeExternalSignIn,
): Promise<GraphQLEndpoint> {
  const { graphqlMaxResultObjects: maxObjects, graphqlMaxExecutionMs: maxMs, graphqlMaxResultBytes: maxBytes } = services.config;
  const context = (principal: Principal) => createContext(principal, services, { maxObjects, maxMs, maxBytes });
  const { persistedOperations, persistedOperationsManifest } = services.config;
  const trustedDocuments = persistedOperations === "only" ? loadTrustedDocuments(persistedOperationsManifest!) : undefined;
  const { pubsub, config, persistedQueries } = services;
  const options = { schema, httpServer, admission, pubsub, config, addressOf, context, persistedQueries, trustedDocuments };
  const ws = createWsEndpoint(options);
  const http = await createHttpEndpoint({ ...options, ideSignIn });
  return {
    router: http.router,
    async dispose() {
      await ws.dispose();
      await http.stop();
    },
  };
}
