import { BASIC } from "http-auth-utils";
import type { Prisma } from "../db/client.ts";
import { DomainError } from "../errors.ts";
import type { LoginThrottle } from "../rate-limit/login-throttle.service.ts";
import { DigestAuth } from "./digest.ts";
import type { IdentityCache } from "./identity.cache.ts";
import { IdentityRepository, type IdentityRow } from "./identity.repository.ts";
import { OAuthService } from "./oauth.ts";
import { looksLikeJwt } from "./jwt-shape.ts";
import type { OidcTokens } from "./oidc.ts";
import type { CredentialRef, DomainGrant, Principal } from "./principal.ts";
import { hashToken, safeEqual, verifyUserPassword } from "./secrets.ts";

/** What authentication needs of a request, whichever transport carried it. */
export interface Credentials {
  authorization: string | undefined;
  method: string;
  /** the request-target as sent (path and query), which a Digest response signs */
  uri: string;
  /** the client's address, whose failed password logins are throttled */
  address?: string;
}

/**
 * What a re-check finds of an admitted caller: the caller as admitted, and the permissions it now
 * holds in each domain it is a member of (sorted), by domain name.
 */
export interface Standing {
  principal: Principal;
  grants: ReadonlyMap<string, readonly string[]>;
}

/**
 * Checks the four schemes of CONTRACT §1 and yields a Principal, or throws a 401 DomainError whose
 * `challenges` go out as WWW-Authenticate headers. With OIDC_ISSUER, a Bearer value shaped as a JWT
 * is an OpenID Connect access token of that provider (src/auth/oidc.ts), any other Bearer value one
 * of our own token endpoint's. A password-bearing scheme (Basic, Digest) is
 * first admitted by the login throttle: over its budget of failures, a 429 RateLimitedError (no
 * challenges), before any password is hashed.
 *
 * The user, their API key and their memberships come in one statement (IdentityRepository), and the
 * principal carries the memberships, so that the request's domain check needs no query. An API key
 * or Basic credential admitted lately is found again in the IdentityCache without a query or any
 * hashing; the login throttle still admits a Basic attempt first, so that a guess that happens to
 * be right is refused like any other while its address or username is over budget.
 */
export class Authenticator {
  private readonly identities: IdentityRepository;

  constructor(
    private readonly prisma: Prisma,
    private readonly realm: string,
    private readonly digest: DigestAuth,
    private readonly oauth: OAuthService,
    private readonly throttle: LoginThrottle,
    private readonly cache: IdentityCache,
    private readonly oidc?: OidcTokens,
  ) {
    this.identities = new IdentityRepository(this.prisma);
  }

  /**
   * The Basic, Digest and Bearer challenges; a refused bearer token's says why (RFC 6750 §3:
   * `error="invalid_token"` and an `error_description` free of `"` and `\`).
   */
  challenges(stale = false, tokenRefusal?: string): string[] {
    const bearer = `Bearer realm="${this.realm}", scope="access_apis"`;
    const bearerChallenge = tokenRefusal === undefined ? bearer : `${bearer}, error="invalid_token", error_description="${tokenRefusal}"`;
    return [`Basic realm="${this.realm}", charset="UTF-8"`, ...this.digest.challenges(stale), bearerChallenge];
  }

  /**
   * The principal of a request, or a 401 DomainError. Anything else it throws (a database outage)
   * is the admission pipeline's to map (src/admission), as for every other step of a request.
   */
  async authenticate(credentials: Credentials): Promise<Principal> {
    const header = credentials.authorization?.trim();
    if (!header) throw this.refuse("Authentication credentials were not provided.");
    const space = header.indexOf(" ");
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
    const rest = space < 0 ? "" : header.slice(space + 1).trim();
    switch (scheme) {
      case "apikey":
        return this.apiKey(rest);
      case "basic":
        return this.basic(rest, credentials);
      case "digest":
        return this.digestAuth(rest, credentials);
      case "bearer":
        return this.bearer(rest);
      default:
        throw this.refuse("Unsupported authorization scheme.");
    }
  }

  refuse(message = "Invalid credentials.", stale = false): DomainError {
    return new DomainError("UNAUTHENTICATED", message, {}, { "WWW-Authenticate": this.challenges(stale) });
  }

  private async activeUser(where: { username: string } | { id: string }): Promise<IdentityRow | null> {
    const user = "username" in where ? await this.identities.byUsername(where.username) : await this.identities.byUserId(where.id);
    return user?.isActive ? user : null;
  }

  private principal(user: IdentityRow, scheme: Principal["scheme"], credential: CredentialRef): Principal {
    const memberships = new Map<string, DomainGrant>(user.memberships.map((m) => [m.name, m]));
    return { userId: user.id, username: user.username, isSuperuser: user.isSuperuser, scheme, credential, memberships };
  }

  /**
   * Whether an admitted caller still stands, cheaply (one or two lookups by id, no password
   * hashing): the user active and unchanged (username, superuser flag), and its credential not
   * revoked, expired or replaced. Null when it no longer stands; a database outage throws.
   */
  async recheck(principal: Principal): Promise<Standing | null> {
    const user = await this.identities.byUserId(principal.userId);
    if (!user?.isActive || user.username !== principal.username || user.isSuperuser !== principal.isSuperuser) return null;
    if (!(await this.credentialStands(principal, user.passwordHash))) return null;
    const grants = new Map(user.memberships.map((m) => [m.name, m.permissions] as const));
    return { principal, grants };
  }

