import type { Server } from "node:http";
import { ApolloServer, type ApolloServerPlugin } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type ErrorRequestHandler, type RequestHandler, type Response, type Router } from "express";
import {
  GraphQLError,
  OperationTypeNode,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
} from "graphql";
import { graphqlUploadExpress } from "graphql-upload-ts";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import type { Principal } from "../auth/principal.ts";
import { isDatabaseUnavailable, logOutage } from "../db/unavailable.ts";
import { DomainError } from "../errors.ts";
import { log } from "../log.ts";
import { toDomainError } from "../rest/errors.ts";
import type { Services } from "../services.ts";
import { createContext, type GraphQLContext } from "./context.ts";
import { formatError, payloadTooLargePlugin, serviceUnavailablePlugin } from "./errors.ts";
import { RateLimitedError, type RateLimiter } from "../rate-limit/rate-limit.service.ts";
import { graphqlRateLimit, operationDomains, rateLimitedGraphQLError } from "../rate-limit/rate-limit.graphql.ts";
import { costError, costLimitPlugin, limitRules, operationToRun, queryCost, uploadClientError } from "./limits.ts";

/** graphql-js gives parse and validation errors no code; over WebSocket nobody else adds one. */
function withCode(errors: readonly GraphQLError[], code: string): GraphQLError[] {
  return errors.map(
    (e) => new GraphQLError(e.message, { nodes: e.nodes, source: e.source, positions: e.positions, originalError: e.originalError, extensions: { ...e.extensions, code } }),
  );
}

/**
 * Over WebSocket no Apollo picks the operation or coerces its variables: the client's errors with
 * Apollo's codes, or the cost limit's; undefined when the operation may run.
 */
function operationErrors(
  schema: GraphQLSchema,
  document: DocumentNode,
  payload: { operationName?: string | null; variables?: Record<string, unknown> | null },
  maxCost: number,
): readonly GraphQLError[] | undefined {
  const operation = operationToRun(document, payload.operationName);
  if (operation instanceof GraphQLError) return [operation];
  const cost = queryCost(schema, document, operation, payload.variables);
  if (typeof cost !== "number") return withCode(cost, "BAD_USER_INPUT");
  return cost > maxCost ? [costError(cost, maxCost)] : undefined;
}

/**
 * Over HTTP Apollo would run a subscription as a query of its event stream and fail inside
 * (INTERNAL_SERVER_ERROR): refuse it before execution, pointing at the transport that serves it.
 */
const subscriptionsOverWebSocketPlugin: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation }) {
        if (operation?.operation !== OperationTypeNode.SUBSCRIPTION) return;
        throw new GraphQLError("Subscriptions are served over WebSocket (graphql-transport-ws) on /graphql.", {
          extensions: { code: "BAD_REQUEST", http: { status: 400 } },
        });
      },
    };
  },
};

function sendGraphQLError(res: Response, status: number, code: string, message: string, headers: Record<string, string | string[]> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(status).json({ errors: [{ message, extensions: { code } }] });
}

/**
 * graphql-upload parses a multipart body before Apollo. What it refuses is the client's body: its
 * own http-errors (over a limit, a missing or broken `operations`/`map` part) and busboy's parse
 * errors ("Unexpected end of form", "Malformed part header"), which carry no status at all.
 */
function parseUploads(upload: RequestHandler): RequestHandler {
  return (req, res, next) =>
    upload(req, res, (error?: unknown) => {
      if (!error) return next();
      const known = uploadClientError(error) ?? toDomainError(error);
      const message = error instanceof Error ? error.message : String(error);
      next(known ?? new DomainError("BAD_USER_INPUT", `Malformed multipart request: ${message}`));
    });
}

/**
 * The last handler on /graphql, for errors raised before Apollo (body parsing, uploads, a database
 * outage in authentication or the rate limit): GraphQL's error shape, never REST's `{"error"}`.
 * A request Apollo never read is malformed HTTP, which GraphQL servers call BAD_REQUEST (as Apollo
 * does for a batch); 413 and 503 keep their own codes.
 */
