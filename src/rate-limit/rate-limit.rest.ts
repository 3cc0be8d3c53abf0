import type { RequestHandler } from "express";
import { handler, locals } from "../rest/middleware.ts";
import type { RateLimiter } from "./rate-limit.service.ts";

/**
 * REST's side of the rate limit, after authentication in each family: the request draws on the
 * caller's budget in the domain of its path. A refusal is a DomainError (429, Retry-After) that the
 * family's error handler writes in the family's body shape.
 */
export function restRateLimit(limiter: RateLimiter): RequestHandler {
  return handler(async (req, res, next) => {
    if (limiter.enabled) await limiter.consume(locals(res).principal, [String(req.params.domain)]);
    next();
  });
}
