import { readFileSync } from "node:fs";
import type { RequestHandler } from "express";
import { ruruHTML } from "ruru/server";
import { getStaticFile } from "ruru/static";

/**
 * The GraphQL IDE for browsers (CONTRACT §7.3): Ruru, Graphile's build of GraphiQL, from the files
 * of the installed `ruru` package, opened by a sign-in step of our own (public/sign-in.js): the
 * page asks for an API key, a password or an access token first, checks it with `{ me }`, then
 * starts the IDE, whose requests and subscriptions (as the `connection_init` payload) carry that
 * `Authorization` unless the Headers tab sets another, with the schema loaded for the Docs pane and
 * an example query that works for that user. Nothing is loaded from anywhere else: the
 * Content-Security-Policy says so to the browser. The page and its files need no credentials.
 */

const ASSETS = "/graphql/ide/";

/** The sign-in step's own files (public/), by name, with their types. */
const OWN_FILE_TYPES: Record<string, string> = {
  "sign-in.js": "text/javascript; charset=utf-8",
  "sign-in.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

/** The sign-in step's files as served, beside Ruru's under ASSETS: read once, at start. */
const OWN_FILES = new Map<string, { type: string; content: Buffer }>(
  Object.entries(OWN_FILE_TYPES).map(
    ([name, type]) => [`${ASSETS}${name}`, { type, content: readFileSync(new URL(`./public/${name}`, import.meta.url)) }] as const,
  ),
);

/**
 * Another way to sign in, offered as a button beside the form: a module of this server that runs
 * a browser flow such as OpenID Connect's authorization code with PKCE. The module exports
 * `start()`, which leaves for the provider, and `resume()`, which the page calls first on every
 * load: it completes a return from the provider, resolving to the `Authorization` value to use
 * (e.g. `Bearer …`), or to null when the page was not opened by one.
 */
export interface IdeExternalSignIn {
  /** the button's text, e.g. "Sign in with Example ID" */
  label: string;
  /** the module's path on this server, from its root (PUBLIC_URL's path goes before it) */
  module: string;
  /** origins the module must reach with fetch (e.g. the provider's token endpoint), asked at each page load */
  connectTo?: () => Promise<readonly string[]>;
}

const contentSecurityPolicy = (connectTo: readonly string[]) =>
  [
    "default-src 'self'",
    // Ruru's theme and layout set-up is an inline script
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    // Monaco's editor workers; WebSocket to this server ('self' covers ws: and wss: of the same host)
    "worker-src 'self' blob:",
    ["connect-src 'self'", ...connectTo].join(" "),
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

/** JSON inside a `<script>` element: no `</script>` or `<!--` can end it early. */
const scriptJson = (value: unknown) => JSON.stringify(value, null, 2).replace(/</g, "\\u003c");

/** The sign-in step, shown until the user is signed in; then the session bar above the IDE. */
const SIGN_IN = `
<main id="ide-sign-in" class="ide-sign-in">
  <h1>GraphQL IDE</h1>
  <p>Sign in to load the schema and run operations as your user.</p>
  <form id="ide-sign-in-form">
    <fieldset>
      <legend>Sign in with</legend>
      <label><input type="radio" name="method" value="apikey" checked /> API key</label>
      <label><input type="radio" name="method" value="password" /> Password</label>
      <label><input type="radio" name="method" value="token" /> Access token</label>
    </fieldset>
    <label id="ide-username-field">Username <input id="ide-username" name="username" autocomplete="username" required /></label>
    <label><span id="ide-secret-label">API key</span> <input id="ide-secret" name="secret" type="password" autocomplete="off" required /></label>
    <button type="submit" id="ide-sign-in-button">Sign in</button>
    <p id="ide-sign-in-error" class="ide-error" role="alert" hidden></p>
  </form>
  <p id="ide-external" hidden><button type="button" id="ide-external-button"></button></p>
  <p class="ide-note">An API key stays in this tab until it closes; a password or a token only while the page is open.</p>
</main>
<header id="ide-session" class="ide-session" hidden>
  <span>Signed in as <strong id="ide-user"></strong></span>
  <button type="button" id="ide-sign-out">Sign out</button>
</header>
`;

function page(base: string, prefix: string, signIn: IdeExternalSignIn | undefined): string {
  const assets = `${prefix}${ASSETS}`;
  return ruruHTML({
    endpoint: `${prefix}/graphql`,
    subscriptionEndpoint: webSocketUrl(base),
    staticPath: assets,
    clientConfig: { isHeadersEditorEnabled: true },
    htmlParts: {
      titleTag: "<title>GraphQL IDE</title>",
      metaTags: (tags: string) => `${tags}\n<link rel="icon" href="${assets}favicon.svg" type="image/svg+xml" />`,
      styleTags: (tags: string) => `${tags}\n<link rel="stylesheet" href="${assets}sign-in.css" />`,
      // the configuration as data, read by sign-in.js: Ruru's props and the sign-in's options
      configScript: (_script: string, ruru: object) =>
        `<script type="application/json" id="ide-config">${scriptJson({ ruru, externalSignIn: signIn ? { label: signIn.label, module: `${prefix}${signIn.module}` } : null })}</script>`,
      bodyContent: (content: string) => `${SIGN_IN}\n${content}`,
      // sign-in.js starts Ruru once the user is signed in, not at load (when it has no credentials)
      bodyInitScript: `<script type="module" src="${assets}sign-in.js"></script>`,
    },
  });
}

/**
 * GET /graphql from a browser, and the IDE's files under /graphql/ide/, before /graphql's admission.
 * `publicUrl` (PUBLIC_URL) places the page behind a reverse proxy; without it the request's own
 * scheme and host (X-Forwarded-* under TRUST_PROXY) do. `signIn` adds a sign-in of another kind.
 */
export function graphqlIde(publicUrl: string | undefined, signIn?: IdeExternalSignIn): RequestHandler {
  const prefix = publicUrl ? new URL(publicUrl).pathname.replace(/\/$/, "") : "";
  // a plain handler, not an express Router: a Router would answer OPTIONS /graphql itself (Allow: GET)
  return async (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    if (req.path === "/graphql") {
      if (!wantsPage(req)) return next();
      const base = publicUrl ?? `${req.protocol}://${req.get("host")}`;
      const policy = contentSecurityPolicy((await signIn?.connectTo?.()) ?? []);
      res.set({ "Content-Security-Policy": policy, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" });
      return void res
        .vary("Accept")
        .type("html")
        .send(page(base, prefix, signIn));
    }
    if (!req.path.startsWith(ASSETS)) return next();
    const own = OWN_FILES.get(req.path);
    // the sign-in's files change with each version of the server: the browser asks again each load
    if (own) return void res.set({ "Content-Type": own.type, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff" }).end(own.content);
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
