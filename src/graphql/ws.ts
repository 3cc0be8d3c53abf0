import type { IncomingMessage, Server } from "node:http";
import { GraphQLError, parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from "graphql";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import type { Admission } from "../admission/admission.ts";
import { clientAddress } from "../admission/client-address.ts";
import type { Credentials } from "../auth/authenticate.ts";
import type { Principal } from "../auth/principal.ts";
import type { Config } from "../config.ts";
import type { DomainError } from "../errors.ts";
import { log } from "../log.ts";
import { operationDomains } from "../rate-limit/rate-limit.graphql.ts";
import { RateLimitedError } from "../rate-limit/rate-limit.service.ts";
import type { GraphQLContext } from "./context.ts";
import { formatError, rateLimitedError, withCode } from "./errors.ts";
import { costError, limitRules, operationToRun, queryCost } from "./limits.ts";

/**
 * GraphQL over WebSocket (graphql-ws, `graphql-transport-ws`) on /graphql. Admission as on every
 * transport: the connection is authenticated once (connectionParams.Authorization; a refusal closes
 * it 4403, too many failed password logins 4429, a database outage 1013), and each subscribe message is one request of the rate limit.
 * No Apollo runs here, so the subscribe step does Apollo's work itself: parse, validate with the
 * same limit rules, pick the operation, check its cost.
 */

export interface WsEndpointOptions {
  schema: GraphQLSchema;
  httpServer: Server;
  admission: Admission;
  config: Pick<Config, "wsMaxPayloadBytes" | "graphqlMaxCost" | "graphqlMaxDepth" | "graphqlMaxAliases">;
  /** the context of an admitted subscribe message */
  context: (principal: Principal) => GraphQLContext;
}

export interface WsEndpoint {
  /** stops accepting subscriptions and closes the open ones */
  dispose(): Promise<void>;
}

/** Closes a connection whose client has too many failed password logins (like HTTP's 429). */
export const WS_CLOSE_TOO_MANY_LOGINS = 4429;

/** What authentication reads of a connection: its Authorization parameter, as a GET of /graphql. */
function connectionCredentials(params: Record<string, unknown> | undefined, request: IncomingMessage): Credentials {
  const authorization = params?.Authorization ?? params?.authorization;
  return {
    authorization: typeof authorization === "string" ? authorization : undefined,
    method: "GET",
    uri: "/graphql",
    address: clientAddress(request),
  };
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

export function createWsEndpoint({ schema, httpServer, admission, config, context }: WsEndpointOptions): WsEndpoint {
  const rules = limitRules(config);
  // A message over maxPayload closes its connection (1009 Message Too Big) before it is buffered whole.
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: config.wsMaxPayloadBytes });
  const subscriptions = useServer<Record<string, unknown>, { principal?: Principal }>(
    {
      schema,
      async onConnect(ctx) {
        try {
          ctx.extra.principal = await admission.authenticate(connectionCredentials(ctx.connectionParams, ctx.extra.request));
          return true;
        } catch (error) {
          // a database outage is not a refusal: 1013 tells the client to try again later
          if ((error as DomainError).code === "SERVICE_UNAVAILABLE") {
            ctx.extra.socket.close(1013, "Service unavailable, try again later");
          }
          if (error instanceof RateLimitedError) ctx.extra.socket.close(WS_CLOSE_TOO_MANY_LOGINS, "Too many failed login attempts");
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
          await admission.rateLimit(ctx.extra.principal!, operationDomains(document, payload.operationName, payload.variables));
        } catch (error) {
          if (error instanceof RateLimitedError) return [rateLimitedError(error)];
          throw error;
        }
        const errors = validate(schema, document, [...specifiedRules, ...rules]);
        if (errors.length) return withCode(errors, "GRAPHQL_VALIDATION_FAILED");
        const refused = operationErrors(schema, document, payload, config.graphqlMaxCost);
        if (refused) return refused;
        const contextValue = context(ctx.extra.principal!);
        return { schema, document, variableValues: payload.variables ?? undefined, operationName: payload.operationName, contextValue };
      },
      // graphql-ws does not run Apollo's formatError: give subscription errors the same codes.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON(), e)) } : result,
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => (e.extensions?.code === "RATE_LIMITED" ? e.toJSON() : formatError(e.toJSON(), e))),
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

  return {
    async dispose() {
      await subscriptions.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
  };
}
