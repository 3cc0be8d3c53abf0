import path from "node:path";
import { Admission } from "./admission/admission.ts";
import { AdminService } from "./admin/admin.service.ts";
import { CursorCodec } from "./cases/case.cursor.ts";
import { CaseReads } from "./cases/case.read.service.ts";
import { CaseWrites } from "./cases/case.write.service.ts";
import { Authenticator } from "./auth/authenticate.ts";
import { CREDENTIALS_CHANGED } from "./auth/credential.events.ts";
import { IdentityCache } from "./auth/identity.cache.ts";
import { DigestAuth } from "./auth/digest.ts";
import { OAuthService } from "./auth/oauth.ts";
import type { OidcTokens } from "./auth/oidc.ts";
import type { Config } from "./config.ts";
import type { Database } from "./db/client.ts";
import { PersistedQueryCache } from "./db/persisted-queries.ts";
import { serverSecret } from "./db/server-secrets.ts";
import { localEventBus, type EventBus, type PubSub } from "./events/bus.ts";
import { postgresEventBus } from "./events/postgres-bus.ts";
import type { Redis } from "ioredis";
import { LocationTypeService } from "./locations/location-type.service.ts";
import { LocationService } from "./locations/location.service.ts";
import { AppService } from "./apps/app.service.ts";
import { AppSystem } from "./apps/app.system.ts";
import { DatabaseBlobStore, FileBlobStore, type BlobStore } from "./multimedia/blob-store.ts";
import { JobAttempts } from "./multimedia/job.attempt.ts";
import { JobPublisher } from "./multimedia/job.publisher.ts";
import { JobQueue } from "./multimedia/job.queue.ts";
import { JobRepository } from "./multimedia/job.repository.ts";
import { MultimediaJobService } from "./multimedia/job.service.ts";
import { MultimediaWorker } from "./multimedia/worker.ts";
import { LoginThrottle } from "./rate-limit/login-throttle.service.ts";
import { RateLimiter } from "./rate-limit/rate-limit.service.ts";

/**
 * Every domain service of one process, built once over one database. The database itself is not
 * handed out: every road to it goes through a service.
 */
export interface Services {
  config: Config;
  /** the open database (the readiness probe and the scraped gauges read it) */
  db: Database;
  /** the Redis connection of the counters, with REDIS_URL (the readiness probe pings it) */
  redis: Redis | undefined;
  pubsub: PubSub;
  /** authenticate, rate-limit, map errors: the one admission of every transport */
  admission: Admission;
  oauth: OAuthService;
  /** the OpenID Connect provider's tokens, with OIDC_ISSUER (the dashboard reads its endpoints) */
  oidc: OidcTokens | undefined;
  digest: DigestAuth;
  admin: AdminService;
  locationTypes: LocationTypeService;
  locations: LocationService;
  caseReads: CaseReads;
  caseWrites: CaseWrites;
  blobs: BlobStore;
  apps: AppService;
  jobQueue: JobQueue;
  multimediaJobs: MultimediaJobService;
  /** the worker's fenced attempts at jobs (trusted: never handed to a face) */
  jobAttempts: JobAttempts;
  worker: MultimediaWorker;
  /** Apollo's automatic persisted queries, in the database */
  persistedQueries: PersistedQueryCache;
  /** releases what the services hold besides the database (job queue, event listener, rate-limit timers) */
  close(): Promise<void>;
}

/**
 * Callers admitted lately, found again without a query: a few seconds at most, and dropped on every
 * process the moment their credentials change (src/auth/identity.cache.ts).
 */
const IDENTITY_CACHE = { ttlMs: 5000, max: 10_000 };

/*
 * The optional engines' clients (the S3 SDK, ioredis, jose) are imported where their setting is on,
 * never at start: unused, each would still cost every process its start-up time and megabytes of
 * heap (bench/notes/start-footprint.md).
 */

/** Redis when REDIS_URL is set, else PostgreSQL's LISTEN/NOTIFY, else (embedded) in process. */
async function eventBus(db: Database, config: Config): Promise<EventBus> {
  if (config.redisUrl) return (await import("./events/redis-bus.ts")).redisEventBus(config.redisUrl);
  return db.url ? postgresEventBus(db.url, db.directUrl) : localEventBus();
}

