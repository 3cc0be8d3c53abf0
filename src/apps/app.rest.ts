import express, { type Request, type Router } from "express";
import { notFound } from "../errors.ts";
import { handler, locals, route } from "../rest/middleware.ts";
import { readMultipart } from "../rest/multipart.ts";
import type { Services } from "../services.ts";

/** REST adapter of the Import App API (CONTRACT §4), mounted at /a/{domain}/apps/api. */

export function appRouter(services: Services): Router {
  const { apps, multimediaJobs, blobs, config } = services;
  const router = express.Router({ mergeParams: true });
  const domainOf = (req: Request) => String(req.params.domain);
  const multipart = async (req: Request, fileFields: string[], maxFileBytes = config.uploadLimitBytes) =>
    readMultipart(req, { tempDir: await blobs.tempDir(), fileFields, maxFileBytes });

  route(router, "/import_app/", {
    POST: handler(async (req, res) => {
      const principal = locals(res).principal;
      await apps.domain(principal, domainOf(req)); // permission before reading the upload
      // an application file over its own limit is refused (413) while it streams in
      const body = await multipart(req, ["app_file"], Math.min(config.uploadLimitBytes, config.appSourceLimitBytes));
      try {
        const result = await apps.importApp(principal, domainOf(req), {
          file: body.files.app_file,
          appName: body.fields.app_name,
          appId: body.fields.app_id,
        });
        const warnings = result.warnings.length ? { warnings: result.warnings } : {};
        if (result.created) res.status(201).json({ success: true, app_id: result.appId, ...warnings });
        else res.status(200).json({ success: true, app_id: result.appId, version: result.version, ...warnings });
      } finally {
        await body.cleanup();
      }
    }),
  });

  route(router, "/:appId/multimedia/", {
    POST: handler(async (req, res) => {
      const principal = locals(res).principal;
      await apps.app(await apps.domain(principal, domainOf(req)), String(req.params.appId)); // 403 / 404 first
      const body = await multipart(req, ["bulk_upload_file"]);
      try {
        const processingId = await multimediaJobs.upload(principal, domainOf(req), String(req.params.appId), body.files.bulk_upload_file);
        res.status(200).json({ success: true, processing_id: processingId });
      } finally {
        await body.cleanup();
      }
    }),
  });

  route(router, "/:appId/multimedia/status/:processingId/", {
    GET: handler(async (req, res) => {
      res.json(await multimediaJobs.status(locals(res).principal, domainOf(req), String(req.params.appId), String(req.params.processingId)));
    }),
  });

  route(router, "/:appId/multimedia/file/{*path}", {
    GET: handler(async (req, res) => {
      const path = decodeURIComponent(req.originalUrl.split("?")[0].replace(/^.*?\/multimedia\/file\//, ""));
      const file = await apps.mediaFile(locals(res).principal, domainOf(req), String(req.params.appId), path);
      const stream = file && (await blobs.stream(file.blobKey));
      if (!file || !stream) throw notFound(`No multimedia file at '${path}'`);
      res.status(200).type(file.contentType).set("Content-Length", String(file.size));
      stream.pipe(res);
    }),
  });
  return router;
}
