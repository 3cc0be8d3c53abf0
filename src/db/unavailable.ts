/**
 * Is this error the database being out of reach (down, restarting, connection dropped), as opposed
 * to a bug or a refused statement? Those failures are transient: the REST and GraphQL layers answer
 * them 503 with Retry-After instead of 500.
 *
 * The same outage reaches us in several dresses, depending on where it struck: a Prisma known
 * error (P1001 can't reach, P1002/P1008 timeouts, P1017 connection closed, P2037 too many
 * connections), a driver-adapter error (`cause.kind`), a raw `pg` error (SQLSTATE class 08
 * connection exception, 57P01-57P03 shutdown/starting up, 53300 too many connections), a socket
 * error (ECONNREFUSED …), or pg's own messages for a dropped connection. Walk the whole cause chain.
 */

import { DomainError } from "../errors.ts";
import { log } from "../log.ts";

const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2037"]);
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
const SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const MESSAGES = [
  /Connection terminated/i,
  /connection error and is not queryable/i,
  /timeout exceeded when trying to connect/i,
  /Can't reach database server/i,
  /Server has closed the connection/i,
  /terminating connection due to administrator command/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

function children(error: Record<string, unknown>): unknown[] {
  // cause (standard), originalError (GraphQL), meta (Prisma), inner (oauth2-server's ServerError)
  const next: unknown[] = [error.cause, error.originalError, error.meta, error.inner];
  const meta = error.meta as Record<string, unknown> | undefined;
  if (meta && typeof meta === "object") next.push(meta.driverAdapterError, meta.cause);
  if (Array.isArray(error.errors)) next.push(...error.errors); // AggregateError (connect to several addresses)
  return next;
}

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== "object" || depth > 6 || error instanceof DomainError) return false;
  const e = error as Record<string, unknown>;
  const code = typeof e.code === "string" ? e.code : undefined;
  if (code && (PRISMA_CODES.has(code) || SQLSTATES.has(code) || SOCKET_CODES.has(code) || code.startsWith("08"))) {
    return true;
  }
  if (typeof e.originalCode === "string" && (SQLSTATES.has(e.originalCode) || e.originalCode.startsWith("08"))) return true;
  if (typeof e.kind === "string" && ADAPTER_KINDS.has(e.kind)) return true;
  if (typeof e.message === "string" && MESSAGES.some((m) => m.test(e.message as string))) return true;
  return children(e).some((child) => child !== error && isDatabaseUnavailable(child, depth + 1));
}

/**
 * Is this error PostgreSQL cancelling a statement (SQLSTATE 57014: DATABASE_STATEMENT_TIMEOUT_MS ran
 * out, or an operator's pg_cancel_backend), in any of the dresses above (a raw `pg` error, a driver
 * adapter's `originalCode`, a Prisma error's meta)?
 */
export function isStatementCancelled(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== "object" || depth > 6 || error instanceof DomainError) return false;
  const e = error as Record<string, unknown>;
  if (e.code === "57014" || e.originalCode === "57014") return true;
  return children(e).some((child) => child !== error && isStatementCancelled(child, depth + 1));
}

/** What an outage log line says of the driver error: its name, code and first line, no more. */
function describeOutage(error: unknown): Record<string, unknown> {
  const e = (error ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
  return { name: e.name, code: e.code, message: typeof e.message === "string" ? e.message.split("\n")[0].slice(0, 200) : undefined };
}

let lastLogged = 0;
let suppressed = 0;

/** Logs an outage at most once a second (every request fails at once), counting the rest. */
export function logOutage(error: unknown, fields: Record<string, unknown> = {}): void {
  const now = Date.now();
  if (now - lastLogged < 1000) {
    suppressed += 1;
    return;
  }
  lastLogged = now;
  log.error("database unavailable: answered 503", { ...fields, error: describeOutage(error), alsoSinceLastLine: suppressed });
  suppressed = 0;
}
