import { DOMAIN, ok, operation, pathItem, pathParam, type FeatureDocument } from "../openapi/operations.ts";
import { integer, ordered, string, type Schema } from "../openapi/schema.ts";
import { IMPORT_FIELDS } from "./app.rest.ts";

/**
 * The Import App API's import route in the OpenAPI document (CONTRACT §4 "POST import_app/"), and
 * the pieces multimedia's routes under the same prefix share (multimedia/multimedia.openapi.ts).
 */

export const APPS_TAG = "Import App API";
const APPS = "/a/{domain}/apps/api";
export const APP_ID = pathParam("app_id", "the application's id");

/** A multipart/form-data body: its fields, and the content type of its one file. */
export const multipart = (properties: Record<string, Schema>, required: string[], fileField: string, fileType: string) => ({
  required: true,
  content: {
    "multipart/form-data": {
      schema: { type: "object", required, properties },
      encoding: { [fileField]: { contentType: fileType } },
    },
  },
});

const warnings = { type: "array", items: { type: "string" }, minItems: 1, description: "only when non-empty" };

const schemas: Record<string, Schema> = {
  ImportAppCreated: ordered("A new application.", { success: { const: true }, app_id: string("the application's id"), warnings }, ["warnings"]),
  ImportAppUpdated: ordered(
    "An application updated in place.",
    {
      success: { const: true },
      app_id: string("the application's id"),
      version: integer("the new version", { minimum: 1 }),
      warnings,
    },
    ["warnings"],
  ),
};

const paths = {
  [`${APPS}/import_app/`]: pathItem("apps", [DOMAIN], {
    post: operation("apps", APPS_TAG, "importApp", {
      summary: "Import an application (create, or update in place with app_id)",
      description: "Checked in order: app_file missing, app_name missing (create), the file not a JSON object.",
      requestBody: multipart(
        {
          [IMPORT_FIELDS.file]: { type: "string", contentMediaType: "application/json", description: "the application source (a JSON object)" },
          [IMPORT_FIELDS.name]: { type: "string", description: "required on create; renames on update" },
          [IMPORT_FIELDS.id]: { type: "string", description: "update this application in place" },
        },
        [IMPORT_FIELDS.file],
        IMPORT_FIELDS.file,
        "application/json",
      ),
      responses: {
        "200": ok("Updated in place.", "ImportAppUpdated"),
        "201": ok("Created.", "ImportAppCreated"),
      },
    }),
  }),
};

export const appDocument: FeatureDocument = {
  tag: { name: APPS_TAG, description: "Applications and their multimedia under /a/{domain}/apps/api/" },
  paths,
  schemas,
};
