import type { Authenticator, Credentials, Standing } from "../auth/authenticate.ts";
import type { Principal } from "../auth/principal.ts";
import type { RateLimiter } from "../rate-limit/rate-limit.service.ts";
import { clientAddress } from "./client-address.ts";
import { answerFor } from "./error-mapping.ts";

/**
 * The one admission pipeline of every transport (REST, GraphQL over HTTP, WebSocket): authenticate
 * (CONTRACT §1: 401 with the challenges), rate-limit (429 with Retry-After), map whatever else goes
 * wrong (503 on a database outage, 500 on a bug). Each step throws only a DomainError, which the
 * transport writes in its own wire format: a REST error body, a GraphQL error response, a WebSocket
 * close code or a subscribe error.
 *
 * A transport that knows the domains of a request from its request line (REST) is admitted in one
 * call; GraphQL learns them only from the body or the subscribe message, after authentication, so it
 * takes the two steps apart.
 */
export class Admission {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly limiter: RateLimiter,
  ) {}

  /** Whether requests are counted at all (RATE_LIMIT_REQUESTS > 0): otherwise no face needs their domains. */
  get limitsRate(): boolean {
    return this.limiter.enabled;
  }

  /**
   * The caller, or a DomainError: 401 (with WWW-Authenticate challenges), 429 when too many
   * password logins failed (a RateLimitedError, before any password is hashed), 503, 500.
   */
  async authenticate(credentials: Credentials): Promise<Principal> {
    try {
      return await this.authenticator.authenticate(credentials);
    } catch (error) {
      throw answerFor(error, { during: "authentication" });
    }
  }

  /**
   * Whether a caller admitted earlier (a WebSocket) still stands: its Standing, or null when its
   * credential, user or superuser flag is gone; a database outage is a DomainError (503), never a pass.
   */
  async recheck(principal: Principal): Promise<Standing | null> {
    try {
      return await this.authenticator.recheck(principal);
    } catch (error) {
      throw answerFor(error, { during: "credential re-check" });
    }
  }

  /**
   * Takes one request from the caller's budget in each named domain (`undefined`: the caller's own
   * budget), or throws a RateLimitedError (429, Retry-After).
   */
  async rateLimit(principal: Principal, domains: readonly (string | undefined)[]): Promise<void> {
    try {
      await this.limiter.consume(principal, domains);
    } catch (error) {
      throw answerFor(error, { during: "rate limit" });
    }
  }

  /** Both steps, for a request whose domains are known before its body is read. */
  async admit(credentials: Credentials, domains: readonly (string | undefined)[]): Promise<Principal> {
    const principal = await this.authenticate(credentials);
    await this.rateLimit(principal, domains);
    return principal;
  }
}

/** The credentials of an HTTP request (REST or GraphQL): a Digest response signs the request-target as sent. */
export function httpCredentials(req: {
  headers: { authorization?: string };
  method: string;
  originalUrl: string;
  socket: { remoteAddress?: string };
}): Credentials {
  return { authorization: req.headers.authorization, method: req.method, uri: req.originalUrl, address: clientAddress(req) };
}
