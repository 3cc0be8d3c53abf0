import express, { type Router } from "express";

/**
 * CONTRACT §7.2 probes, answered before any authentication: `/livez` says the process serves (no
 * database round trip), `/readyz` says it may be sent traffic: every check passes and it is not
 * stopping. A check that throws or answers false fails; the body names each check's state.
 */
type ReadinessCheck = () => Promise<boolean | string>;

export interface Probes {
  /** named checks of /readyz, e.g. database, migrations, job queue */
  checks: Record<string, ReadinessCheck>;
  /** true from the first shutdown signal on */
  stopping: () => boolean;
}

/** A check that has not answered by then has failed (a database that hangs is not ready). */
const CHECK_TIMEOUT_MS = 2000;

async function runCheck(check: ReadinessCheck): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("timeout"), CHECK_TIMEOUT_MS);
  });
  const outcome = check().then(
    (result) => (result === true ? "ok" : result === false ? "failed" : result),
    () => "failed",
  );
  try {
    return await Promise.race([outcome, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function readiness(probes: Probes): Promise<{ ready: boolean; checks: Record<string, string> }> {
  const names = Object.keys(probes.checks);
  const states = await Promise.all(names.map((name) => runCheck(probes.checks[name]!)));
  const checks: Record<string, string> = Object.fromEntries(names.map((name, i) => [name, states[i]!]));
  checks.shutdown = probes.stopping() ? "stopping" : "ok";
  return { ready: Object.values(checks).every((state) => state === "ok" || state === "disabled"), checks };
}

export function probeRouter(probes: Probes): Router {
  const router = express.Router();
  const started = Date.now();
  router.get("/livez", (_req, res) => {
    res.set("Cache-Control", "no-store").json({ status: "ok", uptimeSeconds: Math.floor((Date.now() - started) / 1000) });
  });
  router.get("/readyz", async (_req, res) => {
    const { ready, checks } = await readiness(probes);
    res
      .status(ready ? 200 : 503)
      .set("Cache-Control", "no-store")
      .json({ status: ready ? "ready" : "unavailable", checks });
  });
  return router;
}
