import express, { type Request, type Response, type Router } from "express";
import { badInput } from "../errors.ts";
import { handler, jsonBody, locals, route } from "../rest/middleware.ts";
import { queryParams } from "../rest/params.ts";
import { requireJson } from "../util/json.ts";
import type { LocationService } from "./location.service.ts";
import { bulkObjects, FORMAT_PARAMETER, parseLocationFields, parseLocationQuery, restBulkReader } from "./location.request.rest.ts";
import { serializeLocation } from "./location.serializer.ts";
import { detailXml, listXml } from "./location.xml.ts";

/** REST adapter of the Location API v2 (CONTRACT §3), mounted at /a/{domain}/api/location/v2. */

type Format = "json" | "xml";

/**
 * `format=json|xml` wins; else the first of application/json, application/xml or text/xml that the
 * Accept header names (by quality, then order); else `fallback` (XML for reads, as the seed says).
 */
function responseFormat(req: Request, fallback: Format): Format {
  const format = new URLSearchParams(req.originalUrl.split("?")[1] ?? "").get(FORMAT_PARAMETER.name);
  if (format !== null) {
    if (format === "json" || format === "xml") return format;
    throw badInput(`Format '${format}' is not supported: use 'json' or 'xml'.`);
  }
  const accepted = (req.get("accept") ?? "")
    .split(",")
    .map((part, index) => {
      const [type, ...params] = part.trim().toLowerCase().split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      return { type: type.trim(), q: q ? Number(q.slice(2)) || 0 : 1, index };
    })
    .filter((a) => a.q > 0 && ["application/json", "application/xml", "text/xml"].includes(a.type))
    .sort((a, b) => b.q - a.q || a.index - b.index);
  if (accepted.length) return accepted[0].type === "application/json" ? "json" : "xml";
  return fallback;
}

function send(res: Response, status: number, format: Format, json: unknown, xml: () => string): void {
  if (format === "json") res.status(status).json(json);
  else res.status(status).type("application/xml; charset=utf-8").send(xml());
}

/** The list URL with other offset and limit, relative, other parameters kept. */
function pageUrl(req: Request, offset: number, limit: number): string {
  const params = new URLSearchParams(req.originalUrl.split("?")[1] ?? "");
  params.set("limit", String(limit));
  params.set("offset", String(offset));
  return `${req.originalUrl.split("?")[0]}?${params}`;
}

/**
 * Each handler obtains the caller's scope first (401, then 403/404), then parses the request into
 * the scope's typed command (400), and serializes the records it gets back.
 */
export function locationRouter({ locations, bodyLimitBytes }: { locations: LocationService; bodyLimitBytes: number }): Router {
  const router = express.Router({ mergeParams: true });
  router.use(jsonBody(bodyLimitBytes));
  const scope = (req: Request, res: Response) => locations.in(locals(res).principal, String(req.params.domain));
  const writeScope = (req: Request, res: Response) => locations.in(locals(res).principal, String(req.params.domain), "write");

  route(router, "/", {
    GET: handler(async (req, res) => {
      const readable = await scope(req, res);
      const query = parseLocationQuery(queryParams(req));
      const page = await readable.list(query);
      const format = responseFormat(req, "xml"); // after the permission check: 403 before 400
      const { limit, offset } = query;
      const meta = {
        limit,
        next: offset + limit < page.total ? pageUrl(req, offset + limit, limit) : null,
        offset,
        previous: offset > 0 ? pageUrl(req, Math.max(0, offset - limit), limit) : null,
        total_count: page.total,
      };
      const objects = page.records.map(serializeLocation);
      send(res, 200, format, { meta, objects }, () => listXml(meta, objects));
    }),
    POST: handler(async (req, res) => {
      const format = responseFormat(req, "json");
      const writable = await writeScope(req, res);
      const fields = parseLocationFields(requireJson(req.body), true);
      const created = serializeLocation(await writable.create(fields));
      send(res, 201, format, created, () => detailXml(created));
    }),
    PATCH: handler(async (req, res) => {
      const writable = await writeScope(req, res);
      const objects = bulkObjects(requireJson(req.body));
      res.status(202).json(await writable.bulk(objects, restBulkReader));
    }),
  });

  route(router, "/:locationId", {
    GET: handler(async (req, res) => {
      const found = serializeLocation(await (await scope(req, res)).get(String(req.params.locationId)));
      const format = responseFormat(req, "xml");
      send(res, 200, format, found, () => detailXml(found));
    }),
    PUT: handler(async (req, res) => {
      const format = responseFormat(req, "json");
      const writable = await writeScope(req, res);
      const locationId = String(req.params.locationId);
      const json = requireJson(req.body);
      // An unknown id is answered (404) before the body's fields (400), as the API always has.
      await writable.get(locationId);
      const updated = serializeLocation(await writable.update(locationId, parseLocationFields(json, false)));
      send(res, 200, format, updated, () => detailXml(updated));
    }),
  });
  return router;
}
