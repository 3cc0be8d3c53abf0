import type { Prisma } from "./client.ts";
import { newToken } from "../util/ids.ts";

/**
 * A secret generated once and shared by every process on the database (e.g. the Digest nonce key).
 * Two processes starting together may both try to create it; the loser reads the winner's.
 */
export async function serverSecret(prisma: Prisma, name: string): Promise<string> {
  const existing = await prisma.serverSecret.findUnique({ where: { name } });
  if (existing) return existing.value;
  await prisma.$executeRaw`INSERT INTO server_secrets (name, value) VALUES (${name}, ${newToken(48)}) ON CONFLICT (name) DO NOTHING`;
  const created = await prisma.serverSecret.findUniqueOrThrow({ where: { name } });
  return created.value;
}
