import type { RequestHandler } from "express";
import { ruruHTML } from "ruru/server";
import { getStaticFile } from "ruru/static";

/**
 * The GraphQL IDE for browsers (CONTRACT §7.3): Ruru, Graphile's build of GraphiQL, from the files
 * of the installed `ruru` package: the page, its scripts, styles, fonts and editor workers are all
 * served here, and its Content-Security-Policy lets it load nothing from anywhere else. The page and
 * its files need no credentials; the calls it makes to /graphql carry the headers the user sets in
 * its Headers tab (`{"Authorization": "ApiKey user:key"}`), which it also sends as the
 * `connection_init` payload of its graphql-transport-ws subscriptions.
 */

const ASSETS = "/graphql/ide/";

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  // the page's configuration and start-up are inline scripts
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  // Monaco's editor workers; WebSocket to this server ('self' covers ws: and wss: of the same host)
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/** `ws://host/graphql` for `http://host`: where the page opens its subscriptions. */
const webSocketUrl = (base: string) => `${base.replace(/^http/, "ws")}/graphql`;

/** A plain browser visit: a GET that prefers HTML to JSON (API clients send JSON types, or nothing). */
const wantsPage: (req: Parameters<RequestHandler>[0]) => boolean = (req) =>
  (req.method === "GET" || req.method === "HEAD") &&
  req.accepts(["application/json", "application/graphql-response+json", "text/html"]) === "text/html";

/**
 * The IDE's calls carry only the headers the user sets, never credentials the browser keeps for
 * this server: with `credentials: "omit"` a 401 (whose Basic and Digest challenges the contract
 * requires) does not make the browser ask for a password, as it would for a same-origin fetch.
 */
const FETCH_WITHOUT_BROWSER_CREDENTIALS = `<script>
  const fetchWithCredentials = window.fetch.bind(window);
  window.fetch = (input, init) => fetchWithCredentials(input, { ...init, credentials: "omit" });
</script>`;

const DEFAULT_QUERY = `# The field-data gateway's GraphQL IDE. Put your credentials in Headers below, e.g.
#   {"Authorization": "ApiKey username:api_key"}
# then run this query (Ctrl-Enter). Subscriptions run over WebSocket with the same headers.
{
  me {
    username
  }
}
`;

function page(base: string, prefix: string): string {
  return ruruHTML({
    htmlParts: { headerScripts: (scripts: string) => `${FETCH_WITHOUT_BROWSER_CREDENTIALS}\n${scripts}` },
    endpoint: `${prefix}/graphql`,
    subscriptionEndpoint: webSocketUrl(base),
    staticPath: `${prefix}${ASSETS}`,
    clientConfig: { isHeadersEditorEnabled: true, defaultQuery: DEFAULT_QUERY },
  });
}

/**
 * GET /graphql from a browser, and the IDE's files under /graphql/ide/, before /graphql's admission.
 * `publicUrl` (PUBLIC_URL) places the page behind a reverse proxy; without it the request's own
 * scheme and host (X-Forwarded-* under TRUST_PROXY) do.
 */
export function graphqlIde(publicUrl: string | undefined): RequestHandler {
  const prefix = publicUrl ? new URL(publicUrl).pathname.replace(/\/$/, "") : "";
  // a plain handler, not an express Router: a Router would answer OPTIONS /graphql itself (Allow: GET)
  return async (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    if (req.path === "/graphql") {
      if (!wantsPage(req)) return next();
      const base = publicUrl ?? `${req.protocol}://${req.get("host")}`;
      res.set({ "Content-Security-Policy": CONTENT_SECURITY_POLICY, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" });
      return void res.vary("Accept").type("html").send(page(base, prefix));
    }
    if (!req.path.startsWith(ASSETS)) return next();
    try {
      const file = await getStaticFile({
        staticPath: ASSETS,
        urlPath: req.path,
        acceptEncoding: req.get("accept-encoding"),
        disallowDevAssets: true,
      });
      if (!file) return next();
      res.set({ ...file.headers, "Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff" }).vary("Accept-Encoding");
      res.end(file.content);
    } catch (error) {
      next(error);
    }
  };
}
