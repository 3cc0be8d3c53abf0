import { timingSafeEqual } from "node:crypto";
import express, { type Router } from "express";
import { registry } from "./metrics.ts";

/** `a` equals `b`, in a time that does not tell how much of it matched. */
function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * GET /metrics in Prometheus text format 0.0.4. Open unless METRICS_TOKEN is set; then only
 * `Authorization: Bearer <token>` is let in (401 with a Bearer challenge otherwise).
 */
export function metricsRouter(token: string | undefined): Router {
  const router = express.Router();
  router.get("/metrics", async (req, res) => {
    if (token !== undefined) {
      const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
      if (!match || !sameSecret(match[1]!, token)) {
        res.status(401).set("WWW-Authenticate", 'Bearer realm="metrics"').json({ error: "Metrics need the metrics token." });
        return;
      }
    }
    const body = await registry.metrics();
    res.status(200).set("Content-Type", "text/plain; version=0.0.4; charset=utf-8").send(body);
  });
  return router;
}
