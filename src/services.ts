import { AdminService } from "./admin/admin.service.ts";
import { Authenticator } from "./auth/authenticate.ts";
import { DigestAuth } from "./auth/digest.ts";
import { OAuthService } from "./auth/oauth.ts";
import type { Config } from "./config.ts";
import type { Database } from "./db/client.ts";
import { serverSecret } from "./db/server-secrets.ts";
import { createLocalPubSub, type PubSub } from "./graphql/pubsub.ts";
import { LocationTypeService } from "./locations/location-type.service.ts";

/** Every domain service of one process, built once over one database. */
export interface Services {
  config: Config;
  db: Database;
  prisma: Database["prisma"];
  pubsub: PubSub;
  authenticator: Authenticator;
  oauth: OAuthService;
  digest: DigestAuth;
  admin: AdminService;
  locationTypes: LocationTypeService;
}

export async function createServices(db: Database, config: Config): Promise<Services> {
  const prisma = db.prisma;
  const digestKey = await serverSecret(prisma, "digest-nonce-key");
  const digest = new DigestAuth(prisma, config.authRealm, digestKey, config.digestNonceTtlSeconds * 1000);
  const oauth = new OAuthService(prisma, config);
  return {
    config,
    db,
    prisma,
    pubsub: createLocalPubSub(),
    authenticator: new Authenticator(prisma, config.authRealm, digest, oauth),
    oauth,
    digest,
    admin: new AdminService(prisma, config.authRealm),
    locationTypes: new LocationTypeService(prisma),
  };
}
