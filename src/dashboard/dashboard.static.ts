import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import express, { type RequestHandler, type Router } from "express";
import { DomainError, serviceUnavailable } from "../errors.ts";
import type { OidcTokens, ProviderMetadata } from "../auth/oidc.ts";
import type { IdeExternalSignIn } from "../graphql/ide/ide.ts";

/**
 * GET /dashboard/ (CONTRACT §7.4): the upload dashboard, a page of static files that speaks only
 * the public GraphQL API. Everything it loads comes from this server: its own files under public/
 * and graphql-ws's browser client straight from node_modules (an ES module, so no build step).
 *
 * With OIDC_ISSUER and OIDC_CLIENT_ID the page also signs in through the identity provider (the
 * authorization code flow with PKCE, public/oidc.js): `config.json` tells it the provider's
 * endpoints, and the page may then call the provider's token endpoint as well as this server.
 */

const PUBLIC_DIR = fileURLToPath(new URL("./public/", import.meta.url));
/** graphql-ws's dist folder: the client module and the shared chunk it imports by a relative path */
const GRAPHQL_WS_DIR = path.dirname(createRequire(import.meta.url).resolve("graphql-ws/client"));
/** only the browser client's files, not the rest of the package (its server code) */
const GRAPHQL_WS_CLIENT_FILE = /^\/(client|common-[\w-]+)\.js$/;

/**
 * The one inline script the page has: its import map, which names graphql-ws's client for the
 * page's modules. A browser runs it only if the policy names its hash.
 */
function importMapHash(): string {
  const html = readFileSync(path.join(PUBLIC_DIR, "index.html"), "utf8");
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html);
  if (!importMap) throw new Error("src/dashboard/public/index.html has no import map");
  return `'sha256-${createHash("sha256").update(importMap[1]).digest("base64")}'`;
}

/**
 * The page talks to its own origin only (fetch and WebSocket on /graphql), and to the identity
 * provider's token endpoint when it signs in there; no other inline script, no inline style, no
 * framing (clickjacking), no referrer (the provider's one-time code is in the page's address).
 */
const contentSecurityPolicy = (scriptSrc: string, tokenEndpoint: string | undefined) =>
  [
    "default-src 'none'",
    scriptSrc,
    "style-src 'self'",
    "img-src 'self' data:",
    tokenEndpoint ? `connect-src 'self' ${new URL(tokenEndpoint).origin}` : "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");

/**
 * The dashboard's sign-in through OIDC_ISSUER: the public client's settings, and the provider's
 * metadata or the DomainError (503) of a provider away.
 */
type DashboardOidc = Pick<OidcTokens, "settings" | "metadata">;

/** The provider's metadata when the dashboard signs in there and it can be read; else undefined. */
async function signInMetadata(oidc: DashboardOidc | undefined): Promise<ProviderMetadata | undefined> {
  if (!oidc?.settings.clientId) return undefined;
  return oidc.metadata().catch(() => undefined);
}

function securityHeaders(oidc: DashboardOidc | undefined): RequestHandler {
  const scriptSrc = `script-src 'self' ${importMapHash()}`;
  return async (req, res, next) => {
    // only the page itself runs under its policy: its files are not kept waiting for the provider
    const page = req.path === "/" || req.path === "/index.html";
    const metadata = page ? await signInMetadata(oidc) : undefined;
    res.set({
      "Content-Security-Policy": contentSecurityPolicy(scriptSrc, metadata?.tokenEndpoint),
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      // a new version of the page is picked up at the next load
      "Cache-Control": "no-cache",
    });
    next();
  };
}

/**
 * GET config.json: `{"oidc": null}` when the dashboard does not sign in through a provider; else
 * the provider's issuer and endpoints and the public client's id and scopes. A provider out of
 * reach: 503 `{"error"}`, and the page offers the other sign-ins.
 */
function signInSettings(oidc: DashboardOidc | undefined): RequestHandler {
  return async (_req, res) => {
    if (!oidc?.settings.clientId) return void res.json({ oidc: null });
    let metadata: ProviderMetadata;
    try {
      metadata = await oidc.metadata();
    } catch (error) {
      const refusal = error instanceof DomainError ? error : serviceUnavailable();
      return void res.status(refusal.status).set(refusal.headers).json({ error: refusal.message });
    }
    const { issuer, clientId, scope } = oidc.settings;
    const { authorizationEndpoint, tokenEndpoint } = metadata;
    if (!authorizationEndpoint || !tokenEndpoint) {
      return void res.status(503).json({ error: "The identity provider's discovery document names no authorization or token endpoint." });
    }
    res.json({ oidc: { issuer, clientId, scope, authorizationEndpoint, tokenEndpoint } });
  };
}

/**
 * The GraphQL IDE's button for the same sign-in (public/ide-sign-in.js, the same code + PKCE
 * flow): offered when the dashboard signs in through the provider. The IDE's page (/graphql) is
 * then a redirect URI the provider must know for OIDC_CLIENT_ID, beside /dashboard/.
 */
export function ideSignInThroughProvider(oidc: DashboardOidc | undefined): IdeExternalSignIn | undefined {
  if (!oidc?.settings.clientId) return undefined;
  return {
    label: "Sign in with your organisation's account",
    module: "/dashboard/ide-sign-in.js",
    connectTo: async () => {
      const tokenEndpoint = (await signInMetadata(oidc))?.tokenEndpoint;
      return tokenEndpoint ? [new URL(tokenEndpoint).origin] : [];
    },
  };
}

const onlyClientFiles: RequestHandler = (req, _res, next) => (GRAPHQL_WS_CLIENT_FILE.test(req.path) ? next() : next("router"));

export function dashboardRouter(oidc?: DashboardOidc): Router {
  const statics = { index: "index.html", fallthrough: true, dotfiles: "ignore" } as const;
  const router = express.Router();
  router.use(securityHeaders(oidc));
  router.get("/config.json", signInSettings(oidc));
  router.use("/vendor/graphql-ws", onlyClientFiles, express.static(GRAPHQL_WS_DIR, { index: false, dotfiles: "ignore" }));
  router.use(express.static(PUBLIC_DIR, statics));
  return router;
}
