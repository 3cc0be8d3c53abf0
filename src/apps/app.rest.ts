import express, { type Request, type Router } from "express";
import { handler, locals, route } from "../rest/middleware.ts";
import { readMultipart } from "../rest/multipart.ts";
import type { AppService } from "./app.service.ts";

/**
 * REST adapter of the Import App API's import (CONTRACT §4 "POST import_app/"), mounted at
 * /a/{domain}/apps/api beside the multimedia routes (multimedia/multimedia.rest.ts).
 */

export interface AppRouterDeps {
  apps: AppService;
  /** where uploads are spooled while the request is read */
  uploadTempDir: () => Promise<string>;
  uploadLimitBytes: number;
  appSourceLimitBytes: number;
  /** the text fields of a multipart body together (BODY_LIMIT_BYTES) */
  formFieldsLimitBytes: number;
}

/** The fields of the import's multipart body (apps/app.openapi.ts documents them). */
export const IMPORT_FIELDS = { file: "app_file", name: "app_name", id: "app_id" } as const;

export function appRouter({ apps, uploadTempDir, uploadLimitBytes, appSourceLimitBytes, formFieldsLimitBytes }: AppRouterDeps): Router {
  const router = express.Router({ mergeParams: true });
  const domainOf = (req: Request) => String(req.params.domain);

  route(router, "/import_app/", {
    POST: handler(async (req, res) => {
      const scope = await apps.in(locals(res).principal, domainOf(req)); // permission before reading the upload
      // an application file over its own limit is refused (413) while it streams in
      const maxFileBytes = Math.min(uploadLimitBytes, appSourceLimitBytes);
      const body = await readMultipart(req, {
        tempDir: await uploadTempDir(),
        fileFields: [IMPORT_FIELDS.file],
        maxFileBytes,
        maxFieldBytes: formFieldsLimitBytes,
      });
      try {
        const { files, fields } = body;
        const result = await scope.importApp({
          file: files[IMPORT_FIELDS.file],
          appName: fields[IMPORT_FIELDS.name],
          appId: fields[IMPORT_FIELDS.id],
        });
        const warnings = result.warnings.length ? { warnings: result.warnings } : {};
        if (result.created) res.status(201).json({ success: true, app_id: result.appId, ...warnings });
        else res.status(200).json({ success: true, app_id: result.appId, version: result.version, ...warnings });
      } finally {
        await body.cleanup();
      }
    }),
  });
  return router;
}
