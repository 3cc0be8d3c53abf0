import { header, json, responseRef, type FeatureDocument } from "../openapi/operations.ts";
import { integer, ordered, ref, string, type Schema } from "../openapi/schema.ts";
import { OAUTH_GRANTS } from "./oauth.ts";

/** `POST /oauth/token` in the OpenAPI document (RFC 6749): its form, the token and its errors. */

const TAG = "OAuth 2.0";

const oauthError = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: json(ref("OAuthError")),
});

const schemas: Record<string, Schema> = {
  TokenRequest: {
    type: "object",
    description: "RFC 6749 token request; each parameter at most once.",
    required: ["grant_type"],
    properties: {
      grant_type: { type: "string", enum: [...OAUTH_GRANTS] },
      username: string("password grant"),
      password: string("password grant"),
      refresh_token: string("refresh_token grant"),
      scope: string("`access_apis`"),
      client_id: string("when the client does not authenticate with Basic"),
      client_secret: string("when the client does not authenticate with Basic"),
    },
  },
  Token: {
    type: "object",
    description: "An issued access token (RFC 6749 §5.1).",
    required: ["access_token", "token_type", "expires_in"],
    properties: {
      access_token: string("send as `Authorization: Bearer …`"),
      token_type: { type: "string", description: "Bearer" },
      expires_in: integer("seconds the access token lives", { minimum: 1 }),
      refresh_token: string("for the refresh_token grant"),
      scope: string("the granted scope"),
    },
    additionalProperties: false,
  },
  OAuthError: ordered("RFC 6749 §5.2 error.", { error: string("the error code"), error_description: string("what went wrong") }),
};

const paths = {
  "/oauth/token": {
    post: {
      tags: [TAG],
      operationId: "token",
      summary: "Issue an access token (password, refresh_token or client_credentials grant)",
      description: "The client authenticates with Basic (client_id:client_secret) or in the body. Scope `access_apis`.",
      security: [{ basic: [] }, {}],
      requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: ref("TokenRequest") } } },
      responses: {
        "200": {
          description: "The token.",
          headers: { "Cache-Control": header("no-store") },
          content: json(ref("Token")),
        },
        "400": {
          description: "An invalid request or grant (RFC 6749 §5.2), or a body that cannot be read.",
          content: json({ anyOf: [ref("OAuthError"), ref("Error")] }),
        },
        "401": oauthError("The client failed to authenticate.", { "WWW-Authenticate": { schema: { type: "string" } } }),
        "413": responseRef("PayloadTooLarge"),
        "429": oauthError("Too many failed logins from this address or for this user.", { "Retry-After": header("seconds to wait") }),
        "503": responseRef("ServiceUnavailable"),
      },
    },
    // the form is read before the method is looked at: an unreadable one is 400, a large one 413
    "x-other-methods": {
      "400": responseRef("BadRequest"),
      "405": responseRef("MethodNotAllowed"),
      "413": responseRef("PayloadTooLarge"),
    },
  },
};

export const oauthDocument: FeatureDocument = { tag: { name: TAG, description: "Tokens for Bearer authentication" }, paths, schemas };
