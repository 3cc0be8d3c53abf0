import { APP_ID, APPS_TAG, multipart } from "../apps/app.openapi.ts";
import { DOMAIN, header, json, ok, operation, pathItem, pathParam, type FeatureDocument } from "../openapi/operations.ts";
import { ordered, ref, string, tableSchema, type Schema } from "../openapi/schema.ts";
import { MATCHED_FILE_KEYS, REASONED_KEYS, RESULT_KEYS, STATUS_KEYS } from "./job.serializer.ts";

/**
 * The Import App API's multimedia routes in the OpenAPI document (CONTRACT §4): upload, status and
 * the stored files. The status record's schemas are built from job.serializer.ts's key tables.
 */

const APPS = "/a/{domain}/apps/api";

const keySchemas = (table: Record<string, { schema: Schema }>) => Object.fromEntries(Object.entries(table).map(([k, { schema }]) => [k, schema]));

const schemas: Record<string, Schema> = {
  MultimediaUploadResult: ordered("A multimedia upload accepted for processing.", {
    success: { const: true },
    processing_id: string("the id to poll", { pattern: "^dl-[0-9a-f]{32}$" }),
  }),
  MatchedFile: tableSchema("A stored multimedia file matched to a path of the application.", MATCHED_FILE_KEYS),
  ReasonedEntry: tableSchema("An archive entry that was not stored, and why.", REASONED_KEYS),
  MultimediaStatus: {
    description: "The status record: the result keys only once complete.",
    oneOf: [ref("MultimediaStatusInProgress"), ref("MultimediaStatusComplete")],
  },
  MultimediaStatusInProgress: ordered("Queued or running.", {
    ...keySchemas(STATUS_KEYS),
    complete: { const: false },
    in_queue: { const: true },
  }),
  MultimediaStatusComplete: ordered("Finished: the result follows.", {
    ...keySchemas(STATUS_KEYS),
    complete: { const: true },
    in_queue: { const: false },
    ...keySchemas(RESULT_KEYS),
  }),
};

const paths = {
  [`${APPS}/{app_id}/multimedia/`]: pathItem("apps", [DOMAIN, APP_ID], {
    post: operation("apps", APPS_TAG, "uploadMultimedia", {
      summary: "Upload a ZIP of multimedia files for processing",
      requestBody: multipart(
        { bulk_upload_file: { type: "string", contentMediaType: "application/zip", description: "a ZIP archive" } },
        ["bulk_upload_file"],
        "bulk_upload_file",
        "application/zip",
      ),
      description:
        "429 (with Retry-After) when the domain's archives waiting to be processed would pass MULTIMEDIA_QUEUE_LIMIT_BYTES; " +
        "507 when the server's disk lacks the space to spool the upload (UPLOAD_MIN_FREE_BYTES).",
      responses: {
        "200": ok("Accepted: poll the status with the processing id.", "MultimediaUploadResult"),
        "507": { description: "Not enough free disk space to accept the upload.", content: json(ref("AppsError")) },
      },
    }),
  }),
  [`${APPS}/{app_id}/multimedia/status/{processing_id}/`]: pathItem("apps", [DOMAIN, APP_ID, pathParam("processing_id", "the id of the upload")], {
    get: operation("apps", APPS_TAG, "multimediaStatus", {
      summary: "Progress and, once complete, the result of a multimedia upload",
      description: "404 `Processing ID not found or expired` for an unknown, foreign or expired id.",
      responses: {
        "200": ok("The status record.", "MultimediaStatus"),
        "500": {
          description: "The processing task failed: `Multimedia processing task failed`.",
          content: json({ allOf: [ref("AppsError"), { type: "object", properties: { error: { const: "Multimedia processing task failed" } } }] }),
        },
      },
    }),
  }),
  [`${APPS}/{app_id}/multimedia/file/{path}`]: pathItem(
    "apps",
    [DOMAIN, APP_ID, pathParam("path", "the application's media path after jr://file/ (may hold /)", { type: "string", pattern: "^.+$" })],
    {
      get: operation("apps", APPS_TAG, "multimediaFile", {
        summary: "The bytes of a stored multimedia file of the application",
        responses: {
          "200": {
            description:
              "The file, with its content type from its magic bytes or else its name; never to be sniffed, and sandboxed when a browser renders it.",
            headers: {
              "X-Content-Type-Options": header("nosniff"),
              "Content-Security-Policy": header("default-src 'none'; style-src 'unsafe-inline'; sandbox"),
            },
            content: { "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } },
          },
          "206": {
            description:
              "The one byte range the `Range` header asked for (`bytes=first-last`, `bytes=first-` or `bytes=-suffix`), as for 200. Several ranges, or an `If-Range`, are answered whole (200).",
            headers: {
              "Content-Range": header("bytes first-last/size"),
              "X-Content-Type-Options": header("nosniff"),
              "Content-Security-Policy": header("default-src 'none'; style-src 'unsafe-inline'; sandbox"),
            },
            content: { "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } },
          },
          "416": {
            description: "The range asked for starts past the end of the file; no body.",
            headers: { "Content-Range": header("bytes */size") },
          },
          "500": {
            description: "The stored file could not be read before its first byte was sent (after that the response is cut short instead).",
            content: json(ref("AppsError")),
          },
        },
      }),
    },
  ),
};

/** Multimedia's paths sit under the Import App API's tag (apps/app.openapi.ts). */
export const multimediaDocument: Omit<FeatureDocument, "tag"> = { paths, schemas };
