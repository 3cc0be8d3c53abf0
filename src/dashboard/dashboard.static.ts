import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import express, { type RequestHandler, type Router } from "express";

/**
 * GET /dashboard/ (CONTRACT §7.4): the upload dashboard, a page of static files that speaks only
 * the public GraphQL API. Everything it loads comes from this server: its own files under public/
 * and graphql-ws's browser client straight from node_modules (an ES module, so no build step).
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
 * The page talks to its own origin only (fetch and WebSocket on /graphql); no other inline script,
 * no inline style, no framing (clickjacking), no referrer.
 */
const contentSecurityPolicy = () =>
  [
    "default-src 'none'",
    `script-src 'self' ${importMapHash()}`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");

function securityHeaders(policy: string): RequestHandler {
  return (_req, res, next) => {
    res.set({
      "Content-Security-Policy": policy,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      // a new version of the page is picked up at the next load
      "Cache-Control": "no-cache",
    });
    next();
  };
}

const onlyClientFiles: RequestHandler = (req, _res, next) => (GRAPHQL_WS_CLIENT_FILE.test(req.path) ? next() : next("router"));

export function dashboardRouter(): Router {
  const statics = { index: "index.html", fallthrough: true, dotfiles: "ignore" } as const;
  const router = express.Router();
  router.use(securityHeaders(contentSecurityPolicy()));
  router.use("/vendor/graphql-ws", onlyClientFiles, express.static(GRAPHQL_WS_DIR, { index: false, dotfiles: "ignore" }));
  router.use(express.static(PUBLIC_DIR, statics));
  return router;
}
