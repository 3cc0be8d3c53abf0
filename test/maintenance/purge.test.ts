import { afterEach, beforeEach, expect, it } from "vitest";
import { purgeExpired } from "../../src/maintenance.ts";
import { build, createUser, type TestApp } from "../helpers/app.ts";

let app: TestApp;
beforeEach(async () => {
  app = await build();
});
afterEach(() => app.close());

it("forgets expired Digest nonces and dead OAuth tokens, keeping live ones", async () => {
  const { prisma } = app.db;
  const past = new Date(Date.now() - 2 * 24 * 3600 * 1000);
  const future = new Date(Date.now() + 3600 * 1000);
  await prisma.digestNonce.createMany({
    data: [
      { nonce: "old", lastNc: 1, expiresAt: past },
      { nonce: "live", lastNc: 1, expiresAt: future },
    ],
  });
  const user = await createUser(app, { username: "u" });
  const { client } = await app.services.admin.createOAuthClient(app.root, { name: "c" });
  const userId = (await prisma.user.findUniqueOrThrow({ where: { username: user.username } })).id;
  const token = (hash: string, data: object) => ({
    accessTokenHash: hash,
    accessTokenExpiresAt: future,
    scope: ["access_apis"],
    clientId: client.id,
    userId,
    ...data,
  });
  await prisma.oAuthToken.createMany({
    data: [
      token("dead", { accessTokenExpiresAt: past, refreshTokenHash: "r-dead", refreshTokenExpiresAt: past }),
      token("revoked", { revokedAt: past }),
      token("refreshable", { accessTokenExpiresAt: past, refreshTokenHash: "r-live", refreshTokenExpiresAt: future }),
      token("live", {}),
    ],
  });
  await purgeExpired(app.services);
  expect((await prisma.digestNonce.findMany()).map((n) => n.nonce)).toEqual(["live"]);
  expect((await prisma.oAuthToken.findMany({ orderBy: { accessTokenHash: "asc" } })).map((t) => t.accessTokenHash)).toEqual(["live", "refreshable"]);
});