  private async credentialStands({ userId, credential }: Principal, passwordHash: string): Promise<boolean> {
    switch (credential?.kind) {
      case undefined:
        return true;
      case "password":
        return safeEqual(credential.fingerprint, passwordFingerprint(passwordHash));
      case "apikey": {
        const row = await this.prisma.apiKey.findUnique({ where: { id: credential.keyId }, select: { userId: true, revokedAt: true } });
        return !!row && !row.revokedAt && row.userId === userId;
      }
      case "oauth":
        return this.oauth.accessTokenStands(credential.tokenId);
      case "oidc":
        // nothing of it is kept here to revoke: it stands until it expires (the user is checked above)
        return credential.expiresAt.getTime() > Date.now();
    }
  }

  /** `ApiKey username:key`; the key is looked up by its hash and must belong to that user. */
  private async apiKey(rest: string): Promise<Principal> {
    const colon = rest.lastIndexOf(":");
    if (colon <= 0) throw this.refuse("Malformed ApiKey credentials: expected 'ApiKey username:key'.");
    const fingerprint = this.cache.fingerprint("apikey", rest);
    const cached = this.cache.find(fingerprint);
    if (cached) return cached;
    const generation = this.cache.begin();
    const username = rest.slice(0, colon);
    const row = await this.identities.byApiKeyHash(hashToken(rest.slice(colon + 1)));
    if (!row?.keyId || row.keyRevoked || !row.isActive || !safeEqual(row.username, username)) throw this.refuse();
    const principal = this.principal(row, "apikey", { kind: "apikey", keyId: row.keyId });
    this.cache.remember(generation, fingerprint, principal);
    return principal;
  }

  /** A wrong password (or an unknown user) is counted as a failed login of that username and address. */
  private async basic(rest: string, credentials: Credentials): Promise<Principal> {
    let username: string;
    let password: string;
    try {
      ({ username, password } = BASIC.parseAuthorizationRest(rest));
    } catch {
      throw this.refuse("Malformed Basic credentials.");
    }
    const attempt = await this.throttle.attempt({ address: credentials.address, username });
    const fingerprint = this.cache.fingerprint("basic", `${username}:${password}`);
    const cached = this.cache.find(fingerprint);
    if (cached) {
      await attempt.succeeded();
      return cached;
    }
    const generation = this.cache.begin();
    const user = await this.activeUser({ username });
    if (!(await verifyUserPassword(password, user?.passwordHash)) || !user) {
      await attempt.failed();
      throw this.refuse();
    }
    await attempt.succeeded();
    const principal = this.principal(user, "basic", { kind: "password", fingerprint: passwordFingerprint(user.passwordHash) });
    this.cache.remember(generation, fingerprint, principal);
    return principal;
  }

  /**
   * A wrong Digest response is a failed password guess like a wrong Basic password. A stale nonce
   * (the right response on an expired or reused nonce) is not.
   */
  private async digestAuth(rest: string, credentials: Credentials): Promise<Principal> {
    const username = this.digest.claimedUsername(rest);
    if (!username) throw this.refuse();
    const attempt = await this.throttle.attempt({ address: credentials.address, username });
    const user = await this.activeUser({ username });
    const outcome = await this.digest.verify(rest, credentials.method, credentials.uri, user);
    if (outcome.ok && user) {
      await attempt.succeeded();
      return this.principal(user, "digest", { kind: "password", fingerprint: passwordFingerprint(user.passwordHash) });
    }
    const stale = !outcome.ok && outcome.stale;
    await (stale ? attempt.released() : attempt.failed());
    throw this.refuse(stale ? "Stale nonce: retry with the new challenge." : undefined, stale);
  }

  private async bearer(rest: string): Promise<Principal> {
    if (this.oidc && looksLikeJwt(rest)) return this.oidcBearer(this.oidc, rest);
    const token = rest ? await this.oauth.principalForAccessToken(rest) : null;
    const user = token ? await this.activeUser({ id: token.id }) : null;
    if (!user || !token) throw this.refuse("Invalid or expired token.");
    return this.principal(user, "bearer", { kind: "oauth", tokenId: token.tokenId, expiresAt: token.expiresAt });
  }

  /**
   * An OpenID Connect access token: its signature, issuer, audience and expiry checked locally, the
   * user it names found here (memberships and permissions are ours). A token admitted lately is
   * found again in the IdentityCache, while it has not expired.
   */
  private async oidcBearer(oidc: OidcTokens, token: string): Promise<Principal> {
    const fingerprint = this.cache.fingerprint("oidc", token);
    const cached = this.cache.find(fingerprint);
    if (cached?.credential?.kind === "oidc" && cached.credential.expiresAt.getTime() > Date.now()) return cached;
    const generation = this.cache.begin();
    const checked = await oidc.check(token);
    if (!checked.ok) throw this.refuseToken(checked.description);
    const user = await this.activeUser({ username: checked.username });
    if (!user) throw this.refuseToken("The access token names a user who is not known here or is inactive.");
    // whoever controls names at the provider must not become a superuser here by taking one's name
    if (user.isSuperuser && !oidc.settings.allowSuperusers)
      throw this.refuseToken("The access token names a superuser; superusers do not sign in through the identity provider.");
    const principal = this.principal(user, "bearer", { kind: "oidc", expiresAt: checked.expiresAt });
    this.cache.remember(generation, fingerprint, principal);
    return principal;
  }

  private refuseToken(description: string): DomainError {
    return new DomainError("UNAUTHENTICATED", description, {}, { "WWW-Authenticate": this.challenges(false, description) });
  }
}

/** A password's stand-in for re-checks: it changes whenever the password is set (a new salt), and is not the hash itself. */
function passwordFingerprint(passwordHash: string): string {
  return hashToken(passwordHash).slice(0, 16);
}