/** The Redis connection of the counters and its closing, with REDIS_URL. */
async function counterRedis(config: Config): Promise<{ redis: Redis; close(): Promise<void> } | undefined> {
  if (!config.redisUrl) return undefined;
  const { closeRedis, counterConnection } = await import("./db/redis.ts");
  const redis = await counterConnection(config.redisUrl);
  return { redis, close: () => closeRedis(redis) };
}

/** An object store when BLOB_STORE_URL names one; else the database's tables on PostgreSQL, files under DATA_DIR embedded. */
async function blobStoreOf(config: Config, db: Pick<Database, "url">): Promise<BlobStore> {
  const tempRoot = path.join(config.dataDir, "tmp");
  if (config.objectStore) return new (await import("./multimedia/s3-blob-store.ts")).S3BlobStore(config.objectStore, tempRoot);
  return db.url ? new DatabaseBlobStore(db.url, tempRoot) : new FileBlobStore(config.dataDir);
}

/** The OpenID Connect provider's tokens, with OIDC_ISSUER. */
async function oidcTokens(config: Config): Promise<OidcTokens | undefined> {
  return config.oidc ? new (await import("./auth/oidc.ts")).OidcTokens(config.oidc) : undefined;
}

export async function createServices(db: Database, config: Config): Promise<Services> {
  const prisma = db.prisma;
  const digestKey = await serverSecret(prisma, "digest-nonce-key");
  const digest = new DigestAuth(prisma, config.authRealm, digestKey, config.digestNonceTtlSeconds * 1000);
  const events = await eventBus(db, config);
  const counters = await counterRedis(config);
  const redis = counters?.redis;
  // failed password logins, throttled before any hashing; shared by every process on PostgreSQL or Redis
  const loginThrottle = LoginThrottle.create(config, db, redis);
  const oauth = new OAuthService(prisma, config, loginThrottle);
  const pubsub = events.pubsub;
  const identities = new IdentityCache(IDENTITY_CACHE);
  const oidc = await oidcTokens(config);
  // its keys fetched ahead of the first token; a provider away at start is only logged
  oidc?.prefetch();
  const stopForgetting = events.listen(CREDENTIALS_CHANGED, ({ userId }) => identities.forgetUser(userId));
  const blobs = await blobStoreOf(config, db);
  const apps = new AppService(prisma, config.appSourceLimitBytes);
  const jobQueue = await JobQueue.open(db, config);
  const jobs = new JobRepository(prisma);
  const publisher = new JobPublisher(events, jobs, config.progressEventsPerSecond);
  const multimediaJobs = new MultimediaJobService(jobs, blobs, events, publisher, apps, config, jobQueue);
  // the trusted apps calls, for the worker's side of multimedia only
  const appSystem = new AppSystem(prisma);
  const jobAttempts = new JobAttempts(jobs, blobs, publisher, appSystem, jobQueue, config);
  const cursors = new CursorCodec(await serverSecret(prisma, "case-cursor-key"));
  // one limiter for every face of this process; on PostgreSQL or Redis its counters are shared by all
  const rateLimiter = RateLimiter.create(config, db, redis);
  return {
    config,
    db,
    redis,
    pubsub,
    admission: new Admission(new Authenticator(prisma, config.authRealm, digest, oauth, loginThrottle, identities, oidc), rateLimiter),
    oauth,
    oidc,
    digest,
    admin: new AdminService(prisma, config.authRealm, events),
    locationTypes: new LocationTypeService(prisma),
    locations: new LocationService(prisma),
    caseReads: new CaseReads(prisma, cursors),
    caseWrites: new CaseWrites(prisma, pubsub),
    blobs,
    apps,
    jobQueue,
    multimediaJobs,
    jobAttempts,
    worker: new MultimediaWorker(jobAttempts, appSystem, blobs, jobQueue, config),
    persistedQueries: new PersistedQueryCache(prisma, { ttlSeconds: config.apqTtlSeconds, maxEntries: config.apqMaxEntries }),
    async close() {
      stopForgetting();
      rateLimiter.close();
      loginThrottle.close();
      await jobQueue.close();
      await events.close();
      await counters?.close();
      await blobs.close();
    },
  };
}
