import { ApolloServer } from "@apollo/server";
import type { KeyValueCache } from "@apollo/utils.keyvaluecache";
import { unwrapResolverError } from "@apollo/server/errors";
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Router } from "express";
import { isObjectType, type GraphQLSchema } from "graphql";
import { graphqlUploadExpress } from "graphql-upload-ts";
import { httpCredentials, type Admission } from "../admission/admission.ts";
import { answerFor, multipartError, uploadClientError } from "../admission/error-mapping.ts";
import type { Principal } from "../auth/principal.ts";
import type { Config } from "../config.ts";
import { log } from "../log.ts";
import { memberOf, requestDomains } from "./rate-limit.ts";
import { RateLimitedError } from "../rate-limit/rate-limit.service.ts";
import { stringifyResult } from "./budget.ts";
import { CompiledExecution } from "./compiled-execution.ts";
import { preventCrossSiteRequests } from "./csrf.ts";
import type { GraphQLContext } from "./context.ts";
import { formatError, sendGraphQLError, sendRateLimited } from "./errors.ts";
import { graphqlIde, type IdeExternalSignIn } from "./ide/ide.ts";
import { parseDocument } from "./limits.ts";
import { operationPipeline, type OperationPipeline } from "./operation-pipeline.ts";
import { logOperationOn, useOperationLog, useOperationMetrics } from "../observability/graphql.ts";
import { useExecutionBudget } from "./plugins/use-execution-budget.ts";
import { usePayloadTooLarge } from "./plugins/use-payload-too-large.ts";
import { useServiceUnavailable } from "./plugins/use-service-unavailable.ts";
import { useOperationStages } from "./plugins/use-operation-stages.ts";
import { useSubscriptionsOverWebSocket } from "./plugins/use-subscriptions-over-websocket.ts";
import { manifestCache, type TrustedDocuments } from "./trusted-documents.ts";

/**
 * GraphQL over HTTP on /graphql: Apollo behind express. A request passes, in order: authentication
 * (the admission pipeline; a refusal is answered before its body is read), the multipart upload
 * parser, the JSON body parser, the rate limit in the domains the operation names (admission again,
 * now that the body says which), the trusted-documents check (PERSISTED_OPERATIONS=only), the
 * document's nesting (deeper than graphql-js's recursive parser is trusted with), CSRF
 * prevention (csrf.ts), then Apollo with one plugin per concern. A browser's visit (the IDE) is
 * answered before all of it.
 */

