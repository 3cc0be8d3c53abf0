import { createRequire } from "node:module";
import path from "node:path";
import express, { type Router } from "express";

/**
 * `GET /openapi.json` and `GET /docs/` (CONTRACT §7.2): the document, and Swagger UI over it, served
 * from this project's files and the installed swagger-ui-dist. No authentication. The page's
 * Content-Security-Policy lets it load nothing but this server's own files.
 */

const swaggerUi = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const ownFiles = path.join(import.meta.dirname, "docs");

/** Every file the page loads, by name under /docs/: nothing else of either folder is served. */
const DOCS_ASSETS: Record<string, string> = {
  "": path.join(ownFiles, "index.html"),
  "docs.js": path.join(ownFiles, "docs.js"),
  "swagger-ui.css": path.join(swaggerUi, "swagger-ui.css"),
  "swagger-ui-bundle.js": path.join(swaggerUi, "swagger-ui-bundle.js"),
  "favicon-32x32.png": path.join(swaggerUi, "favicon-32x32.png"),
};

const DOCS_CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  // Swagger UI sets style attributes from script
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** `document`: the OpenAPI document, which src/gateway assembles from the features' descriptions. */
export function openApiRouter(document: object): Router {
  const documentJson = JSON.stringify(document);
  const router = express.Router();
  router.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(documentJson);
  });
  // the page's asset URLs are relative to /docs/
  // (the router is not strict: this route also sees /docs/)
  router.get("/docs", (req, res, next) => (req.path.endsWith("/") ? next() : res.redirect(301, "docs/")));
  router.get("/docs/{:file}", (req, res, next) => {
    const file = DOCS_ASSETS[String(req.params.file ?? "")];
    if (!file) return next();
    res.set("Content-Security-Policy", DOCS_CSP);
    res.sendFile(file, { maxAge: "1h" });
  });
  return router;
}
