import { describe, expect, it } from "vitest";
import { Admission, httpCredentials } from "../../src/admission/admission.ts";
import { answerFor, multipartError, toDomainError, uploadClientError } from "../../src/admission/error-mapping.ts";
import type { Authenticator, Credentials } from "../../src/auth/authenticate.ts";
import type { Principal } from "../../src/auth/principal.ts";
import { DomainError, unauthenticated } from "../../src/errors.ts";
import { RateLimiter, RateLimitedError } from "../../src/rate-limit/rate-limit.service.ts";

/**
 * The one admission pipeline of every transport (authenticate, rate-limit, map errors), without a
 * database: a stand-in authenticator and the in-memory limiter. Each step throws only DomainErrors.
 */

const PRINCIPAL: Principal = { userId: "u1", username: "u", isSuperuser: false, scheme: "apikey" };
const CREDENTIALS: Credentials = { authorization: "ApiKey u:k", method: "GET", uri: "/a/demo/api/case/v2/" };
const outage = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

function admission(authenticate: (c: Credentials) => Promise<Principal>, requests = 1): Admission {
  const limiter = RateLimiter.create({ rateLimitRequests: requests, rateLimitWindowSeconds: 60 }, { kind: "pglite", prisma: {} as never });
  return new Admission({ authenticate } as Authenticator, limiter);
}

describe("Admission", () => {
  it("admits the caller, then counts the request in each domain; over the budget it is a 429 RateLimitedError", async () => {
    const seen: Credentials[] = [];
    const a = admission(async (c) => (seen.push(c), PRINCIPAL));
    expect(a.limitsRate).toBe(true);
    await expect(a.admit(CREDENTIALS, ["demo"])).resolves.toEqual(PRINCIPAL);
    expect(seen).toEqual([CREDENTIALS]);
    const refused = await a.admit(CREDENTIALS, ["demo"]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ status: 429, headers: { "Retry-After": expect.stringMatching(/^\d+$/) } });
    // another domain has its own budget
    await expect(a.admit(CREDENTIALS, ["other"])).resolves.toEqual(PRINCIPAL);
  });

  it("answers 401 before the rate limit is asked", async () => {
    const a = admission(async () => {
      throw unauthenticated();
    });
    for (let i = 0; i < 3; i++) {
      await expect(a.admit(CREDENTIALS, ["demo"])).rejects.toMatchObject({ code: "UNAUTHENTICATED", status: 401 });
    }
  });

  it("maps a database outage to 503 with Retry-After and a bug to a bare 500: never anything but a DomainError", async () => {
    const down = await admission(async () => Promise.reject(outage()))
      .authenticate(CREDENTIALS)
      .catch((e: unknown) => e);
    expect(down).toBeInstanceOf(DomainError);
    expect(down).toMatchObject({ code: "SERVICE_UNAVAILABLE", status: 503, headers: { "Retry-After": expect.stringMatching(/^\d+$/) } });
    const failing = admission(async () => Promise.reject(new TypeError("x is undefined")));
    const bug = await failing.authenticate(CREDENTIALS).catch((e: unknown) => e);
    expect(bug).toBeInstanceOf(DomainError);
    expect(bug).toMatchObject({ code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error" });
  });

  it("with no limit configured, never refuses", async () => {
    const a = admission(async () => PRINCIPAL, 0);
    expect(a.limitsRate).toBe(false);
    for (let i = 0; i < 5; i++) await expect(a.admit(CREDENTIALS, ["demo"])).resolves.toEqual(PRINCIPAL);
  });

  it("F2: a re-check passes the authenticator's finding through, and maps a database outage to 503: never a pass", async () => {
    const standing = { principal: PRINCIPAL, grants: new Map([["demo", ["access_api"]]]) };
    const limiter = RateLimiter.create({ rateLimitRequests: 0, rateLimitWindowSeconds: 60 }, { kind: "pglite", prisma: {} as never });
    const answers = [standing, null];
    const a = new Admission({ recheck: async () => answers.shift() } as unknown as Authenticator, limiter);
    await expect(a.recheck(PRINCIPAL)).resolves.toBe(standing);
    await expect(a.recheck(PRINCIPAL)).resolves.toBeNull();
    const down = new Admission({ recheck: () => Promise.reject(outage()) } as unknown as Authenticator, limiter);
    await expect(down.recheck(PRINCIPAL)).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE", status: 503 });
  });

  it("reads an HTTP request's credentials as sent (Digest signs the request-target) and the client's address", () => {
    const req = {
      headers: { authorization: "Basic eDp5" },
      method: "POST",
      originalUrl: "/a/d/api/case/v2/?limit=1",
      socket: { remoteAddress: "192.0.2.7" },
    };
    expect(httpCredentials(req)).toEqual({ authorization: "Basic eDp5", method: "POST", uri: "/a/d/api/case/v2/?limit=1", address: "192.0.2.7" });
  });
});

describe("the one error mapping", () => {
  it("passes domain errors through and maps body-parser's, an outage and other 4xx framework errors", () => {
    const own = new DomainError("NOT_FOUND", "gone");
    expect(toDomainError(own)).toBe(own);
    expect(toDomainError(outage())).toMatchObject({ code: "SERVICE_UNAVAILABLE" });
    expect(toDomainError({ type: "entity.too.large", status: 413 })).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      message: "Request body is too large.",
    });
    expect(toDomainError({ type: "entity.parse.failed", status: 400 })).toMatchObject({
      code: "BAD_USER_INPUT",
      message: "Payload must be valid JSON",
    });
    expect(toDomainError({ type: "charset.unsupported", status: 415 })).toMatchObject({ message: "Unsupported request body encoding." });
    expect(toDomainError({ status: 400 })).toMatchObject({ code: "BAD_USER_INPUT", message: "Bad request." });
    expect(toDomainError(new Error("bug"))).toBeUndefined();
  });

  it("keeps graphql-upload's exposed 4xx messages, and calls anything else of a multipart body malformed", () => {
    const tooLarge = Object.assign(new Error("File truncated as it exceeds the 10 byte size limit."), { status: 413, expose: true });
    expect(uploadClientError(tooLarge)).toMatchObject({ code: "PAYLOAD_TOO_LARGE", message: tooLarge.message });
    expect(uploadClientError({ status: 400, expose: true, type: "entity.parse.failed" })).toBeUndefined();
    expect(multipartError(new Error("Unexpected end of form"))).toMatchObject({
      code: "BAD_USER_INPUT",
      message: "Malformed multipart request: Unexpected end of form",
    });
    expect(multipartError({ type: "entity.too.large" })).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
  });

  it("answers anything: known errors as themselves, the rest as a bare 500", () => {
    const own = new DomainError("FORBIDDEN", "no");
    expect(answerFor(own, {})).toBe(own);
    expect(answerFor(outage(), {})).toMatchObject({ code: "SERVICE_UNAVAILABLE", status: 503 });
    expect(answerFor(new Error("secret detail"), {})).toMatchObject({
      code: "INTERNAL_SERVER_ERROR",
      status: 500,
      message: "Internal server error",
    });
  });
});
