import express, { type Router } from "express";
import { handler, locals, route } from "../rest/middleware.ts";
import type { LocationTypeService } from "./location-type.service.ts";

/** `GET /a/{domain}/api/location_type/v1/`: the domain's location types, Tastypie-style envelope. */
export function locationTypeRouter({ locationTypes }: { locationTypes: LocationTypeService }): Router {
  const router = express.Router({ mergeParams: true });
  route(router, "/", {
    GET: handler(async (req, res) => {
      const types = await (await locationTypes.in(locals(res).principal, String(req.params.domain))).list();
      const objects = types.map((t) => ({
        code: t.code,
        domain: t.domainName,
        id: t.id,
        name: t.name,
        parent: t.parentCode,
      }));
      res.json({ meta: { limit: objects.length, next: null, offset: 0, previous: null, total_count: objects.length }, objects });
    }),
  });
  return router;
}
