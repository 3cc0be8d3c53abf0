import express, { type Request, type Response, type Router } from "express";
import { badInput, notFound } from "../errors.ts";
import { handler, jsonBody, locals, route } from "../rest/middleware.ts";
import { absolutePath, queryParams } from "../rest/params.ts";
import type { WriteTarget } from "./case.actions.ts";
import { ALL_FIELDS, selectFields, type FieldSelection } from "./case.fields.ts";
import { parseBulkFetch, parseWriteBody } from "./case.payload.rest.ts";
import { parseListParams, parseSelection } from "./case.query.rest.ts";
import type { BulkEntry, CaseReads } from "./case.read.service.ts";
import type { Keyset } from "./case.query.ts";
import type { CaseRecord } from "./case.record.ts";
import { serializeCase } from "./case.serializer.ts";
import type { CaseWrites } from "./case.write.service.ts";

/**
 * REST adapter of the Case Data API v2 (CONTRACT §2), mounted at /a/{domain}/api/case/v2. Each
 * handler first obtains the caller's scope (403/404; 401 came before), then parses the request
 * (400), calls the scope, and builds the contract's body (404 for a single read that finds nothing).
 */

export interface CaseRouterDeps {
  caseReads: CaseReads;
  caseWrites: CaseWrites;
  bodyLimitBytes: number;
  /** PUBLIC_URL: the base of `next` links when set */
  publicUrl: string | undefined;
}

/** CONTRACT §1 Paths: a `{case_id}` segment; with a `,` it is a multi-id GET. */
const CASE_ID_SEGMENT = /^[\w\-,]+$/;

const domainOf = (req: Request) => String(req.params.domain);

/** A case as the contract serializes it, with the request's field selection. */
const shape = (c: CaseRecord, selection: FieldSelection) => selectFields(serializeCase(c), selection);

/** JSON already written, sent as `res.json` sends what it stringifies (Content-Type, charset, length). */
function sendJsonText(res: Response, text: string): void {
  if (!res.get("Content-Type")) res.set("Content-Type", "application/json");
  res.send(text);
}

/** The bulk envelope: a missing id is a stub; field selection applies to found cases only. */
function bulkBody(entries: BulkEntry[], selection: FieldSelection) {
  const cases = entries.map((e) => (e.record ? shape(e.record, selection) : { [e.by]: e.id, error: "not found" }));
  const missing = entries.filter((e) => !e.record).length;
  return { matching_records: entries.length - missing, missing_records: missing, cases };
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

export function caseRouter({ caseReads, caseWrites, bodyLimitBytes, publicUrl }: CaseRouterDeps): Router {
  const router = express.Router({ mergeParams: true });
  router.use(jsonBody(bodyLimitBytes));

  const readScope = (req: Request, res: Response) => caseReads.in(locals(res).principal, domainOf(req));

  /** POST or PUT '' (an object or a list), PUT {case_id}, PUT ext/{ext_id}/: `case` for an object, `cases` for a list. */
  async function write(req: Request, res: Response, target: WriteTarget) {
    const scope = await caseWrites.in(locals(res).principal, domainOf(req));
    const selection = parseSelection(queryParams(req));
    const { actions, bulk } = parseWriteBody(req.body, target);
    const { formId, cases } = await scope.write(actions, { deviceId: req.get("user-agent") ?? "", bulk });
    const shaped = cases.map((c) => shape(c, selection));
    res.json(bulk ? { xform_id: formId, form_id: formId, cases: shaped } : { xform_id: formId, form_id: formId, case: shaped[0] });
  }

  route(router, "/", {
    /** The list; with `cursor`, the cursor's query wins over every other parameter. */
    GET: handler(async (req, res) => {
      const scope = await readScope(req, res);
      const params = queryParams(req);
      const cursor = params.findLast(([key]) => key === "cursor");
      const state = cursor ? caseReads.cursors.decode(cursor[1]) : { ...parseListParams(params), after: undefined };
      const { query, selection = ALL_FIELDS } = state;
      const nextLink = (after: Keyset) =>
        `${absolutePath(req, publicUrl)}?cursor=${encodeURIComponent(caseReads.cursors.encode({ query, selection, after }))}`;
      if (selection.mode === "all") {
        // every field: the cases' JSON as the service hands it, in the envelope JSON.stringify would write
        const page = await scope.listJson(query, state.after);
        const next = page.next ? `,"next":${JSON.stringify(nextLink(page.next))}` : "";
        return sendJsonText(res, `{"matching_records":${page.total},"cases":${page.cases}${next}}`);
      }
      const page = await scope.list(query, state.after);
      const body: Record<string, unknown> = { matching_records: page.total, cases: page.records.map((c) => shape(c, selection)) };
      if (page.next) body.next = nextLink(page.next);
      res.json(body);
    }),
    POST: handler((req, res) => write(req, res, { kind: "create" })),
    PUT: handler((req, res) => write(req, res, { kind: "put" })),
  });

  route(router, "/bulk-fetch/", {
    POST: handler(async (req, res) => {
      const scope = await readScope(req, res);
      const selection = parseSelection(queryParams(req));
      res.json(bulkBody(await scope.fetch(parseBulkFetch(req.body)), selection));
    }),
  });

  // ext/{ext_id}/: the id may hold encoded '/', '?', '#': read it from the raw URL (before the scope,
  // so an id that cannot be decoded is a 400 for anyone).
  const ext = express.Router({ mergeParams: true });
  route(ext, "/{*rest}", {
    GET: handler(async (req, res) => {
      const externalId = externalIdOf(req);
      const scope = await readScope(req, res);
      const selection = parseSelection(queryParams(req));
      const found = await scope.byExternalId(externalId);
      if (!found) throw notFound(`Case '${externalId}' not found`);
      res.json(shape(found, selection));
    }),
    PUT: handler((req, res) => write(req, res, { kind: "upsert", externalId: externalIdOf(req) })),
  });
  router.use("/ext", ext);

  // A segment that is not a case id names no known path: the family's JSON 404 for every method
  // (skipping the route, whose other methods would answer 405).
  router.param("caseId", (_req, _res, next, segment: string) => (CASE_ID_SEGMENT.test(segment) ? next() : next("route")));
  route(router, "/:caseId", {
    GET: handler(async (req, res) => {
      const segment = String(req.params.caseId);
      const scope = await readScope(req, res);
      const selection = parseSelection(queryParams(req));
      if (segment.includes(",")) return res.json(bulkBody(await scope.many(segment.split(",").filter(Boolean)), selection));
      const found = await scope.byId(segment);
      if (!found) throw notFound(`Case '${segment}' not found`);
      res.json(shape(found, selection));
    }),
    PUT: handler(async (req, res, next) => {
      const caseId = String(req.params.caseId);
      // a multi-id segment is a known path that takes GET only
      if (caseId.includes(",")) return next();
      await write(req, res, { kind: "update", caseId });
    }),
  });
  return router;
}
