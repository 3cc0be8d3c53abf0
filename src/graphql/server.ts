import type { Server } from "node:http";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type Router } from "express";
import { parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs, type GraphQLError, type GraphQLSchema } from "graphql";
import { graphqlUploadExpress } from "graphql-upload-ts";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import type { Principal } from "../auth/principal.ts";
import { DomainError } from "../errors.ts";
import { log } from "../log.ts";
import type { Services } from "../services.ts";
import { createContext, type GraphQLContext } from "./context.ts";
import { formatError } from "./errors.ts";
import { costError, costLimitPlugin, depthRule, queryCost } from "./limits.ts";

const WS_MAX_PAYLOAD = 1024 * 1024;

export interface GraphQLEndpoint {
  router: Router;
  /** stops accepting subscriptions and closes the open ones */
  dispose(): Promise<void>;
}

/** GraphQL over HTTP (Apollo) and over WebSocket (graphql-ws), on /graphql, same auth and limits. */
export async function createGraphQLEndpoint(
  schema: GraphQLSchema,
  services: Services,
  httpServer: Server,
): Promise<GraphQLEndpoint> {
  const { config, authenticator } = services;
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: WS_MAX_PAYLOAD });
  const subscriptions = useServer<Record<string, unknown>, { principal?: Principal }>(
    {
      schema,
      async onConnect(ctx) {
        const authorization = ctx.connectionParams?.Authorization ?? ctx.connectionParams?.authorization;
        try {
          ctx.extra.principal = await authenticator.authenticate({
            authorization: typeof authorization === "string" ? authorization : undefined,
            method: "GET",
            uri: "/graphql",
          });
          return true;
        } catch {
          return false; // closes with 4403 Forbidden
        }
      },
      onSubscribe(ctx, _id, payload): ExecutionArgs | readonly GraphQLError[] {
        let document: DocumentNode;
        try {
          document = parse(payload.query);
        } catch (error) {
          return [error as GraphQLError];
        }
        const errors = validate(schema, document, [...specifiedRules, depthRule(config.graphqlMaxDepth)]);
        if (errors.length) return errors;
        const variableValues = payload.variables ?? undefined;
        const cost = queryCost(schema, document, payload.operationName, variableValues);
        if (cost > config.graphqlMaxCost) return [costError(cost, config.graphqlMaxCost)];
        const contextValue = createContext(ctx.extra.principal!, services);
        return { schema, document, variableValues, operationName: payload.operationName, contextValue };
      },
      // graphql-ws does not run Apollo's formatError: give subscription errors the same codes.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON(), e)) } : result,
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => formatError(e.toJSON(), e)),
    },
    wsServer,
  );

  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError,
    introspection: true,
    csrfPrevention: true,
    validationRules: [depthRule(config.graphqlMaxDepth)],
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      ApolloServerPluginLandingPageDisabled(),
      costLimitPlugin(config.graphqlMaxCost),
    ],
  });
  await apollo.start();

  const router = express.Router();
  router.use(
    "/graphql",
    async (req, res, next) => {
      try {
        res.locals.principal = await authenticator.authenticate({
          authorization: req.headers.authorization,
          method: req.method,
          uri: req.originalUrl,
        });
        next();
      } catch (error) {
        if (!(error instanceof DomainError)) return next(error);
        for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
        res.status(error.status).json({ errors: [{ message: error.message, extensions: { code: error.code } }] });
      }
    },
    graphqlUploadExpress({ maxFileSize: config.uploadLimitBytes, maxFiles: 10 }),
    express.json({ limit: config.bodyLimitBytes }),
    expressMiddleware(apollo, {
      context: async ({ res }): Promise<GraphQLContext> => createContext(res.locals.principal as Principal, services),
    }),
  );

  return {
    router,
    async dispose() {
      await subscriptions.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
      await apollo.stop().catch((error: unknown) => log.error("apollo stop failed", { error }));
    },
  };
}

