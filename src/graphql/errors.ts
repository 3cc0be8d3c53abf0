import { unwrapResolverError } from "@apollo/server/errors";
import type { GraphQLFormattedError } from "graphql";
import { DomainError } from "../errors.ts";
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
 * Domain errors keep their message and get `extensions.code`; client mistakes pass through;
 * anything else is a bug, logged and reported without its details.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof DomainError) {
    return {
      message: original.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: original.code, ...original.extra },
    };
  }
  const code = formatted.extensions?.code;
  if (typeof code === "string" && CLIENT_CODES.has(code)) {
    const { stacktrace: _stack, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions };
  }
  log.error("unhandled GraphQL error", { error: original });
  return {
    message: "Internal server error",
    locations: formatted.locations,
    path: formatted.path,
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  };
}
