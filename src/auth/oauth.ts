import OAuth2Server from "@node-oauth/oauth2-server";
import type { Prisma } from "../db/client.ts";
import { LOGIN_THROTTLE_MESSAGE, type LoginAttempt, type LoginThrottle } from "../rate-limit/login-throttle.service.ts";
import { RateLimitedError } from "../rate-limit/rate-limit.service.ts";
import { hashToken, safeEqual, verifyUserPassword } from "./secrets.ts";

/**
 * OAuth 2.0 token endpoint (RFC 6749: password, refresh_token and client_credentials grants),
 * protocol by @node-oauth/oauth2-server; this file is its storage model. Tokens are stored only
 * as hashes; a refresh rotates the pair and revokes the old one.
 */

const OAUTH_SCOPE = "access_apis";
export const OAUTH_GRANTS = ["password", "refresh_token", "client_credentials"] as const;

interface ClientRecord extends OAuth2Server.Client {
  id: string;
  userId: string | null;
}

interface Lifetimes {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
}

function oauthModel(prisma: Prisma, lifetimes: Lifetimes) {
  const toClient = (row: { id: string; grants: string[]; userId: string | null }): ClientRecord => ({
    id: row.id,
    grants: row.grants,
    userId: row.userId,
    accessTokenLifetime: lifetimes.accessTokenTtlSeconds,
    refreshTokenLifetime: lifetimes.refreshTokenTtlSeconds,
  });

  const tokenRow = (where: { accessTokenHash: string } | { refreshTokenHash: string }) =>
    prisma.oAuthToken.findUnique({ where, include: { client: true, user: true } });

  return {
    async getClient(clientId: string, clientSecret: string | null) {
      const row = await prisma.oAuthClient.findUnique({ where: { clientId } });
      if (!row || row.revokedAt) return false;
      if (clientSecret !== null && clientSecret !== undefined && !safeEqual(hashToken(clientSecret), row.secretHash)) {
        return false;
      }
      return toClient(row);
    },

    async getUser(username: string, password: string) {
      const found = username.includes("\u0000") ? null : await prisma.user.findUnique({ where: { username } });
      const user = found?.isActive ? found : null;
      if (!(await verifyUserPassword(password, user?.passwordHash)) || !user) return false;
      return { id: user.id, username: user.username };
    },

    async getUserFromClient(client: ClientRecord) {
      if (!client.userId) return false;
      const user = await prisma.user.findUnique({ where: { id: client.userId } });
      return user?.isActive ? { id: user.id, username: user.username } : false;
    },

    async validateScope(_user: unknown, _client: unknown, scope?: string[]) {
      if (!scope || scope.length === 0) return [OAUTH_SCOPE];
      return scope.every((s) => s === OAUTH_SCOPE) ? scope : false;
    },

    async saveToken(token: OAuth2Server.Token, client: ClientRecord, user: OAuth2Server.User) {
      await prisma.oAuthToken.create({
        data: {
          accessTokenHash: hashToken(token.accessToken),
          accessTokenExpiresAt: token.accessTokenExpiresAt!,
          refreshTokenHash: token.refreshToken ? hashToken(token.refreshToken) : null,
          refreshTokenExpiresAt: token.refreshTokenExpiresAt ?? null,
          scope: token.scope ?? [OAUTH_SCOPE],
          clientId: client.id,
          userId: user.id,
        },
      });
      return { ...token, client, user };
    },

    async getAccessToken(accessToken: string) {
      const row = await tokenRow({ accessTokenHash: hashToken(accessToken) });
      if (!row || row.revokedAt || row.client.revokedAt) return false;
      return {
        accessToken,
        tokenId: row.id,
        accessTokenExpiresAt: row.accessTokenExpiresAt,
        scope: row.scope,
        client: toClient(row.client),
        user: { id: row.user.id, username: row.user.username },
      };
    },

    async getRefreshToken(refreshToken: string) {
      const row = await tokenRow({ refreshTokenHash: hashToken(refreshToken) });
      if (!row || row.revokedAt || row.client.revokedAt || !row.user.isActive) return false;
      return {
        refreshToken,
        refreshTokenExpiresAt: row.refreshTokenExpiresAt ?? undefined,
        scope: row.scope,
        client: toClient(row.client),
        user: { id: row.user.id, username: row.user.username },
      };
    },

    async revokeToken(token: OAuth2Server.RefreshToken) {
      const { count } = await prisma.oAuthToken.updateMany({
        where: { refreshTokenHash: hashToken(token.refreshToken), revokedAt: null },
        data: { revokedAt: new Date() },
      });
      return count === 1;
    },
  };
}

export interface TokenRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  body: unknown;
  /** the client's address, whose failed logins are throttled */
  address?: string;
}

export interface TokenResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** An access token's user, and the token's row and expiry (a WebSocket re-checks it by id and ends at expiry). */
export interface AccessTokenHolder {
  id: string;
  username: string;
  tokenId: string;
  expiresAt: Date;
}

/** The RFC 6749 §5.2 error code of a token request refused for too many failed logins (429). */
const TOO_MANY_ATTEMPTS = "too_many_attempts";

function errorResponse(status: number, error: string, description: string, headers: Record<string, string> = {}): TokenResponse {
  return { status, headers: { "Cache-Control": "no-store", ...headers }, body: { error, error_description: description } };
}

/**
 * RFC 6749 §3.2: a parameter may appear once. A repeated form key arrives as an array (and a
 * caller may hand anything else): refused here, before the library or the model sees it.
 */
function nonStringParameter(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body !== "object" || Array.isArray(body)) return "";
  const params = body as Record<string, unknown>;
  return Object.keys(params).find((name) => typeof params[name] !== "string");
}

