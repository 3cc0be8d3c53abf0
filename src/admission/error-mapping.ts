import { isDatabaseUnavailable, isStatementCancelled, logOutage } from "../db/unavailable.ts";
import { DomainError, queryTimedOut, serviceUnavailable } from "../errors.ts";
import { log } from "../log.ts";

/**
 * The one mapping from anything a request can throw to the DomainError it is answered with, shared
 * by every face (REST, GraphQL over HTTP, WebSocket), which then writes that DomainError in its own
 * wire format. It lives apart from src/errors.ts because it needs db/unavailable.ts, which imports
 * errors.ts.
 */

/**
 * What any layer may surface as the domain's own answer: a DomainError as itself, the database
 * down or restarting as a transient 503 with Retry-After, and a statement cancelled at its timeout
 * as QUERY_TIMEOUT (never a 500).
 */
export function domainErrorOf(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (isDatabaseUnavailable(error)) return serviceUnavailable();
  if (isStatementCancelled(error)) return queryTimedOut();
  return undefined;
}

/**
 * What a request refused before it reached a service is: domainErrorOf, or a framework's refusal.
 * Body-parser and other framework errors carry a `type` and a status: give them our messages.
 */
export function toDomainError(error: unknown): DomainError | undefined {
  const known = domainErrorOf(error);
  if (known) return known;
  const type = (error as { type?: string })?.type;
  if (type === "entity.too.large") return new DomainError("PAYLOAD_TOO_LARGE", "Request body is too large.");
  if (type === "entity.parse.failed") return new DomainError("BAD_USER_INPUT", "Payload must be valid JSON");
  const status = (error as { status?: number })?.status;
  if (type === "encoding.unsupported" || type === "charset.unsupported") {
    return new DomainError("BAD_USER_INPUT", "Unsupported request body encoding.");
  }
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new DomainError("BAD_USER_INPUT", "Bad request.");
  }
  return undefined;
}

/**
 * graphql-upload refuses what is over its limits with an http-errors error (`expose`, a 4xx status):
 * a file over UPLOAD_LIMIT_BYTES (413, surfacing in the resolver that reads it), too many files or
 * an oversize `operations` field (413), a missing part (400). Those are the client's, not bugs: they
 * become domain errors (PAYLOAD_TOO_LARGE or BAD_USER_INPUT) with the library's message. Errors that
 * body-parser names by `type` are left to toDomainError.
 */
export function uploadClientError(error: unknown): DomainError | undefined {
  const original = error as { status?: unknown; expose?: unknown; type?: unknown; message?: unknown } | undefined;
  if (!original || typeof original !== "object" || original instanceof DomainError || original.type !== undefined) return undefined;
  const status = original.status;
  if (original.expose !== true || typeof status !== "number" || status < 400 || status >= 500 || status === 499) return undefined;
  const message = typeof original.message === "string" ? original.message : "Bad request.";
  return new DomainError(status === 413 ? "PAYLOAD_TOO_LARGE" : "BAD_USER_INPUT", message);
}

/**
 * graphql-upload parses a multipart body before Apollo. What it refuses is the client's body: its
 * own http-errors (uploadClientError) and busboy's parse errors ("Unexpected end of form",
 * "Malformed part header"), which carry no status at all.
 */
export function multipartError(error: unknown): DomainError {
  const known = uploadClientError(error) ?? toDomainError(error);
  const message = error instanceof Error ? error.message : String(error);
  return known ?? new DomainError("BAD_USER_INPUT", `Malformed multipart request: ${message}`);
}

/**
 * What a face answers for anything thrown: the known DomainError; a database outage (logged, at
 * most once a second) as 503; anything else is a bug, logged with `where`, and answered as a bare
 * 500 that tells the client nothing of it.
 */
export function answerFor(error: unknown, where: Record<string, unknown>): DomainError {
  const known = toDomainError(error);
  if (known?.code === "SERVICE_UNAVAILABLE" && !(error instanceof DomainError)) logOutage(error, where);
  if (known) return known;
  log.error("unhandled error", { ...where, error });
  return new DomainError("INTERNAL_SERVER_ERROR", "Internal server error");
}
