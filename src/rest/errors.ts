import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import { isDatabaseUnavailable, logOutage } from "../db/unavailable.ts";
import { DomainError, serviceUnavailable } from "../errors.ts";
import { log } from "../log.ts";

/**
 * The REST error bodies of CONTRACT §1: `{"error": …}` for the Case and Location APIs (plus any
 * extra keys such as `xform_id`), `{"success": false, "error": …}` for the Import App API.
 */
export type ErrorShape = "plain" | "apps";

export function errorBody(error: DomainError, shape: ErrorShape): Record<string, unknown> {
  return shape === "apps"
    ? { success: false, error: error.message, ...error.extra }
    : { error: error.message, ...error.extra };
}

export function sendError(res: Response, error: DomainError, shape: ErrorShape = "plain"): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(errorBody(error, shape));
}

/** The JSON 404 for a path nothing serves. */
export function unknownPath(shape: ErrorShape): RequestHandler {
  return (req, res) => sendError(res, new DomainError("NOT_FOUND", `Not found: ${req.originalUrl.split("?")[0]}`), shape);
}

/** Body-parser and other framework errors carry a `type` and a status: give them our messages. */
export function toDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  // The database is down or restarting: transient, 503 with Retry-After (never a 500).
  if (isDatabaseUnavailable(error)) return serviceUnavailable();
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

/** The last middleware of a REST family: known errors pass through, anything else is a logged 500. */
export function restErrorHandler(shape: ErrorShape): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const known = toDomainError(error);
    if (known?.code === "SERVICE_UNAVAILABLE" && !(error instanceof DomainError)) {
      logOutage(error, { method: req.method, path: req.path });
    }
    if (known) {
      if (res.headersSent) return res.end();
      return sendError(res, known, shape);
    }
    log.error("unhandled error", { method: req.method, path: req.path, error });
    if (res.headersSent) return res.end();
    sendError(res, new DomainError("INTERNAL_SERVER_ERROR", "Internal server error"), shape);
  };
}
