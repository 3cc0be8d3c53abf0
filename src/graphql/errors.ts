import type { ApolloServerPlugin } from "@apollo/server";
import { unwrapResolverError } from "@apollo/server/errors";
import type { GraphQLFormattedError } from "graphql";
import { isDatabaseUnavailable, logOutage } from "../db/unavailable.ts";
import { DomainError, SERVICE_UNAVAILABLE_RETRY_SECONDS, serviceUnavailable } from "../errors.ts";
import { log } from "../log.ts";

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
  "UNAUTHENTICATED",
  "FORBIDDEN",
]);

/**
 * Client mistakes that a library names its own way. graphql-upload's scalar refuses a variable that
 * is not a file with INVALID_UPLOAD_VALUE, which graphql-js's variable error inherits: that is a
 * variable coercion error like any other, BAD_USER_INPUT.
 */
const CLIENT_CODE_ALIASES: Record<string, string> = { INVALID_UPLOAD_VALUE: "BAD_USER_INPUT" };

/**
 * Domain errors keep their message and get `extensions.code`; client mistakes pass through;
 * anything else is a bug, logged and reported without its details.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  let original = unwrapResolverError(error);
  // The database is down or restarting: a transient SERVICE_UNAVAILABLE, not an internal error.
  if (!(original instanceof DomainError) && isDatabaseUnavailable(original)) {
    logOutage(original, { path: formatted.path?.join(".") });
    original = serviceUnavailable();
  }
  if (original instanceof DomainError) {
    return {
      message: original.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: original.code, ...original.extra },
    };
  }
  const given = formatted.extensions?.code;
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

/**
 * Apollo plugin: a response that carries no data and whose only errors have `code` goes out with
 * HTTP `status` (and `headers`), as REST answers the same refusal (graphql-over-HTTP allows a
 * non-200 status then).
 */
function statusWhenOnly(code: string, status: number, headers: Record<string, string> = {}): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response }) {
          if (response.body.kind !== "single") return;
          const { errors, data } = response.body.singleResult;
          if (!errors?.length || (data && Object.values(data).some((v) => v !== null))) return;
          if (!errors.every((e) => e.extensions?.code === code)) return;
          response.http.status = status;
          for (const [name, value] of Object.entries(headers)) response.http.headers.set(name, value);
        },
      };
    },
  };
}

/** A database outage: 503 with Retry-After. */
export const serviceUnavailablePlugin = statusWhenOnly("SERVICE_UNAVAILABLE", 503, { "Retry-After": String(SERVICE_UNAVAILABLE_RETRY_SECONDS) });
/** An upload over the limit: 413. */
export const payloadTooLargePlugin = statusWhenOnly("PAYLOAD_TOO_LARGE", 413);
