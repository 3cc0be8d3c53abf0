import express, { type Router } from "express";
import { clientAddress } from "../admission/client-address.ts";
import { handler, route } from "../rest/middleware.ts";
import { restErrorHandler } from "../rest/errors.ts";
import type { OAuthService } from "./oauth.ts";

/** `POST /oauth/token` (RFC 6749 §3.2): form-encoded, client authenticated by Basic or body. */
export function oauthRouter(oauth: OAuthService, bodyLimitBytes: number): Router {
  const router = express.Router();
  // Only the token endpoint takes a form: mounted at the root, this router sees every request.
  router.use("/oauth/token", express.urlencoded({ extended: false, limit: bodyLimitBytes }));
  route(router, "/oauth/token", {
    POST: handler(async (req, res) => {
      const result = await oauth.token({ method: req.method, headers: req.headers, query: req.query, body: req.body, address: clientAddress(req) });
      res.status(result.status).set(result.headers).json(result.body);
    }),
  });
  router.use("/oauth", restErrorHandler("plain"));
  return router;
}
