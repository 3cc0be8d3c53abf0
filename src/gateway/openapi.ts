import { appDocument } from "../apps/app.openapi.ts";
import { oauthDocument } from "../auth/oauth.openapi.ts";
import { caseDocument } from "../cases/case.openapi.ts";
import { locationDocument } from "../locations/location.openapi.ts";
import { multimediaDocument } from "../multimedia/multimedia.openapi.ts";
import { errorResponses, errorSchemas } from "../openapi/operations.ts";

/**
 * The OpenAPI 3.1 document of the REST API (CONTRACT §7.2), assembled from each feature's own
 * description of its routes (`*.openapi.ts`, built from the grammar and serializers the faces
 * run): every path of §§2–4, the location types and /oauth/token, every status each can answer
 * with its body, and the four security schemes. The test suite checks every REST request it sends
 * and every response it gets against it (test/helpers/openapi.ts).
 *
 * Paths are written as the seeds write them, with their trailing slash; the server answers with or
 * without it. Any other method on a documented path is answered with the response named by the
 * path's `x-other-methods`: 405 with `Allow`, unless the request is refused before its method is
 * looked at (401 credentials, 403 a cross-site write, 429, 503).
 */

const features = [caseDocument, locationDocument, appDocument, oauthDocument];

export const openApiDocument = {
  openapi: "3.1.0",
  info: {
    title: "Field data gateway: REST API",
    version: "2.0.0",
    description:
      "The REST compatibility layer: Case Data API v2, Location API v2 (and location types), Import App API, and the " +
      "OAuth 2.0 token endpoint. GraphQL is served at /graphql and described by its own schema.\n\n" +
      "Every path takes a trailing slash or not. Any method a path does not take is answered 405 with `Allow` " +
      '(the path\'s `x-other-methods` lists what else such a request may get). Error bodies: `{"error"}` for the Case and Location APIs (Case API ' +
      'submission errors add `xform_id`), `{"success": false, "error"}` for the Import App API. Objects marked ' +
      "`x-key-order` have their keys in the listed order.",
  },
  tags: features.map((f) => f.tag),
  security: [{ apiKey: [] }, { basic: [] }, { digest: [] }, { bearer: [] }],
  paths: {
    ...caseDocument.paths,
    ...locationDocument.paths,
    ...appDocument.paths,
    ...multimediaDocument.paths,
    ...oauthDocument.paths,
  },
  components: {
    schemas: {
      ...errorSchemas,
      ...caseDocument.schemas,
      ...locationDocument.schemas,
      ...appDocument.schemas,
      ...multimediaDocument.schemas,
      ...oauthDocument.schemas,
    },
    responses: { ...errorResponses("plain"), ...errorResponses("apps") },
    securitySchemes: {
      apiKey: {
        type: "apiKey",
        in: "header",
        name: "Authorization",
        description: "`Authorization: ApiKey {username}:{api_key}` (scheme name case-insensitive).",
      },
      basic: { type: "http", scheme: "basic", description: "`Authorization: Basic base64({username}:{password})`." },
      digest: { type: "http", scheme: "digest", description: "RFC 7616 Digest, MD5 or SHA-256, qop=auth; challenged on 401." },
      bearer: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "opaque or JWT",
        description:
          "OAuth 2.0 access token from POST /oauth/token (scope `access_apis`), or, when `OIDC_ISSUER` is set, a JWT access token from that OpenID provider naming a user of this service.",
      },
    },
  },
};

type OpenApiDocument = typeof openApiDocument;
