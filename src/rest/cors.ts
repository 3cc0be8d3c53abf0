import cors from "cors";
import type { RequestHandler } from "express";

/**
 * The request headers a listed origin's page may send: credentials (`Authorization`), JSON bodies,
 * Apollo's CSRF-prevention headers (a GraphQL upload or GET from a page must send one), and a request
 * id of its own.
 */
const CORS_ALLOWED_HEADERS = ["Authorization", "Content-Type", "Apollo-Require-Preflight", "X-Apollo-Operation-Name", "X-Request-Id"];
/** The response headers a listed origin's page may read besides the CORS-safelisted ones. */
const CORS_EXPOSED_HEADERS = ["WWW-Authenticate", "Retry-After", "Location", "Allow", "X-Request-Id"];
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
/** how long a browser may reuse a preflight answer */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS (CONTRACT §7.2) for every path, ahead of authentication: a listed origin's preflight is
 * answered 204 at once (a preflight never carries credentials), and its real requests, errors
 * included, carry `Access-Control-Allow-Origin`. Another origin gets no CORS header at all, and its
 * preflight goes on to the routes like any request. Pages send credentials as an explicit
 * `Authorization` header, never the browser's own: no `Access-Control-Allow-Credentials`, so a
 * listed page cannot ride on Basic credentials the browser has cached either.
 */
export function corsPolicy(origins: readonly string[]): RequestHandler {
  const listed = new Set(origins);
  const answer = cors({
    origin: true, // reflects the request's origin: reached only for a listed one
    methods: METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    if (listed.size === 0) return next();
    // the answer depends on Origin for every request, listed or not: shared caches must know
    res.vary("Origin");
    const origin = req.get("origin");
    if (origin === undefined || !listed.has(origin)) return next();
    answer(req, res, next);
  };
}
