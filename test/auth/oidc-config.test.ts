import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { looksLikeJwt } from "../../src/auth/jwt-shape.ts";

/** docs/configuration.md, the OIDC_* settings: read together, refused at start with a message naming the variable. */

const ISSUER = "https://login.example.org/realms/field";

describe("OIDC_* settings", () => {
  it("are off by default: no provider, every Bearer value is one of /oauth/token's", () => {
    expect(loadConfig({}).oidc).toBeUndefined();
  });

  it("OIDC_ISSUER with OIDC_AUDIENCE: the defaults of the others", () => {
    expect(loadConfig({ OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: "https://api.example.org" }).oidc).toEqual({
      issuer: ISSUER,
      audience: "https://api.example.org",
      usernameClaims: ["preferred_username", "sub"],
      clientId: undefined,
      scope: "openid profile",
      jwksCooldownSeconds: 30,
      allowSuperusers: false,
    });
  });

  it("OIDC_USERNAME_CLAIM names the one claim; OIDC_CLIENT_ID, OIDC_SCOPE and OIDC_JWKS_COOLDOWN_SECONDS are taken as given", () => {
    const oidc = loadConfig({
      OIDC_ISSUER: `${ISSUER}/`,
      OIDC_AUDIENCE: "api",
      OIDC_USERNAME_CLAIM: "email",
      OIDC_CLIENT_ID: "field-web",
      OIDC_SCOPE: " openid   api://gateway/access ",
      OIDC_JWKS_COOLDOWN_SECONDS: "5",
      OIDC_ALLOW_SUPERUSERS: "true",
    }).oidc;
    // the issuer as written: a trailing slash is part of what tokens must carry in `iss`
    expect(oidc).toEqual({
      issuer: `${ISSUER}/`,
      audience: "api",
      usernameClaims: ["email"],
      clientId: "field-web",
      scope: "openid api://gateway/access",
      jwksCooldownSeconds: 5,
      allowSuperusers: true,
    });
  });

  it("plain http only on loopback", () => {
    expect(loadConfig({ OIDC_ISSUER: "http://127.0.0.1:9000", OIDC_AUDIENCE: "api" }).oidc?.issuer).toBe("http://127.0.0.1:9000");
    expect(loadConfig({ OIDC_ISSUER: "http://localhost:9000/realms/x", OIDC_AUDIENCE: "api" }).oidc?.issuer).toBe("http://localhost:9000/realms/x");
    for (const raw of [
      "http://login.example.org",
      "login.example.org",
      "https://login.example.org/?x=1",
      "https://u:p@login.example.org",
      "ftp://x",
    ]) {
      expect(() => loadConfig({ OIDC_ISSUER: raw, OIDC_AUDIENCE: "api" }), raw).toThrow(/^OIDC_ISSUER must be an https URL/);
    }
  });

  it("refuses OIDC_ISSUER without OIDC_AUDIENCE, and any other OIDC_* setting without OIDC_ISSUER", () => {
    expect(() => loadConfig({ OIDC_ISSUER: ISSUER })).toThrow(ConfigError);
    expect(() => loadConfig({ OIDC_ISSUER: ISSUER })).toThrow(/^OIDC_ISSUER needs OIDC_AUDIENCE/);
    for (const name of [
      "OIDC_AUDIENCE",
      "OIDC_CLIENT_ID",
      "OIDC_USERNAME_CLAIM",
      "OIDC_SCOPE",
      "OIDC_JWKS_COOLDOWN_SECONDS",
      "OIDC_ALLOW_SUPERUSERS",
    ]) {
      expect(() => loadConfig({ [name]: "x" }), name).toThrow(`${name} needs OIDC_ISSUER`);
    }
    expect(() => loadConfig({ OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: "api", OIDC_USERNAME_CLAIM: "a b" })).toThrow(
      /^OIDC_USERNAME_CLAIM must be one claim name/,
    );
    for (const cooldown of ["-1", "0"]) {
      expect(() => loadConfig({ OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: "api", OIDC_JWKS_COOLDOWN_SECONDS: cooldown }), cooldown).toThrow(
        /^OIDC_JWKS_COOLDOWN_SECONDS must be an integer/,
      );
    }
    expect(() => loadConfig({ OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: "field-web", OIDC_CLIENT_ID: "field-web" })).toThrow(
      /^OIDC_AUDIENCE must not be OIDC_CLIENT_ID/,
    );
    // blanks around the issuer are no part of it (a token's `iss` never has them)
    expect(loadConfig({ OIDC_ISSUER: ` ${ISSUER} `, OIDC_AUDIENCE: "api" }).oidc?.issuer).toBe(ISSUER);
  });
});

describe("which Bearer values are JWTs", () => {
  it("three base64url parts (the third empty for alg: none); the token endpoint's opaque tokens are not", () => {
    expect(looksLikeJwt("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")).toBe(true);
    expect(looksLikeJwt("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")).toBe(true);
    expect(looksLikeJwt("0123456789abcdef0123456789abcdef01234567")).toBe(false);
    expect(looksLikeJwt("a.b")).toBe(false);
    expect(looksLikeJwt("a.b.c.d")).toBe(false);
    expect(looksLikeJwt("a+b.c.d")).toBe(false);
  });
});