const graphqlErrors: ErrorRequestHandler = (error, req, res, _next) => {
  const known = toDomainError(error);
  if (known?.code === "SERVICE_UNAVAILABLE" && !(error instanceof DomainError)) logOutage(error, { method: req.method, path: req.path });
  if (!known) log.error("unhandled GraphQL request error", { method: req.method, error });
  if (res.headersSent) return void res.end();
  if (!known) return sendGraphQLError(res, 500, "INTERNAL_SERVER_ERROR", "Internal server error");
  sendGraphQLError(res, known.status, known.status === 400 ? "BAD_REQUEST" : known.code, known.message, known.headers);
};

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
  rateLimiter: RateLimiter,
): Promise<GraphQLEndpoint> {
  const { config, authenticator } = services;
  const rules = limitRules(config);
  // A message over maxPayload closes its connection (1009 Message Too Big) before it is buffered whole.
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: config.wsMaxPayloadBytes });
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
        } catch (error) {
          // a database outage is not a refusal: 1013 tells the client to try again later
          if (isDatabaseUnavailable(error) || (error instanceof DomainError && error.code === "SERVICE_UNAVAILABLE")) {
            ctx.extra.socket.close(1013, "Service unavailable, try again later");
          }
          return false; // closes with 4403 Forbidden
        }
      },
      async onSubscribe(ctx, _id, payload): Promise<ExecutionArgs | readonly GraphQLError[]> {
        let document: DocumentNode;
        try {
          document = parse(payload.query);
        } catch (error) {
          return withCode([error as GraphQLError], "GRAPHQL_PARSE_FAILED");
        }
        // each subscribe message (subscription, query or mutation) is one request of the rate limit
        try {
          await rateLimiter.consume(ctx.extra.principal!, operationDomains(document, payload.operationName, payload.variables));
        } catch (error) {
          if (error instanceof RateLimitedError) return [rateLimitedGraphQLError(error)];
          throw error;
        }
        const errors = validate(schema, document, [...specifiedRules, ...rules]);
        if (errors.length) return withCode(errors, "GRAPHQL_VALIDATION_FAILED");
        const refused = operationErrors(schema, document, payload, config.graphqlMaxCost);
        if (refused) return refused;
        const contextValue = createContext(ctx.extra.principal!, services);
        return { schema, document, variableValues: payload.variables ?? undefined, operationName: payload.operationName, contextValue };
      },
      // graphql-ws does not run Apollo's formatError: give subscription errors the same codes.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON(), e)) } : result,
      onError: (_ctx, _id, _payload, errors) =>
        errors.map((e) => (e.extensions?.code === "RATE_LIMITED" ? e.toJSON() : formatError(e.toJSON(), e))),
    },
    wsServer,
  );
  // Runs after graphql-ws's own handler: a socket error (a message over maxPayload, a protocol
  // violation) is the client's; ws closes that connection itself (1009, 1002). graphql-ws would
  // print it with console.error on every occurrence: log it quietly instead, and keep a listener so
  // that the error can never go unhandled.
  wsServer.on("connection", (socket) => {
    socket.removeAllListeners("error");
    socket.on("error", (error: Error & { code?: string }) => log.info("websocket connection closed on a client error", { code: error.code }));
  });

  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError: (formatted, error) => formatError(formatted, uploadClientError(error) ?? error),
    introspection: true,
    csrfPrevention: true,
    stopOnTerminationSignals: false, // main.ts owns the shutdown (CONTRACT §7.1)
    validationRules: rules,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      ApolloServerPluginLandingPageDisabled(),
      // no cache hints are used, and the default plugin wraps every field's resolver (a 5,000-case page)
      ApolloServerPluginCacheControlDisabled(),
      subscriptionsOverWebSocketPlugin,
      costLimitPlugin(config.graphqlMaxCost),
      payloadTooLargePlugin,
      serviceUnavailablePlugin,
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
        sendGraphQLError(res, error.status, error.code, error.message, error.headers);
      }
    },
    parseUploads(graphqlUploadExpress({ maxFileSize: config.uploadLimitBytes, maxFiles: config.graphqlUploadMaxFiles, maxFieldSize: config.bodyLimitBytes })),
    express.json({ limit: config.bodyLimitBytes }),
    graphqlRateLimit(rateLimiter),
    expressMiddleware(apollo, {
      context: async ({ res }): Promise<GraphQLContext> => createContext(res.locals.principal as Principal, services),
    }),
  );
  router.use("/graphql", graphqlErrors);

  return {
    router,
    async dispose() {
      await subscriptions.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
      await apollo.stop().catch((error: unknown) => log.error("apollo stop failed", { error }));
    },
  };
}

