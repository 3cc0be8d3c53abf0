import { log } from "./log.ts";
import type { Services } from "./services.ts";

/**
 * Periodic clean-up of rows that only grow: used Digest nonces past their expiry, and OAuth tokens
 * that can no longer be used (both halves expired or revoked a day ago). Safe on every process.
 */
export async function purgeExpired(services: Services): Promise<void> {
  const dayAgo = new Date(Date.now() - 24 * 3600 * 1000);
  await services.digest.purgeExpired();
  await services.multimediaJobs.purgeExpired();
  await services.prisma.oAuthToken.deleteMany({
    where: {
      OR: [
        { revokedAt: { lt: dayAgo } },
        { accessTokenExpiresAt: { lt: dayAgo }, OR: [{ refreshTokenExpiresAt: null }, { refreshTokenExpiresAt: { lt: dayAgo } }] },
      ],
    },
  });
}

export function startMaintenance(services: Services, everyMs = 10 * 60 * 1000): () => void {
  const run = () => purgeExpired(services).catch((error: unknown) => log.error("maintenance failed", { error }));
  const timer = setInterval(run, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
