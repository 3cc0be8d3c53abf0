/**
 * Whether a Bearer value is shaped as a JWT (an OpenID Connect provider's access token) rather than
 * one of the token endpoint's opaque tokens: apart from oidc.ts, so that telling them apart does not
 * load jose, which a process without OIDC_ISSUER never needs.
 */

/** Three base64url parts (the third empty for `alg: none`). */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function looksLikeJwt(token: string): boolean {
  return JWT_SHAPE.test(token);
}
