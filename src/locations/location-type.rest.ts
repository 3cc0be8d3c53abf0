import express, { type Router } from "express";
import type { Services } from "../services.ts";
import { handler, locals, route } from "../rest/middleware.ts";

/** `GET /a/{domain}/api/location_type/v1/`: the domain's location types, Tastypie-style envelope. */
export function locationTypeRouter(services: Services): Router {
  const router = express.Router({ mergeParams: true });
  route(router, "/", {
    GET: handler(async (req, res) => {
      const types = await services.locationTypes.list(locals(res).principal, String(req.params.domain));
      const objects = types.map((t) => ({
        code: t.code,
        domain: t.domain.name,
        id: t.id,
        name: t.name,
        parent: t.parent?.code ?? null,
      }));
      res.json({ meta: { limit: objects.length, next: null, offset: 0, previous: null, total_count: objects.length }, objects });
    }),
  });
  return router;
}
