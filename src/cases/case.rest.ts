import express, { type Request, type Response, type Router } from "express";
import { badInput, notFound } from "../errors.ts";
import { handler, jsonBody, locals, route } from "../rest/middleware.ts";
import { absolutePath, queryParams } from "../rest/params.ts";
import type { Services } from "../services.ts";
import type { WriteRequest } from "./case.write.service.ts";

/** REST adapter of the Case Data API v2 (CONTRACT §2), mounted at /a/{domain}/api/case/v2. */

const CASE_ID_SEGMENT = /^[\w\-,]+$/;

function writeRequest(req: Request, res: Response): WriteRequest {
  return {
    principal: locals(res).principal,
    domain: String(req.params.domain),
    deviceId: req.get("user-agent") ?? "",
    params: queryParams(req),
  };
}

/** The external id of `ext/{ext_id}/`: percent-decoded, `/` and anything else allowed. */
function externalIdOf(req: Request): string {
  const raw = req.url.split("?")[0].replace(/^\//, "").replace(/\/$/, "");
  let externalId: string;
  try {
    externalId = decodeURIComponent(raw);
  } catch {
    throw badInput("Malformed percent-encoding in the external id");
  }
  if (!externalId) throw notFound(`Not found: ${req.originalUrl.split("?")[0]}`);
  return externalId;
}

export function caseRouter(services: Services): Router {
  const { caseReads, caseWrites } = services;
  const router = express.Router({ mergeParams: true });
  router.use(jsonBody(services.config.bodyLimitBytes));

  route(router, "/", {
    GET: handler(async (req, res) => {
      const result = await caseReads.list(locals(res).principal, String(req.params.domain), queryParams(req));
      const body: Record<string, unknown> = { matching_records: result.matching_records, cases: result.cases };
      if (result.nextCursor) body.next = `${absolutePath(req)}?cursor=${encodeURIComponent(result.nextCursor)}`;
      res.json(body);
    }),
    POST: handler(async (req, res) => {
      res.json(await caseWrites.write(writeRequest(req, res), req.body, { kind: "create" }));
    }),
    PUT: handler(async (req, res) => {
      res.json(await caseWrites.write(writeRequest(req, res), req.body, { kind: "put" }));
    }),
  });

  route(router, "/bulk-fetch/", {
    POST: handler(async (req, res) => {
      res.json(await caseReads.bulkFetch(locals(res).principal, String(req.params.domain), req.body, queryParams(req)));
    }),
  });

  // ext/{ext_id}/: the id may hold encoded '/', '?', '#': read it from the raw URL.
  const ext = express.Router({ mergeParams: true });
  route(ext, "/{*rest}", {
    GET: handler(async (req, res) => {
      res.json(await caseReads.getByExternalId(locals(res).principal, String(req.params.domain), externalIdOf(req), queryParams(req)));
    }),
    PUT: handler(async (req, res) => {
      const externalId = externalIdOf(req);
      res.json(await caseWrites.write(writeRequest(req, res), req.body, { kind: "upsertExternal", externalId }));
    }),
  });
  router.use("/ext", ext);

  route(router, "/:caseId", {
    GET: handler(async (req, res, next) => {
      const segment = String(req.params.caseId);
      if (!CASE_ID_SEGMENT.test(segment)) return next();
      const { principal } = locals(res);
      const domain = String(req.params.domain);
      if (segment.includes(",")) {
        const ids = segment.split(",").filter(Boolean);
        return res.json(await caseReads.getMany(principal, domain, ids, queryParams(req)));
      }
      res.json(await caseReads.get(principal, domain, segment, queryParams(req)));
    }),
    PUT: handler(async (req, res, next) => {
      const caseId = String(req.params.caseId);
      if (!CASE_ID_SEGMENT.test(caseId) || caseId.includes(",")) return next();
      res.json(await caseWrites.write(writeRequest(req, res), req.body, { kind: "update", caseId }));
    }),
  });
  return router;
}

