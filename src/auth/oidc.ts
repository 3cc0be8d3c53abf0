import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import type { OidcConfig } from "../config.ts";
import { type DomainError, serviceUnavailable } from "../errors.ts";
import { log } from "../log.ts";

/**
 * Access tokens (JWT) of an external OpenID Connect identity provider (OIDC_ISSUER): the provider's
 * metadata from its discovery document, its signing keys from the JWKS that document names (jose
 * caches them and fetches them again when a token names a key it does not know, at most once per
 * OIDC_JWKS_COOLDOWN_SECONDS, so a rotation is picked up), and each token's signature, issuer,
 * audience and expiry checked against them.
 *
 * A token that does not pass is the caller's: a refusal with the reason in words (RFC 6750
 * `error_description`). A provider that cannot be reached is nobody's fault the caller can fix: a
 * 503 the caller may retry, never a 401 that would make a client throw its token away.
 */

/** What the server needs of the provider's discovery document (OpenID Connect Discovery 1.0 §3). */
export interface ProviderMetadata {
  issuer: string;
  jwksUri: string;
  authorizationEndpoint: string | undefined;
  tokenEndpoint: string | undefined;
}

/** A token that passed: the user it names, and when it stops admitting them. */
interface VerifiedToken {
  username: string;
  expiresAt: Date;
}

/** The outcome of checking a token: accepted, or refused with a description fit for `error_description`. */
type TokenCheck = ({ ok: true } & VerifiedToken) | { ok: false; description: string };

/** Signatures with a public key only: a shared secret (HS*) would let anyone holding it mint tokens, and `none` is no signature. */
const ASYMMETRIC_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];

/** How long the provider's answers may take before it counts as unreachable. */
const FETCH_TIMEOUT_MS = 5000;
/** After a failed fetch, the next attempt waits this long: meanwhile bearer JWTs are answered 503 at once, not after a timeout each. */
const RETRY_AFTER_FAILURE_MS = 5000;
/** The discovery document is read again after this long (its keys' location may move); a failure keeps the last one. */
const METADATA_MAX_AGE_MS = 3600_000;

/** The provider could not be reached (or answered nonsense) while a token was being checked. */
class ProviderUnreachable extends Error {}

/** The reasons a token is refused, in words; each fits an RFC 6750 `error_description` (no `"` or `\`). */
const REFUSALS = {
  expired: "The access token has expired.",
  notYetValid: "The access token is not valid yet.",
  issuer: "The access token was not issued by the configured identity provider.",
  audience: "The access token is not meant for this service (audience).",
  algorithm: "The access token's signing algorithm is not accepted.",
  unknownKey: "The access token is signed with a key the identity provider does not publish.",
  ambiguousKey: "The access token names no single key of the identity provider.",
  signature: "The access token's signature does not verify.",
  noExpiry: "The access token has no expiry (exp).",
  clientOnly: "The access token was issued to a client for itself, not to a user.",
  malformed: "The access token is malformed.",
} as const;

function refusalOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return REFUSALS.expired;
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "iss") return REFUSALS.issuer;
    if (error.claim === "aud") return REFUSALS.audience;
    if (error.claim === "nbf" || error.claim === "iat") return REFUSALS.notYetValid;
    if (error.claim === "exp") return REFUSALS.noExpiry;
    return `The access token's ${error.claim.replace(/["\\]/g, "")} claim is not accepted.`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return REFUSALS.algorithm;
  if (error instanceof errors.JWKSNoMatchingKey) return REFUSALS.unknownKey;
  if (error instanceof errors.JWKSMultipleMatchingKeys) return REFUSALS.ambiguousKey;
  if (error instanceof errors.JWSSignatureVerificationFailed) return REFUSALS.signature;
  return REFUSALS.malformed;
}

/** The 503's message while the provider is out of reach: why (a host not found, a refused connection) is logged for the operator, not told to any caller. */
const PROVIDER_UNAVAILABLE =
  "The service is temporarily unavailable: the identity provider (OIDC_ISSUER) cannot be reached to check the token. Retry later.";

