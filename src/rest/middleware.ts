import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from "express";
import { httpCredentials, type Admission } from "../admission/admission.ts";
import type { Principal } from "../auth/principal.ts";
import { DomainError } from "../errors.ts";
import { UNPARSABLE_JSON } from "../util/json.ts";

/** What the REST middleware leaves for the handlers. */
export interface RestLocals {
  principal: Principal;
}

export function locals(res: Response): RestLocals {
  return res.locals as RestLocals;
}

type AsyncHandler = (req: Request, res: Response, next: NextFunction) => Promise<unknown>;

/** Express 5 forwards rejected promises to the error handler; this only narrows the type. */
export const handler =
  (fn: AsyncHandler): RequestHandler =>
  (req, res, next) =>
    fn(req, res, next);

/**
 * The admission of a REST family under /a/{domain}/…: the caller (401), then their budget in the
 * domain of the path (429). A refusal goes to the family's error handler, which writes it in the
 * family's body shape.
 */
export function admit(admission: Admission): RequestHandler {
  return handler(async (req, res, next) => {
    res.locals.principal = await admission.admit(httpCredentials(req), [String(req.params.domain)]);
    next();
  });
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Registers the handlers of one path and answers any other method, OPTIONS included (there is no
 * CORS), with 405, `Allow` and a JSON body. HEAD is served by GET, as Express does.
 */
export function route(router: Router, path: string, handlers: Partial<Record<Method, RequestHandler>>): void {
  const allowed = Object.keys(handlers) as Method[];
  const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : [])].join(", ");
  const chain = router.route(path);
  for (const method of allowed) chain[method.toLowerCase() as Lowercase<Method>](handlers[method]!);
  chain.all((req, _res, next) => {
    next(new DomainError("METHOD_NOT_ALLOWED", `Method '${req.method}' not allowed.`, {}, { Allow: allow }));
  });
}

/**
 * JSON bodies whatever their Content-Type (legacy clients do not always send one). A body that is
 * empty or not JSON becomes UNPARSABLE_JSON for the adapter to refuse once it holds the scope (after 403/404);
 * a body over the limit is refused here (413).
 */
export function jsonBody(limitBytes: number): RequestHandler {
  const text = express.text({ limit: limitBytes, type: () => true });
  return (req, res, next) =>
    text(req, res, (error?: unknown) => {
      if (error) return next(error);
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      if (!hasBody) return next();
      try {
        req.body = typeof req.body === "string" && req.body.trim() !== "" ? JSON.parse(req.body) : UNPARSABLE_JSON;
      } catch {
        req.body = UNPARSABLE_JSON;
      }
      next();
    });
}
