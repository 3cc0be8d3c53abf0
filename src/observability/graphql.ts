import type { ServerResponse } from "node:http";
import type { ApolloServerPlugin } from "@apollo/server";
import { annotateRequestLog } from "./http.ts";
import { graphqlOperationDuration, graphqlOperations } from "./metrics.ts";
import { tracing } from "./tracing.ts";

/**
 * What GraphQL operations tell the operator (CONTRACT §7.2): metrics by operation type, a trace
 * span, and the `graphql` field of a log line: the operation's type, its name when the name is not
 * the client's free choice, and the error codes it answered (a 200 that carries FORBIDDEN is not a
 * success). The same field describes an operation over HTTP (on the request's line) and over
 * WebSocket (websocket-log.ts).
 */

/**
 * Counts and times each GraphQL operation over HTTP by its operation type (`unknown` when the
 * document did not parse or validate into one), and traces it when tracing is on. An operation's
 * name is a client's choice, so it is a label only when it is one of `trustedNames`, the names of
 * the trusted-documents manifest (a bounded set, CONTRACT §7.2).
 */
export function useOperationMetrics(trustedNames: ReadonlySet<string> = new Set()): ApolloServerPlugin {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      const span = tracing.startGraphQL();
      return {
        async willSendResponse({ operation, operationName, errors }) {
          const labels: { operation_type: string; operation_name?: string } = { operation_type: operation?.operation ?? "unknown" };
          if (operationName && trustedNames.has(operationName)) labels.operation_name = operationName;
          graphqlOperations.inc(labels);
          graphqlOperationDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
          span?.end(labels.operation_type, operationName ?? undefined, Boolean(errors?.length));
        },
      };
    },
  };
}

/** The `graphql` field of a log line. */
export interface OperationLog {
  /** `query`, `mutation` or `subscription`; absent when the document never made an operation */
  operationType?: string;
  /** only a name from the trusted-documents manifest or a persisted query (see loggedName) */
  operationName?: string;
  /** the distinct `extensions.code` values the answer carried, in order; absent when none */
  errorCodes?: string[];
}

/** The longest operation name a line carries: a longer one is left out, never cut. */
export const MAX_LOGGED_NAME = 100;
/** A GraphQL Name, as the spec writes it. */
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
/** Distinct error codes one line lists at most. */
const MAX_ERROR_CODES = 10;
/** An error code as the server writes them (FORBIDDEN, QUERY_TOO_COMPLEX): anything else is not listed. */
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * The name to log of an operation: only one that comes from the trusted-documents manifest or a
 * persisted query (APQ), `persisted`, and only a GraphQL Name of at most MAX_LOGGED_NAME
 * characters. The name of a document sent in full is the client's free text, and is not logged.
 */
export function loggedName(name: string | null | undefined, persisted: boolean): string | undefined {
  if (!persisted || !name || name.length > MAX_LOGGED_NAME || !GRAPHQL_NAME.test(name)) return undefined;
  return name;
}

type CodedError = { extensions?: { code?: unknown } | null };

/** Errors of one answer looked at for their codes: a line's cost stays bounded, whatever the answer. */
const MAX_ERRORS_READ = 1000;

/** Adds the codes of `errors` to `codes` (distinct, well-formed, at most MAX_ERROR_CODES). */
export function collectErrorCodes(codes: Set<string>, errors: readonly CodedError[] | null | undefined): void {
  for (const error of (errors ?? []).slice(0, MAX_ERRORS_READ)) {
    if (codes.size >= MAX_ERROR_CODES) return;
    const code = error.extensions?.code;
    if (typeof code === "string" && ERROR_CODE.test(code)) codes.add(code);
  }
}

/** The `graphql` field of a line: only what is known, so a search for a field finds what has it. */
export function operationLog(operationType: string | undefined, operationName: string | undefined, codes: ReadonlySet<string>): OperationLog {
  return {
    ...(operationType ? { operationType } : {}),
    ...(operationName ? { operationName } : {}),
    ...(codes.size ? { errorCodes: [...codes] } : {}),
  };
}

/**
 * Where an operation's context keeps its HTTP response, the line its fields go on: a property, as
 * Apollo runs each operation on a shallow copy of the context (which copies symbol keys too).
 */
const RESPONSE = Symbol("HTTP response");
type WithResponse = { [RESPONSE]?: ServerResponse };

/** Ties an HTTP request's GraphQL context to its response, whose log line useOperationLog annotates. */
export function logOperationOn<T extends object>(contextValue: T, res: ServerResponse): T {
  (contextValue as WithResponse)[RESPONSE] = res;
  return contextValue;
}

/**
 * Puts each HTTP operation's `graphql` field on its request's log line: type, name (loggedName:
 * manifest names in trusted-documents mode, else names of persisted queries), and the error codes
 * of the answer as sent. Last of the plugins, so that it reads the answer as the others left it.
 */
export function useOperationLog(trustedNames: ReadonlySet<string> | undefined): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, operation, operationName, request, response }) {
          const res = (contextValue as WithResponse)[RESPONSE];
          if (!res) return;
          const persisted = trustedNames ? trustedNames.has(operationName ?? "") : Boolean(request.extensions?.persistedQuery);
          const codes = new Set<string>();
          if (response.body.kind === "single") collectErrorCodes(codes, response.body.singleResult.errors);
          else collectErrorCodes(codes, response.body.initialResult.errors);
          annotateRequestLog(res, { graphql: operationLog(operation?.operation, loggedName(operationName, persisted), codes) });
        },
      };
    },
  };
}