/** What a failed fetch says, briefly, for the log. */
function reasonOf(error: unknown): string {
  if (error instanceof errors.JWKSTimeout || (error as Error)?.name === "TimeoutError") return "no answer in time";
  const cause = (error as { cause?: { code?: unknown } })?.cause?.code;
  if (typeof cause === "string") return cause;
  return error instanceof Error ? error.message : String(error);
}

/** A URL the document names, if it is an http(s) URL (the page is sent to one, and calls another). */
function urlField(document: Record<string, unknown>, name: string): string | undefined {
  const value = document[name];
  if (typeof value !== "string" || !URL.canParse(value)) return undefined;
  return ["https:", "http:"].includes(new URL(value).protocol) ? value : undefined;
}

export class OidcTokens {
  private metadataRead: { metadata: ProviderMetadata; at: number } | undefined;
  private pendingMetadata: Promise<ProviderMetadata> | undefined;
  private keys: { uri: string; getKey: JWTVerifyGetKey; reload(): Promise<void> } | undefined;
  /** when the last fetch failed: until RETRY_AFTER_FAILURE_MS later, no new attempt */
  private failedAt = Number.NEGATIVE_INFINITY;
  private lastFailure = "";

  constructor(readonly settings: OidcConfig) {}

  /** OpenID Connect Discovery §4: the issuer, any trailing slash removed, then the well-known path. */
  private get discoveryUrl(): string {
    return `${this.settings.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
  }

  /**
   * The provider's metadata, read once and again every hour (the last one kept while the provider
   * is away); a DomainError (503) when it has never been read and cannot be now.
   */
  async metadata(): Promise<ProviderMetadata> {
    try {
      return await this.currentMetadata();
    } catch {
      throw this.unavailable();
    }
  }

  /** Reads the provider's metadata and keys ahead of the first token; a failure is only logged (the server starts regardless). */
  prefetch(): void {
    this.currentKeys()
      .then(() => this.keys?.reload())
      .catch((error: unknown) => {
        if (!(error instanceof ProviderUnreachable)) this.noteFailure(error);
      });
  }

  /**
   * Checks a token: its signature against the provider's keys, its issuer, audience and expiry, and
   * the claim naming the user. A refusal is returned; the provider out of reach throws a DomainError (503).
   */
  async check(token: string): Promise<TokenCheck> {
    let payload: JWTPayload;
    try {
      payload = await this.verify(token);
    } catch (error) {
      if (error instanceof ProviderUnreachable) throw this.unavailable();
      return { ok: false, description: refusalOf(error) };
    }
    // RFC 9068 §2.2: a token a client got for itself (client credentials) has the client as `sub`
    if (payload.client_id !== undefined && payload.client_id === payload.sub) return { ok: false, description: REFUSALS.clientOnly };
    const username = this.usernameOf(payload);
    if (!username) {
      const claims = this.settings.usernameClaims.join(" or ");
      return { ok: false, description: `The access token names no user (no ${claims.replace(/["\\]/g, "")} claim).` };
    }
    return { ok: true, username, expiresAt: new Date((payload.exp as number) * 1000) };
  }

  /**
   * The token's claims once its signature, issuer, audience and expiry pass. A token without a
   * `kid` that more than one published key could have signed is tried against each of them
   * (jose leaves that to the caller).
   */
  private async verify(token: string): Promise<JWTPayload> {
    const options = { issuer: this.settings.issuer, audience: this.settings.audience, algorithms: ASYMMETRIC_ALGORITHMS, requiredClaims: ["exp"] };
    try {
      return (await jwtVerify(token, await this.currentKeys(), options)).payload;
    } catch (error) {
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
      for await (const key of error) {
        try {
          return (await jwtVerify(token, key, options)).payload;
        } catch (failed) {
          if (!(failed instanceof errors.JWSSignatureVerificationFailed)) throw failed;
        }
      }
      throw new errors.JWSSignatureVerificationFailed();
    }
  }

  private usernameOf(payload: JWTPayload): string | undefined {
    for (const claim of this.settings.usernameClaims) {
      const value = payload[claim];
      if (typeof value === "string" && value) return value;
    }
    return undefined;
  }

  /**
   * The metadata read last while it is under an hour old; an older one is still answered while a
   * new read runs in the background (a provider away keeps its last metadata). Never read yet: one
   * read at a time, and none for RETRY_AFTER_FAILURE_MS after a failure.
   */
  private async currentMetadata(): Promise<ProviderMetadata> {
    const read = this.metadataRead;
    if (read) {
      const stale = Date.now() - read.at >= METADATA_MAX_AGE_MS;
      if (stale && Date.now() - this.failedAt >= RETRY_AFTER_FAILURE_MS) this.readMetadataOnce().catch(() => {});
      return read.metadata;
    }
    if (Date.now() - this.failedAt < RETRY_AFTER_FAILURE_MS) throw new ProviderUnreachable(this.lastFailure);
    try {
      return await this.readMetadataOnce();
    } catch (error) {
      throw new ProviderUnreachable(reasonOf(error), { cause: error });
    }
  }

  /** One read of the discovery document at a time, whoever asks; a failure is logged once. */
  private readMetadataOnce(): Promise<ProviderMetadata> {
    this.pendingMetadata ??= this.readMetadata()
      .catch((error: unknown) => {
        this.noteFailure(error);
        throw error;
      })
      .finally(() => {
        this.pendingMetadata = undefined;
      });
    return this.pendingMetadata;
  }

  private async readMetadata(): Promise<ProviderMetadata> {
    const response = await fetch(this.discoveryUrl, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      redirect: "error",
    });
    if (!response.ok) throw new Error(`the discovery document answered HTTP ${response.status}`);
    const document = (await response.json()) as Record<string, unknown>;
    if (typeof document !== "object" || document === null) throw new Error("the discovery document is not a JSON object");
    // OpenID Connect Discovery §4.3: the document must name the very issuer it was asked for
    if (document.issuer !== this.settings.issuer) throw new Error(`the discovery document names another issuer (${String(document.issuer)})`);
    const jwksUri = urlField(document, "jwks_uri");
    if (!jwksUri) throw new Error("the discovery document names no jwks_uri");
    const metadata = {
      issuer: this.settings.issuer,
      jwksUri,
      authorizationEndpoint: urlField(document, "authorization_endpoint"),
      tokenEndpoint: urlField(document, "token_endpoint"),
    };
    this.metadataRead = { metadata, at: Date.now() };
    return metadata;
  }

  /**
   * The key resolver of the provider's current JWKS. A token naming no published key is refused
   * (JWKSNoMatchingKey, after one more fetch unless cooling down); any other failure of the fetch is
   * the provider's (ProviderUnreachable).
   */
  private async currentKeys(): Promise<JWTVerifyGetKey> {
    const { jwksUri } = await this.currentMetadata();
    if (this.keys?.uri !== jwksUri) {
      const remote = createRemoteJWKSet(new URL(jwksUri), {
        timeoutDuration: FETCH_TIMEOUT_MS,
        cooldownDuration: this.settings.jwksCooldownSeconds * 1000,
      });
      const getKey: JWTVerifyGetKey = async (header, token) => {
        if (!remote.fresh && Date.now() - this.failedAt < RETRY_AFTER_FAILURE_MS) throw new ProviderUnreachable(this.lastFailure);
        try {
          return await remote(header, token);
        } catch (error) {
          if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
          if (error instanceof errors.JOSENotSupported) throw error;
          this.noteFailure(error);
          throw new ProviderUnreachable(reasonOf(error), { cause: error });
        }
      };
      this.keys = { uri: jwksUri, getKey, reload: () => remote.reload() };
    }
    return this.keys.getKey;
  }

  private noteFailure(error: unknown): void {
    this.failedAt = Date.now();
    this.lastFailure = reasonOf(error);
    log.warn("OpenID Connect provider unreachable", { issuer: this.settings.issuer, reason: this.lastFailure });
  }

  /** The 503 a caller gets: why the provider is out of reach is the operator's (logged), not the caller's, to read. */
  private unavailable(): DomainError {
    return serviceUnavailable(PROVIDER_UNAVAILABLE);
  }
}
