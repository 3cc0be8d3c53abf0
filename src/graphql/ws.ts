import type { IncomingMessage, Server } from "node:http";
import { GraphQLError, getOperationAST, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from "graphql";
import { WebSocketServer, type WebSocket } from "ws";
import type { Admission } from "../admission/admission.ts";
import type { Credentials } from "../auth/authenticate.ts";
import type { Principal } from "../auth/principal.ts";
import type { Config } from "../config.ts";
import { CREDENTIALS_CHANGED } from "../auth/credential.events.ts";
import { DomainError } from "../errors.ts";
import type { PubSub } from "../events/bus.ts";
import { log } from "../log.ts";
import type { ConnectionLog, OperationSeen } from "../observability/websocket-log.ts";
import { chargedIn, memberOf, namedBy, namedDomains, type Named } from "./rate-limit.ts";
import { RateLimitedError } from "../rate-limit/rate-limit.service.ts";
import { abortedResult } from "./budget.ts";
import type { GraphQLContext } from "./context.ts";
import { formatError, rateLimitedError } from "./errors.ts";
import { CompiledExecution } from "./compiled-execution.ts";
import { isRefusal, operationPipeline } from "./operation-pipeline.ts";
import { SubscriptionEvents, type EventOutlet, type WireResult } from "./subscription-events.ts";
import type { TrustedDocuments } from "./trusted-documents.ts";
import { TOO_MANY_SUBSCRIPTIONS, WsSessions, type Session } from "./ws-sessions.ts";
import { NextFrames, serveGraphQLOverWebSocket } from "./ws-transport.ts";

/**
 * GraphQL over WebSocket (graphql-ws, `graphql-transport-ws`) on /graphql. Admission as on every
 * transport: the connection is authenticated at connection_init (connectionParams.Authorization; a
 * refusal closes it 4403, too many failed password logins 4430, a database outage 1013); each subscribe message re-checks that credential
 * (gone: close 4403; database out: SERVICE_UNAVAILABLE for that operation) and is one request of
 * the rate limit; live subscriptions are bounded per socket and per user, and sockets whose
 * credentials stop standing are closed (ws-sessions.ts). No Apollo runs here: the subscribe step
 * admits the operation through the operation pipeline that HTTP's Apollo is built from
 * (operation-pipeline.ts: trusted documents, parse, rate limit, validation with the same limit
 * rules, the operation and its variables, cost), and it runs on HTTP's executor (compiled-execution.ts).
 */

export interface WsEndpointOptions {
  schema: GraphQLSchema;
  httpServer: Server;
  admission: Admission;
  /** where "credentials changed" events arrive from every process */
  pubsub: PubSub;
  config: Pick<
    Config,
    | "wsMaxPayloadBytes"
    | "graphqlMaxCost"
    | "graphqlMaxDepth"
    | "graphqlMaxAliases"
    | "graphqlMaxDirectives"
    | "graphqlMaxTokens"
    | "wsMaxSubscriptionsPerSocket"
    | "wsMaxSubscriptionsPerUser"
    | "wsRecheckSeconds"
  >;
  /** the client's address of an upgrade request, by the HTTP faces' rule (TRUST_PROXY) */
  addressOf: (request: IncomingMessage) => string | undefined;
  /** the context of an admitted subscribe message */
  context: (principal: Principal) => GraphQLContext;
  /** PERSISTED_OPERATIONS=only: the documents that may run */
  trustedDocuments?: TrustedDocuments;
}

export interface WsEndpoint {
  /** stops accepting subscriptions and closes the open ones */
  dispose(): Promise<void>;
}

/**
 * Closes a connection whose client has too many failed password logins (like HTTP's 429). Not 4429:
 * graphql-ws uses that for a repeated connection_init, and its client never reconnects after it.
 */
const WS_CLOSE_TOO_MANY_LOGINS = 4430;

/** What authentication reads of a connection: its Authorization parameter, as a GET of /graphql. */
function connectionCredentials(params: Record<string, unknown> | undefined, address: string | undefined): Credentials {
  const authorization = params?.Authorization ?? params?.authorization;
  return {
    authorization: typeof authorization === "string" ? authorization : undefined,
    method: "GET",
    uri: "/graphql",
    address,
  };
}

/** Errors refused before execution that carry their own code and pass to the client as they are. */
const REFUSAL_CODES = new Set(["RATE_LIMITED", "SERVICE_UNAVAILABLE", TOO_MANY_SUBSCRIPTIONS]);

/** A refusal of the admission (a DomainError: 503 during an outage) as the error of one operation. */
function refusal(error: DomainError): GraphQLError {
  return new GraphQLError(error.message, { extensions: { code: error.code } });
}

/**
 * Whether the socket's credential still stands before it runs another operation: undefined when it
 * does; when it is gone the socket is closing (4403) and the operation gets FORBIDDEN (which the
 * closing socket no longer sends); a database outage gets SERVICE_UNAVAILABLE, never a pass.
 */
async function recheckBeforeOperation(sessions: WsSessions, session: Session): Promise<readonly GraphQLError[] | undefined> {
  try {
    if (await sessions.recheck(session)) return undefined;
  } catch (error) {
    if (error instanceof DomainError) return [refusal(error)];
    throw error;
  }
  return [new GraphQLError("Your credentials are no longer valid.", { extensions: { code: "FORBIDDEN" } })];
}

/**
 * Each subscribe message (subscription, query or mutation) is one request of the rate limit, in the
 * budgets its operation is charged in: the refusal to answer with, if any.
 */
async function chargeRateLimit(admission: Admission, session: Session, named: Named | undefined): Promise<readonly GraphQLError[] | undefined> {
  try {
    await admission.rateLimit(session.principal, chargedIn(named, memberOf(session.principal, session.grants)));
    return undefined;
  } catch (error) {
    if (error instanceof RateLimitedError) return [rateLimitedError(error)];
    if (error instanceof DomainError) return [refusal(error)];
    throw error;
  }
}

/** Re-checks a user's sockets whenever a process publishes that their credentials changed. */
function followCredentialChanges(pubsub: PubSub, sessions: WsSessions): () => Promise<void> {
  const events = pubsub.subscribe(CREDENTIALS_CHANGED);
  void (async () => {
    for await (const { userId } of events) void sessions.recheckUser(userId);
  })().catch((error: unknown) => log.error("credential change listener stopped", { error }));
  return async () => void (await events.return?.());
}

/** The periodic safety re-check of every socket, in case an event was missed (WS_RECHECK_SECONDS; 0: none). */
function periodicRecheck(sessions: WsSessions, seconds: number): () => void {
  if (seconds <= 0) return () => {};
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void sessions.recheckAll().finally(() => (running = false));
  }, seconds * 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * An operation's (or subscription event's) result as it is sent: one whose budget ran out answers
 * its one error, as over HTTP; graphql-ws does not run Apollo's formatError: the other errors get
 * the same codes.
 */
