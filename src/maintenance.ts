import { log } from "./log.ts";
import type { Services } from "./services.ts";

/** What the clean-up needs: the services that own rows that only grow. */
export type PurgingServices = Pick<Services, "digest" | "oauth" | "multimediaJobs">;

/**
 * Periodic clean-up of rows that only grow: used Digest nonces past their expiry, expired
 * multimedia jobs, and OAuth tokens that can no longer be used. Safe on every process.
 */
export async function purgeExpired(services: PurgingServices): Promise<void> {
  await services.digest.purgeExpired();
  await services.multimediaJobs.purgeExpired();
  await services.oauth.purgeExpired();
}

export function startMaintenance(services: PurgingServices, everyMs = 10 * 60 * 1000): () => void {
  const run = () => purgeExpired(services).catch((error: unknown) => log.error("maintenance failed", { error }));
  const timer = setInterval(run, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
