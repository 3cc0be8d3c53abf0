import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import { answerFor } from "../admission/error-mapping.ts";
import { DomainError } from "../errors.ts";

/**
 * The REST error bodies of CONTRACT §1: `{"error": …}` for the Case and Location APIs (plus any
 * extra keys such as `xform_id`), `{"success": false, "error": …}` for the Import App API.
 */
export type ErrorShape = "plain" | "apps";

function errorBody(error: DomainError, shape: ErrorShape): Record<string, unknown> {
  return shape === "apps" ? { success: false, error: error.message, ...error.extra } : { error: error.message, ...error.extra };
}

export function sendError(res: Response, error: DomainError, shape: ErrorShape = "plain"): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(errorBody(error, shape));
}

/** The JSON 404 for a path nothing serves. */
export function unknownPath(shape: ErrorShape): RequestHandler {
  return (req, res) => sendError(res, new DomainError("NOT_FOUND", `Not found: ${req.originalUrl.split("?")[0]}`), shape);
}

/**
 * The last middleware of a REST family: anything thrown is mapped by the admission pipeline's one
 * error mapping (known errors pass through, an outage is a 503, anything else a logged 500) and
 * written in the family's body shape.
 */
export function restErrorHandler(shape: ErrorShape): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const answer = answerFor(error, { method: req.method, path: req.path });
    if (res.headersSent) return res.end();
    sendError(res, answer, shape);
  };
}