function wireResult(args: ExecutionArgs, result: Pick<ExecutionResult, "errors">): WireResult {
  return (
    abortedResult((args.contextValue as GraphQLContext).budget, getOperationAST(args.document, args.operationName)?.operation) ??
    (result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON(), e)) } : (result as WireResult))
  );
}

/** A subscription's outlet: its next frames, each logged as the connection's answer to it. One object, no closures, per subscription. */
class SubscriptionOutlet extends NextFrames implements EventOutlet {
  constructor(
    socket: WebSocket,
    private readonly id: string,
    private readonly connection: ConnectionLog,
  ) {
    super(socket, id);
  }

  send(result: WireResult, json: string): Promise<void> | undefined {
    this.connection.answered(this.id, result.errors);
    return this.write(json);
  }
}

export function createWsEndpoint({
  schema,
  httpServer,
  admission,
  pubsub,
  config,
  addressOf,
  context,
  trustedDocuments,
}: WsEndpointOptions): WsEndpoint {
  const pipeline = operationPipeline(schema, config, trustedDocuments);
  const executor = new CompiledExecution(schema);
  const events = new SubscriptionEvents({ context, execute: executor.execute, wire: wireResult });
  const sessions = new WsSessions(admission, { perSocket: config.wsMaxSubscriptionsPerSocket, perUser: config.wsMaxSubscriptionsPerUser });
  const stopFollowing = followCredentialChanges(pubsub, sessions);
  const stopRechecking = periodicRecheck(sessions, config.wsRecheckSeconds);
  // A message over maxPayload closes its connection (1009 Message Too Big) before it is buffered whole.
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: config.wsMaxPayloadBytes });
  const subscriptions = serveGraphQLOverWebSocket<Record<string, unknown>, { session?: Session }>(
    {
      schema,
      async onConnect(ctx) {
        try {
          const { request } = ctx.extra;
          ctx.extra.request = undefined;
          const principal = await admission.authenticate(connectionCredentials(ctx.connectionParams, request && addressOf(request)));
          ctx.extra.session = sessions.open(ctx.extra.socket, principal, ctx.extra.log);
          ctx.extra.log.connected(principal.username);
          return true;
        } catch (error) {
          const code = String((error as DomainError).code);
          // a database outage is not a refusal: 1013 tells the client to try again later
          const closeCode = code === "SERVICE_UNAVAILABLE" ? 1013 : error instanceof RateLimitedError ? WS_CLOSE_TOO_MANY_LOGINS : 4403;
          ctx.extra.log.refused(code, closeCode);
          if (closeCode === 1013) ctx.extra.socket.close(1013, "Service unavailable, try again later");
          if (closeCode === WS_CLOSE_TOO_MANY_LOGINS) ctx.extra.socket.close(WS_CLOSE_TOO_MANY_LOGINS, "Too many failed login attempts");
          return false; // closes with 4403 Forbidden
        }
      },
      async onSubscribe(ctx, id, payload): Promise<ExecutionArgs | readonly GraphQLError[]> {
        const session = ctx.extra.session!;
        const refused = (errors: readonly GraphQLError[], seen: OperationSeen = {}) => {
          ctx.extra.log.operationRefused(id, seen, errors);
          return errors;
        };
        const gone = await recheckBeforeOperation(sessions, session);
        if (gone) return refused(gone);
        // one walk of the document for both: the budgets it is charged in, and the domains it names
        let named: Named | undefined;
        const charge = (document: DocumentNode) => {
          named = namedBy(document, payload.operationName, payload.variables);
          return chargeRateLimit(admission, session, named);
        };
        const admitted = await pipeline.admit({ ...payload, charge });
        if (isRefusal(admitted)) return refused(admitted.errors);
        const { document, operation } = admitted;
        const seen = { type: operation.operation, name: operation.name?.value };
        // only a subscription holds a slot, in the domains it names
        if (operation.operation === "subscription") {
          const domains = namedDomains(named).filter((d): d is string => typeof d === "string");
          const tooMany = sessions.reserve(session, id, payload, domains);
          if (tooMany) return refused([tooMany], seen);
        }
        ctx.extra.log.operationStarted(id, seen);
        const contextValue = context(session.principal);
        if (operation.operation === "subscription") {
          // its events go straight to the socket, each result serialised once for all its subscribers
          events.sendThrough(contextValue, new SubscriptionOutlet(ctx.extra.socket, id, ctx.extra.log));
        }
        return { schema, document, variableValues: payload.variables ?? undefined, operationName: payload.operationName, contextValue };
      },
      execute: executor.execute,
      subscribe: events.subscribe,
      // a result not sent through its subscription's outlet (an operation's): as its shared execution made it
      onNext: (ctx, id, _payload, args, result) => {
        const sent = events.isWire(result) ? result : wireResult(args, result);
        ctx.extra.log.answered(id, sent.errors);
        return sent;
      },
      onError: (ctx, id, _payload, errors) => {
        const sent = errors.map((e) => (REFUSAL_CODES.has(String(e.extensions?.code)) ? e.toJSON() : formatError(e.toJSON(), e)));
        ctx.extra.log.answered(id, sent);
        return sent;
      },
      // a subscription that ends (completed by the client, finished, failed) frees its slot
      onComplete: (ctx, id, payload) => {
        ctx.extra.log.operationCompleted(id);
        if (ctx.extra.session) sessions.release(ctx.extra.session, id, payload);
      },
      onClose: (ctx) => {
        if (ctx.extra.session) sessions.closed(ctx.extra.session);
      },
    },
    wsServer,
    trustedDocuments?.operationNames,
  );
  return {
    async dispose() {
      stopRechecking();
      await stopFollowing();
      await subscriptions.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
  };
}
