/**
 * The one domain error type. Services throw it; the REST layer turns it into a status and a JSON
 * body, the GraphQL layer into `extensions.code`. Framework refusals and a database outage are
 * mapped to it by src/admission/error-mapping.ts; anything else that escapes is a bug (500).
 */
export type ErrorCode =
  | "BAD_USER_INPUT"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "PAYLOAD_TOO_LARGE"
  | "RATE_LIMITED"
  | "QUERY_TIMEOUT"
  | "QUOTA_EXCEEDED"
  | "INTERNAL_SERVER_ERROR"
  | "SERVICE_UNAVAILABLE"
  | "INSUFFICIENT_STORAGE";

const STATUS: Record<ErrorCode, number> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  // the request asked for more than the database does within DATABASE_STATEMENT_TIMEOUT_MS: the client's to narrow
  QUERY_TIMEOUT: 400,
  /** a stored quantity's bound (a domain's queued archives): 429 with Retry-After, room comes back */
  QUOTA_EXCEEDED: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  /** the server's disk is too full to take the request */
  INSUFFICIENT_STORAGE: 507,
};

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** extra keys for the REST body, after "error" (e.g. the Case API's xform_id) */
  readonly extra: Record<string, unknown>;
  /** response headers the error needs (WWW-Authenticate challenges, Allow, Retry-After) */
  readonly headers: Record<string, string | string[]>;

  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string | string[]> = {}) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.status = STATUS[code];
    this.extra = extra;
    this.headers = headers;
  }
}

export const badInput = (message: string, extra?: Record<string, unknown>) => new DomainError("BAD_USER_INPUT", message, extra);
export const notFound = (message: string) => new DomainError("NOT_FOUND", message);
export const forbidden = (message = "You do not have permission to access this resource.") => new DomainError("FORBIDDEN", message);
export const unauthenticated = (message = "Authentication credentials were not provided or are invalid.") =>
  new DomainError("UNAUTHENTICATED", message);

/** A statement PostgreSQL cancelled at DATABASE_STATEMENT_TIMEOUT_MS: the request's answer, never a 500. */
export const queryTimedOut = () =>
  new DomainError(
    "QUERY_TIMEOUT",
    "Query took too long: the database cancelled it at its statement timeout. Ask for smaller pages or narrower filters.",
  );

/** Seconds a client is asked to wait (Retry-After) when the database is out of reach. */
export const SERVICE_UNAVAILABLE_RETRY_SECONDS = 5;

/** The database is out of reach (restart, outage): a transient 503 with Retry-After, never a 500. */
export const serviceUnavailable = (message = "The service is temporarily unavailable: the database cannot be reached. Retry later.") =>
  new DomainError("SERVICE_UNAVAILABLE", message, {}, { "Retry-After": String(SERVICE_UNAVAILABLE_RETRY_SECONDS) });

/** The object store (BLOB_STORE_URL) refused a request or did not answer: a 503 the client may retry, never a 500. */
export const objectStoreUnavailable = (reason = "unavailable") =>
  serviceUnavailable(`The service is temporarily unavailable: the object store refused or did not answer (${reason}). Retry later.`);

/** The database's schema is behind this release, which may not migrate it (MIGRATE_ON_START=false). */
export const schemaBehind = () =>
  serviceUnavailable(
    "The service is not ready: the database schema is behind this release until its migrations are applied (npm run db:migrate). Retry later.",
  );