export interface HttpEndpointOptions {
  schema: GraphQLSchema;
  admission: Admission;
  config: Pick<
    Config,
    | "bodyLimitBytes"
    | "uploadLimitBytes"
    | "graphqlUploadMaxFiles"
    | "graphqlMaxCost"
    | "graphqlMaxDepth"
    | "graphqlMaxAliases"
    | "graphqlMaxDirectives"
    | "graphqlMaxTokens"
    | "graphqlMaxResultBytes"
    | "graphqlIde"
    | "publicUrl"
    | "apqTtlSeconds"
  >;
  /** the context of an admitted request */
  context: (principal: Principal) => GraphQLContext;
  /** where automatic persisted queries are registered, shared by every process of the database */
  persistedQueries: KeyValueCache<string>;
  /** PERSISTED_OPERATIONS=only: the documents that may run (and the only ones a hash finds) */
  trustedDocuments?: TrustedDocuments;
  /** a sign-in the IDE offers beside API key, password and token (e.g. OpenID Connect's browser flow) */
  ideSignIn?: IdeExternalSignIn;
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
function rateLimit(admission: Admission, limits: { graphqlMaxTokens: number }): RequestHandler {
  const parse = (query: string) => parseDocument(query, limits);
  return async (req, res, next) => {
    if (!admission.limitsRate) return next();
    try {
      const principal = res.locals.principal as Principal;
      await admission.rateLimit(principal, requestDomains(req.body, req.query, parse, memberOf(principal, principal.memberships)));
      next();
    } catch (error) {
      if (!(error instanceof RateLimitedError)) return next(error);
      sendRateLimited(res, error);
    }
  };
}

/** The `query` a GET's parameters or a POST's body bring, if any. */
function queryOf(req: Request): unknown {
  const payload: unknown = req.method === "GET" || req.method === "HEAD" ? req.query : req.body;
  return typeof payload === "object" && payload !== null ? (payload as { query?: unknown }).query : undefined;
}

/**
 * The pipeline's text stages (operation-pipeline.ts) on the document a request brings, before
 * Apollo reads it: PERSISTED_OPERATIONS=only refuses a document not in the manifest (403
 * FORBIDDEN), and a document nested deeper than graphql-js's recursive parser is trusted with is
 * a syntax error (400 GRAPHQL_PARSE_FAILED). One that sends only a hash is Apollo's to look up in
 * the manifest (PERSISTED_QUERY_NOT_FOUND when it is not there).
 */
function textStages(pipeline: OperationPipeline): RequestHandler {
  return (req, res, next) => {
    const query = queryOf(req);
    const refused = typeof query === "string" ? pipeline.checkText(query) : undefined;
    if (!refused) return next();
    const [error] = refused.errors;
    sendGraphQLError(res, refused.status, String(error!.extensions.code), error!.message);
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

export async function createHttpEndpoint({
  schema,
  admission,
  config,
  context,
  persistedQueries,
  trustedDocuments,
  ideSignIn,
}: HttpEndpointOptions): Promise<HttpEndpoint> {
  const pipeline = operationPipeline(schema, config, trustedDocuments);
  const apollo = new ApolloServer<GraphQLContext>({
    gateway: new CompiledExecution(schema).gateway(),
    formatError: (formatted, error) => formatError(formatted, uploadClientError(unwrapResolverError(error)) ?? error),
    // an answer too long to serialise is RESULT_TOO_LARGE, not a 500
    stringifyResult: stringifyResult(config.graphqlMaxResultBytes),
    introspection: true,
    // csrf.ts: Apollo's rule, and a request with an Authorization a page set itself passes too
    csrfPrevention: false,
    stopOnTerminationSignals: false,
    // the pipeline's document stages and token limit: Apollo parses and validates with them
    validationRules: pipeline.validationRules,
    parseOptions: pipeline.parseOptions,
    // APQ: in the database (every process finds what one registered), or the manifest's documents only
    persistedQueries: trustedDocuments ? { cache: manifestCache(trustedDocuments) } : { cache: persistedQueries, ttl: config.apqTtlSeconds },
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      // no cache hints are used, and the default plugin wraps every field's resolver (a 5,000-case page)
      ApolloServerPluginCacheControlDisabled(),
      // federated tracing serves subgraphs only: Apollo would otherwise load it (and its protobuf) to find so
      ...(isObjectType(schema.getType("_Service")) ? [] : [ApolloServerPluginInlineTraceDisabled()]),
      useOperationMetrics(trustedDocuments?.operationNames),
      useSubscriptionsOverWebSocket,
      useOperationStages(pipeline),
      useExecutionBudget,
      usePayloadTooLarge,
      useServiceUnavailable,
      // last: it logs the answer as the plugins before it left it
      useOperationLog(trustedDocuments?.operationNames),
    ],
  });
  await apollo.start();

  const router = express.Router();
  // the IDE's page and files need no credentials: before /graphql's admission
  if (config.graphqlIde) router.use(graphqlIde(config.publicUrl, ideSignIn));
  router.use(
    "/graphql",
    authenticate(admission),
    parseUploads(
      graphqlUploadExpress({ maxFileSize: config.uploadLimitBytes, maxFiles: config.graphqlUploadMaxFiles, maxFieldSize: config.bodyLimitBytes }),
    ),
    express.json({ limit: config.bodyLimitBytes }),
    textStages(pipeline),
    rateLimit(admission, config),
    preventCrossSiteRequests(),
    expressMiddleware(apollo, {
      context: async ({ res }): Promise<GraphQLContext> => logOperationOn(context(res.locals.principal as Principal), res),
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
