import { ApolloServer } from "@apollo/server";
import { unwrapResolverError } from "@apollo/server/errors";
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type ErrorRequestHandler, type RequestHandler, type Router } from "express";
import type { GraphQLSchema } from "graphql";
import { graphqlUploadExpress } from "graphql-upload-ts";
import { httpCredentials, type Admission } from "../admission/admission.ts";
import { answerFor, multipartError, uploadClientError } from "../admission/error-mapping.ts";
import type { Principal } from "../auth/principal.ts";
import type { Config } from "../config.ts";
import { log } from "../log.ts";
import { requestDomains } from "../rate-limit/rate-limit.graphql.ts";
import { RateLimitedError } from "../rate-limit/rate-limit.service.ts";
import type { GraphQLContext } from "./context.ts";
import { formatError, sendGraphQLError, sendRateLimited } from "./errors.ts";
import { limitRules } from "./limits.ts";
import { useOperationMetrics } from "../observability/graphql.ts";
import { useCostLimit } from "./plugins/use-cost-limit.ts";
import { useExecutionBudget } from "./plugins/use-execution-budget.ts";
import { usePayloadTooLarge } from "./plugins/use-payload-too-large.ts";
import { useServiceUnavailable } from "./plugins/use-service-unavailable.ts";
import { useSubscriptionsOverWebSocket } from "./plugins/use-subscriptions-over-websocket.ts";

/**
 * GraphQL over HTTP on /graphql: Apollo behind express. A request passes, in order: authentication
 * (the admission pipeline; a refusal is answered before its body is read), the multipart upload
 * parser, the JSON body parser, the rate limit in the domains the operation names (admission again,
 * now that the body says which), then Apollo with one plugin per concern.
 */

export interface HttpEndpointOptions {
  schema: GraphQLSchema;
  admission: Admission;
  config: Pick<Config, "bodyLimitBytes" | "uploadLimitBytes" | "graphqlUploadMaxFiles" | "graphqlMaxCost" | "graphqlMaxDepth" | "graphqlMaxAliases">;
  /** the context of an admitted request */
  context: (principal: Principal) => GraphQLContext;
}

export interface HttpEndpoint {
  router: Router;
  stop(): Promise<void>;
}

/** Admission's first step: the caller, or the refusal (401 with challenges, 429, 503), written by graphqlErrors. */
function authenticate(admission: Admission): RequestHandler {
  return async (req, res, next) => {
    try {
      res.locals.principal = await admission.authenticate(httpCredentials(req));
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The multipart body of an upload, its refusals mapped to the client's errors (multipartError). */
function parseUploads(upload: RequestHandler): RequestHandler {
  return (req, res, next) => upload(req, res, (error?: unknown) => (error ? next(multipartError(error)) : next()));
}

/**
 * Admission's second step, once the body is read: a request over the budget of a domain it names is
 * refused whole, 429 with Retry-After and a GraphQL error body, before any work.
 */
function rateLimit(admission: Admission): RequestHandler {
  return async (req, res, next) => {
    if (!admission.limitsRate) return next();
    try {
      await admission.rateLimit(res.locals.principal as Principal, requestDomains(req.body, req.query));
      next();
    } catch (error) {
      if (!(error instanceof RateLimitedError)) return next(error);
      sendRateLimited(res, error);
    }
  };
}

/**
 * The last handler on /graphql, for errors raised before Apollo (body parsing, uploads, a database
 * outage): GraphQL's error shape, never REST's `{"error"}`. A request Apollo never read is malformed
 * HTTP, which GraphQL servers call BAD_REQUEST (as Apollo does for a batch); 413 and 503 keep their
 * own codes.
 */
const graphqlErrors: ErrorRequestHandler = (error, req, res, _next) => {
  const answer = answerFor(error, { method: req.method, path: req.path });
  if (res.headersSent) return void res.end();
  // too many failed logins (authentication): the same body as the rate limit's 429
  if (answer instanceof RateLimitedError) return sendRateLimited(res, answer);
  sendGraphQLError(res, answer.status, answer.status === 400 ? "BAD_REQUEST" : answer.code, answer.message, answer.headers);
};

export async function createHttpEndpoint({ schema, admission, config, context }: HttpEndpointOptions): Promise<HttpEndpoint> {
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError: (formatted, error) => formatError(formatted, uploadClientError(unwrapResolverError(error)) ?? error),
    introspection: true,
    csrfPrevention: true,
    stopOnTerminationSignals: false,
    validationRules: limitRules(config),
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      // no cache hints are used, and the default plugin wraps every field's resolver (a 5,000-case page)
      ApolloServerPluginCacheControlDisabled(),
      useOperationMetrics,
      useSubscriptionsOverWebSocket,
      useCostLimit(config.graphqlMaxCost),
      useExecutionBudget,
      usePayloadTooLarge,
      useServiceUnavailable,
    ],
  });
  await apollo.start();

  const router = express.Router();
  router.use(
    "/graphql",
    authenticate(admission),
    parseUploads(
      graphqlUploadExpress({ maxFileSize: config.uploadLimitBytes, maxFiles: config.graphqlUploadMaxFiles, maxFieldSize: config.bodyLimitBytes }),
    ),
    express.json({ limit: config.bodyLimitBytes }),
    rateLimit(admission),
    expressMiddleware(apollo, {
      context: async ({ res }): Promise<GraphQLContext> => context(res.locals.principal as Principal),
    }),
  );
  router.use("/graphql", graphqlErrors);

  return {
    router,
    async stop() {
      await apollo.stop().catch((error: unknown) => log.error("apollo stop failed", { error }));
    },
  };
}
