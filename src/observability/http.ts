import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { log } from "../log.ts";
import { serving } from "./event-loop.ts";
import { httpRequestDuration, httpRequests } from "./metrics.ts";

/**
 * CONTRACT §7.2 for every HTTP request: an `X-Request-Id` on the response, one JSON log line
 * (request id, method, route pattern, status, duration, username when authenticated, and what a
 * later stage annotated: a GraphQL request's operation and error codes), and the request counted
 * and timed under its route pattern.
 */

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** the route label of a path no route of the server knows: one value, whatever the path */
const UNKNOWN_ROUTE = "unknown";

/** The client's request id when it is well-formed, else a new one (a WebSocket's upgrade request's too). */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === "string" && REQUEST_ID.test(header) ? header : randomUUID();
}

interface RouteMark {
  /** the mount's pattern, e.g. `/a/:domain/api/case/v2` */
  pattern: string;
  /** the concrete path the mount matched, e.g. `/a/demo/api/case/v2` */
  mount: string;
}

const MARK = Symbol("route mark");
type Marked = { [MARK]?: RouteMark; [MATCHED]?: { path: unknown; baseUrl: string } };

/**
 * Names the route pattern of a mount (a REST family, /graphql), so that its requests are labelled
 * by the pattern even when none of its routes matched (a 401 before the route, a 404 inside it).
 */
export function markRoute(pattern: string): RequestHandler {
  return (req, _res, next) => {
    (req as Marked)[MARK] = { pattern, mount: req.baseUrl };
    next();
  };
}

/** A static path piece between a mount and its route (a nested router's `/ext`), never a value. */
const STATIC_PIECE = /^(\/[A-Za-z_-]+)*$/;

/**
 * The route pattern of an answered request: the mount's pattern, the static pieces of nested
 * routers, and the route's own path (`/a/:domain/api/case/v2/:caseId`); the mount's pattern with
 * `/*` when no route of it matched; UNKNOWN_ROUTE outside every known mount and route.
 */
export function routePattern(req: IncomingMessage): string {
  const mark = (req as Marked)[MARK];
  const matched = (req as Marked)[MATCHED];
  const routePath = matched && typeof matched.path === "string" ? matched.path : undefined;
  if (!mark) return routePath !== undefined && matched!.baseUrl === "" ? routePath : UNKNOWN_ROUTE;
  if (routePath === undefined) return mark.pattern === "/graphql" ? mark.pattern : `${mark.pattern}/*`;
  const nested = matched!.baseUrl.startsWith(mark.mount) ? matched!.baseUrl.slice(mark.mount.length) : "/*";
  return `${mark.pattern}${STATIC_PIECE.test(nested) ? nested : "/*"}${routePath === "/" && nested ? "" : routePath}`;
}

const MATCHED = Symbol("matched route");

/**
 * Records each route Express matches with the router base it matched under: `req.baseUrl` is
 * that of the route's router only while the route runs (an error it passes on leaves the router,
 * which restores the base), so it is read as Express sets `req.route`.
 */
function recordMatchedRoutes(req: IncomingMessage): void {
  let route: { path?: unknown } | undefined;
  Object.defineProperty(req, "route", {
    configurable: true,
    enumerable: true,
    get: () => route,
    set(next: { path?: unknown } | undefined) {
      route = next;
      (req as Marked)[MATCHED] = { path: next?.path, baseUrl: (req as Partial<Request>).baseUrl ?? "" };
    },
  });
}

const ANNOTATIONS = Symbol("request log annotations");
type Annotated = { [ANNOTATIONS]?: Record<string, unknown> };

/**
 * Adds fields to the request's log line, written when it ends: what a later stage learned (the
 * GraphQL operation and the error codes it answered), bounded by whoever adds them.
 */
export function annotateRequestLog(res: ServerResponse, fields: Record<string, unknown>): void {
  const annotated = res as Annotated;
  annotated[ANNOTATIONS] = { ...annotated[ANNOTATIONS], ...fields };
}

function username(res: ServerResponse): string | undefined {
  return (res as Partial<Response>).locals?.principal?.username;
}

/** Counts and times an ended request under its route pattern. */
function measure(req: IncomingMessage, res: ServerResponse, seconds: number): void {
  const labels = { method: methodLabel(req.method), route: routePattern(req), status_code: String(res.statusCode) };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, seconds);
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** a method outside the usual ones (any token is a valid method) is one label value */
const methodLabel = (method = "") => (METHODS.has(method) ? method : "other");

/**
 * The request's access log line, written once as its response ends (or the client goes): only the
 * fields meant for it, each bounded (the path is cut by the logger), never the raw request or
 * response, whose headers and bodies may be large and hold credentials.
 */
function logCompletion(req: IncomingMessage, res: ServerResponse, requestId: string, seconds: number): void {
  const user = username(res);
  const fields = {
    requestId,
    req: { method: req.method, path: (req.url ?? "").split("?")[0] },
    res: { statusCode: res.statusCode },
    route: routePattern(req),
    ...(user ? { username: user } : {}),
    ...(res as Annotated)[ANNOTATIONS],
    ...(res.writableFinished ? {} : { aborted: true }),
    durationMs: Math.round(seconds * 1000),
  };
  if (res.statusCode >= 500) log.error("request completed", fields);
  else log.info("request completed", fields);
}

/** The first middleware of the server: request id, access log line, HTTP metrics. */
export function observeRequests(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(req.headers["x-request-id"]);
    res.setHeader("X-Request-Id", requestId);
    recordMatchedRoutes(req);
    const served = serving(requestId);
    res.once("close", () => {
      served();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      measure(req, res, seconds);
      logCompletion(req, res, requestId, seconds);
    });
    next();
  };
}
