import { unwrapResolverError } from "@apollo/server/errors";
import type { Response } from "express";
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { domainErrorOf } from "../admission/error-mapping.ts";
import { logOutage } from "../db/unavailable.ts";
import { DomainError } from "../errors.ts";
import { log } from "../log.ts";
import { annotateRequestLog } from "../observability/http.ts";
import type { RateLimitedError } from "../rate-limit/rate-limit.service.ts";

/**
 * GraphQL's wire format of errors, for HTTP (Apollo, and the requests refused before Apollo) and
 * WebSocket (graphql-ws) alike: the thin "DomainError → GraphQL error" step of the admission
 * pipeline, and the formatting of every error an operation returns.
 */

/** Codes that graphql-js and Apollo give to the client's own mistakes: those messages pass through. */
const CLIENT_CODES = new Set([
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_USER_INPUT",
  "BAD_REQUEST",
  "OPERATION_RESOLUTION_FAILURE",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
  "QUERY_TOO_COMPLEX",
  "RESULT_TOO_LARGE",
  "QUERY_TIMEOUT",
  "UNAUTHENTICATED",
  "FORBIDDEN",
]);

/**
 * Client mistakes that a library names its own way. graphql-upload's scalar refuses a variable that
 * is not a file with INVALID_UPLOAD_VALUE, which graphql-js's variable error inherits: that is a
 * variable coercion error like any other, BAD_USER_INPUT.
 */
const CLIENT_CODE_ALIASES: Record<string, string> = { INVALID_UPLOAD_VALUE: "BAD_USER_INPUT" };

/** Apollo's refusals of a malformed `extensions.persistedQuery` (APQ) come with a 400 and no code. */
const APQ_PROTOCOL_ERRORS = new Set(["provided sha does not match query", "Unsupported persisted query version"]);

/**
 * Domain errors keep their message and get `extensions.code`; client mistakes pass through;
 * anything else is a bug, logged and reported without its details.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  // A database outage is a transient SERVICE_UNAVAILABLE, not an internal error.
  const known = domainErrorOf(original);
  if (known && !(original instanceof DomainError)) logOutage(original, { path: formatted.path?.join(".") });
  if (known) {
    return {
      message: known.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: known.code, ...known.extra },
    };
  }
  const given = APQ_PROTOCOL_ERRORS.has(formatted.message) ? "BAD_REQUEST" : formatted.extensions?.code;
  const code = typeof given === "string" ? (CLIENT_CODE_ALIASES[given] ?? given) : undefined;
  if (code !== undefined && CLIENT_CODES.has(code)) {
    const { stacktrace: _stack, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions: { ...extensions, code } };
  }
  log.error("unhandled GraphQL error", { error: original });
  return {
    message: "Internal server error",
    locations: formatted.locations,
    path: formatted.path,
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  };
}

/** A refusal before Apollo (authentication, body parsing, a database outage): GraphQL's error body, never REST's `{"error"}`. */
export function sendGraphQLError(
  res: Response,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string | string[]> = {},
): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  annotateRequestLog(res, { graphql: { errorCodes: [code] } });
  res.status(status).json({ errors: [{ message, extensions: { code } }] });
}

/** The GraphQL error of a refused request or subscribe message: `extensions.code` RATE_LIMITED and `retryAfter` (seconds). */
export function rateLimitedError(error: RateLimitedError): GraphQLError {
  return new GraphQLError(error.message, { extensions: { code: error.code, retryAfter: error.retryAfter } });
}

/** A request refused whole for a rate limit (its requests, or its failed logins): 429, Retry-After, no data. */
export function sendRateLimited(res: Response, error: RateLimitedError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  annotateRequestLog(res, { graphql: { errorCodes: [error.code] } });
  res.status(error.status).json({ errors: [rateLimitedError(error).toJSON()] });
}

/** graphql-js gives parse and validation errors no code; over WebSocket nobody else adds one. */
export function withCode(errors: readonly GraphQLError[], code: string): GraphQLError[] {
  return errors.map(
    (e) =>
      new GraphQLError(e.message, {
        nodes: e.nodes,
        source: e.source,
        positions: e.positions,
        originalError: e.originalError,
        extensions: { ...e.extensions, code },
      }),
  );
}