/**
 * Failed credentials at the token endpoint: a wrong client secret (any grant) or a wrong user
 * password (password grant). Whatever else is refused checked no secret, and is not counted.
 */
/** The throttle's refusal in RFC 6749 form; anything else it threw is rethrown. */
function tooManyAttempts(error: unknown): TokenResponse {
  if (!(error instanceof RateLimitedError)) throw error;
  return errorResponse(429, TOO_MANY_ATTEMPTS, LOGIN_THROTTLE_MESSAGE, { "Retry-After": String(error.retryAfter) });
}

function isFailedLogin(error: unknown, grantType: unknown): boolean {
  if (error instanceof OAuth2Server.InvalidClientError) return true;
  return error instanceof OAuth2Server.InvalidGrantError && grantType === "password";
}

export class OAuthService {
  private readonly model: ReturnType<typeof oauthModel>;
  private readonly server: OAuth2Server;

  constructor(
    private readonly prisma: Prisma,
    lifetimes: Lifetimes,
    private readonly throttle: LoginThrottle,
  ) {
    this.model = oauthModel(prisma, lifetimes);
    this.server = new OAuth2Server({
      model: this.model,
      accessTokenLifetime: lifetimes.accessTokenTtlSeconds,
      refreshTokenLifetime: lifetimes.refreshTokenTtlSeconds,
      alwaysIssueNewRefreshToken: true,
    });
  }

  /**
   * Runs the token endpoint; errors come back in RFC 6749 §5.2 form, never thrown: 400
   * invalid_request for a repeated or non-string parameter, 429 too_many_attempts (with
   * Retry-After) once the client's address or the username has too many failed logins, checked
   * before any secret or password is hashed.
   */
  async token(input: TokenRequest): Promise<TokenResponse> {
    const invalid = nonStringParameter(input.body);
    if (invalid !== undefined) {
      const description = invalid ? `Invalid parameter: \`${invalid}\` must be given once, as a string` : "Invalid request: malformed body";
      return errorResponse(400, "invalid_request", description);
    }
    const body = (input.body ?? {}) as Record<string, string>;
    let attempt: LoginAttempt;
    try {
      const username = body.grant_type === "password" ? body.username : undefined;
      attempt = await this.throttle.attempt({ address: input.address, username });
    } catch (error) {
      return tooManyAttempts(error);
    }
    try {
      const response = await this.issue(input, body);
      await attempt.succeeded();
      return response;
    } catch (error) {
      try {
        await (isFailedLogin(error, body.grant_type) ? attempt.failed() : attempt.released());
      } catch (refusal) {
        return tooManyAttempts(refusal); // a wrong password past its pair's budget (login-throttle.service.ts)
      }
      if (error instanceof OAuth2Server.OAuthError) {
        const headers: Record<string, string> = {};
        if (error.code === 401) headers["WWW-Authenticate"] = 'Basic realm="oauth"';
        // The library reports its own server failures as 503/500: those are ours to surface as bugs.
        if (error.code >= 500) throw error;
        return errorResponse(error.code, error.name, error.message, headers);
      }
      throw error;
    }
  }

  /** The library's token grant, answered with an honest expires_in. */
  private async issue(input: TokenRequest, body: Record<string, string>): Promise<TokenResponse> {
    const request = new OAuth2Server.Request({
      method: input.method,
      headers: input.headers as Record<string, string>,
      query: input.query as Record<string, string>,
      body,
    });
    const response = new OAuth2Server.Response({ headers: {} });
    const token = await this.server.token(request, response);
    // The library floors the remaining lifetime and omits expires_in when that is 0 (a 1 s TTL),
    // and reports 3599 for 3600: state the lifetime from the stored expiry, rounded up, always.
    const { access_token, token_type, expires_in: _floored, ...rest } = response.body as Record<string, unknown>;
    const expiresIn = Math.max(1, Math.ceil((token.accessTokenExpiresAt!.getTime() - Date.now()) / 1000));
    return {
      status: 200,
      headers: { "Cache-Control": "no-store", Pragma: "no-cache" },
      body: { access_token, token_type, expires_in: expiresIn, ...rest },
    };
  }

  /** The user an access token acts for, with the token's row and expiry, when it is live and carries the API scope. */
  async principalForAccessToken(accessToken: string): Promise<AccessTokenHolder | null> {
    const token = await this.model.getAccessToken(accessToken);
    if (!token) return null;
    if (!token.accessTokenExpiresAt || token.accessTokenExpiresAt.getTime() <= Date.now()) return null;
    if (!token.scope?.includes(OAUTH_SCOPE)) return null;
    return { ...(token.user as { id: string; username: string }), tokenId: token.tokenId, expiresAt: token.accessTokenExpiresAt };
  }

  /** Whether the access token of that row still admits its user: not revoked, its client not revoked, not expired. */
  async accessTokenStands(tokenId: string): Promise<boolean> {
    const row = await this.prisma.oAuthToken.findUnique({ where: { id: tokenId }, include: { client: { select: { revokedAt: true } } } });
    return !!row && !row.revokedAt && !row.client.revokedAt && row.accessTokenExpiresAt.getTime() > Date.now() && row.scope.includes(OAUTH_SCOPE);
  }

  /** Forgets tokens that can no longer be used: both halves expired, or revoked, a day ago. */
  async purgeExpired(): Promise<void> {
    const dayAgo = new Date(Date.now() - 24 * 3600 * 1000);
    await this.prisma.oAuthToken.deleteMany({
      where: {
        OR: [
          { revokedAt: { lt: dayAgo } },
          { accessTokenExpiresAt: { lt: dayAgo }, OR: [{ refreshTokenExpiresAt: null }, { refreshTokenExpiresAt: { lt: dayAgo } }] },
        ],
      },
    });
  }
}
