import { createHash } from "node:crypto";
import express, { type Router } from "express";

/**
 * `GET /`: where a newcomer lands. A browser (Accept preferring text/html) gets a small page
 * linking the GraphQL IDE, the REST API's docs page, the upload dashboard and the probes; any
 * other client gets the same links as JSON. No authentication: it names only public paths.
 */

export interface HomeOptions {
  /** GRAPHQL_IDE: link the IDE only when `GET /graphql` serves it */
  graphqlIde: boolean;
}

interface Link {
  key: string;
  /** from the server's root; the page links it relatively, so that it also works under a path prefix */
  path: string;
  title: string;
  about: string;
}

function links({ graphqlIde }: HomeOptions): Link[] {
  return [
    graphqlIde
      ? { key: "graphqlIde", path: "/graphql", title: "GraphQL IDE", about: "queries, mutations and subscriptions in the browser" }
      : { key: "graphql", path: "/graphql", title: "GraphQL", about: "the GraphQL endpoint (POST, and WebSocket subscriptions)" },
    { key: "apiDocs", path: "/docs/", title: "REST API docs", about: "every REST path, from the OpenAPI document" },
    { key: "openApi", path: "/openapi.json", title: "OpenAPI document", about: "the REST API as OpenAPI 3.1" },
    { key: "dashboard", path: "/dashboard/", title: "Upload dashboard", about: "multimedia uploads of a domain, live" },
    { key: "livez", path: "/livez", title: "/livez", about: "liveness probe" },
    { key: "readyz", path: "/readyz", title: "/readyz", about: "readiness probe" },
    { key: "metrics", path: "/metrics", title: "/metrics", about: "Prometheus metrics" },
  ];
}

const STYLE = "body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}li{margin:.4rem 0}";

/** No script at all; the one inline style is allowed by its hash, nothing is loaded from anywhere. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function page(list: Link[]): string {
  const items = list.map((link) => `<li><a href="${link.path.slice(1) || "."}">${link.title}</a>: ${link.about}</li>`).join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Field-data gateway</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Field-data gateway</h1>
<p>GraphQL and REST over cases, locations and applications.</p>
<ul>
${items}
</ul>
</body>
</html>
`;
}

export function homeRouter(options: HomeOptions): Router {
  const list = links(options);
  const html = page(list);
  const json = JSON.stringify({ name: "field-data-gateway", links: Object.fromEntries(list.map((link) => [link.key, link.path])) });
  const router = express.Router();
  router.get("/", (req, res) => {
    res.set({
      "Content-Security-Policy": CONTENT_SECURITY_POLICY,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "Cache-Control": "no-cache",
    });
    // the answer depends on Accept: a cache must not give a browser's page to an API client
    res.vary("Accept");
    // JSON first: a client that accepts anything (curl's */*, or no Accept) gets JSON
    if (req.accepts(["json", "html"]) === "html") res.type("html").send(html);
    else res.type("json").send(json);
  });
  return router;
}
