import { once } from "node:events";
import { pipeline } from "node:stream/promises";
import express, { type Request, type Response, type Router } from "express";
import type { Principal } from "../auth/principal.ts";
import { notFound } from "../errors.ts";
import { log } from "../log.ts";
import { handler, locals, route } from "../rest/middleware.ts";
import { readMultipart } from "../rest/multipart.ts";
import type { ByteRange } from "./blob-store.ts";
import type { MediaFileContent, MultimediaJobService } from "./job.service.ts";
import { restStatus } from "./job.serializer.ts";

/**
 * REST adapter of the Import App API's multimedia routes (CONTRACT §4): upload, status and the
 * stored files, mounted at /a/{domain}/apps/api in the apps family (after the import route).
 */

export interface MultimediaRouterDeps {
  multimedia: MultimediaJobService;
  uploadLimitBytes: number;
  /** the text fields of a multipart body together (BODY_LIMIT_BYTES) */
  formFieldsLimitBytes: number;
}

export function multimediaRouter({ multimedia, uploadLimitBytes, formFieldsLimitBytes }: MultimediaRouterDeps): Router {
  const router = express.Router({ mergeParams: true });
  /** The app's multimedia: 401/403/404 for the domain, then 404 for the app, before any input is read. */
  const appOf = async (req: Request, principal: Principal) =>
    (await multimedia.in(principal, String(req.params.domain))).app(String(req.params.appId));

  route(router, "/:appId/multimedia/", {
    POST: handler(async (req, res) => {
      const app = await appOf(req, locals(res).principal); // permission and app before reading the upload
      const intake = await app.intake(declaredLength(req)); // the queue's room and the disk's too
      // the archive streams into the blob store as it arrives
      const body = await readMultipart(req, {
        tempDir: intake.tempDir,
        fileFields: [],
        receivers: { bulk_upload_file: intake.receive },
        maxFileBytes: uploadLimitBytes,
        maxFieldBytes: formFieldsLimitBytes,
      });
      try {
        const archive = body.received.bulk_upload_file;
        const processingId = await app.upload(archive && { staged: archive.received, filename: archive.filename });
        res.status(200).json({ success: true, processing_id: processingId });
      } finally {
        await body.cleanup();
      }
    }),
  });

  route(router, "/:appId/multimedia/status/:processingId/", {
    GET: handler(async (req, res) => {
      const app = await appOf(req, locals(res).principal);
      res.json(restStatus(await app.status(String(req.params.processingId))));
    }),
  });

  route(router, "/:appId/multimedia/file/{*path}", {
    GET: handler(async (req, res) => {
      const app = await appOf(req, locals(res).principal);
      // the path as sent, `/` and all (the router has already refused a malformed escape)
      const path = decodeURIComponent(req.originalUrl.split("?")[0].replace(/^.*?\/multimedia\/file\//, ""));
      const found = await app.file(path);
      const range = found ? requestedRange(req, found.file.size) : undefined;
      if (range === "unsatisfiable") return void res.status(416).set("Content-Range", `bytes */${found!.file.size}`).end();
      const content = await found?.read(range);
      if (!content) throw notFound(`No multimedia file at '${path}'`);
      await send(content, res, path);
    }),
  });
  return router;
}

/**
 * A stored file is whatever a member uploaded, typed by its magic bytes or else its name: markup
 * named .png is served as image/png, and an SVG as image/svg+xml, which a browser opening it runs
 * as a document (#24 G8). So the browser must take the type as given (nosniff), and whatever it
 * renders gets no script, no subresources and an origin of its own (a sandboxing policy).
 */
const MEDIA_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
};

/** The body's size as the request declares it (Content-Length), if it does. */
function declaredLength(req: Request): number | undefined {
  const length = Number(req.headers["content-length"]);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/**
 * The one byte range a request asks for (RFC 9110 §14.2) of a file of `size` bytes; undefined for
 * the whole file. A request without Range, with several ranges, a malformed one, or with If-Range
 * (no validator is sent, so none can match) is answered whole; a range past the end, 416.
 */
function requestedRange(req: Request, size: number): ByteRange | "unsatisfiable" | undefined {
  if (!req.headers.range || req.headers["if-range"]) return undefined;
  const ranges = req.range(size);
  if (ranges === -1) return "unsatisfiable";
  if (!Array.isArray(ranges) || ranges.type !== "bytes" || ranges.length !== 1) return undefined;
  return { start: ranges[0]!.start, end: ranges[0]!.end };
}

/**
 * Sends a stored file's bytes, or the range asked for (206 with Content-Range). A failure of its stream ends this response only: before any byte
 * (the file does not open, the database is gone at the first chunk) it is thrown, for the family's
 * error body; once the headers are out the response is cut short (the client sees a truncated
 * body, never a wrong one) and the failure logged.
 */
async function send({ file, stream: source, range }: MediaFileContent, res: Response, path: string): Promise<void> {
  // the first chunk (or the end) before any header is set; `once` rejects on 'error'
  await once(source, "readable");
  res
    .status(range ? 206 : 200)
    .type(file.contentType)
    .set({ "Content-Length": String(range ? range.end - range.start + 1 : file.size), ...MEDIA_HEADERS });
  if (range) res.set("Content-Range", `bytes ${range.start}-${range.end}/${file.size}`);
  try {
    await pipeline(source, res);
  } catch (error) {
    res.destroy();
    // a client that hung up is not a failure of ours
    if ((error as { code?: string }).code === "ERR_STREAM_PREMATURE_CLOSE") return;
    log.error("multimedia file download failed", { path, error });
  }
}
