import path from "node:path";
import { LOG_LEVELS, type LogLevel } from "./log.ts";

/** Every environment variable the service reads, parsed and validated in one place. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL server; when absent the embedded PGlite under dataDir is used. */
  databaseUrl: string | undefined;
  /**
   * A direct PostgreSQL connection for what a transaction pooler cannot carry (LISTEN, session
   * advisory locks, migrations, the job queue): DATABASE_DIRECT_URL, else DATABASE_URL itself.
   */
  databaseDirectUrl: string | undefined;
  /** Redis server: when set, the event bus and the rate-limit and login counters live there (CONTRACT §7.6) */
  redisUrl: string | undefined;
  /** the embedded database's buffer cache (PostgreSQL `shared_buffers`), in MB */
  embeddedCacheMb: number;
  /** apply pending migrations at start; when false the server waits, not ready, for `npm run db:migrate` */
  migrateOnStart: boolean;
  /** PostgreSQL cancels a request's statement that runs longer than this, in milliseconds (0: never) */
  databaseStatementTimeoutMs: number;
  bootstrapAdmin: { username: string; password: string } | undefined;
  /** realm of Basic, Digest and Bearer challenges; part of every stored Digest HA1 */
  authRealm: string;
  bodyLimitBytes: number;
  uploadLimitBytes: number;
  /** the archives of a domain's queued and running multimedia jobs together, at most (0: no bound) */
  multimediaQueueLimitBytes: number;
  /** free space an upload must leave on the spool's filesystem */
  uploadMinFreeBytes: number;
  digestNonceTtlSeconds: number;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  appSourceLimitBytes: number;
  multimediaJobTtlSeconds: number;
  /** how long settled multimedia jobs stay listed for dashboards (GraphQL), whatever the REST status's lifetime */
  multimediaJobHistoryDays: number;
  /** progress events of one job, at most, per second: published, and delivered to each subscription */
  progressEventsPerSecond: number;
  zipMaxEntryBytes: number;
  zipMaxTotalBytes: number;
  zipMaxRatio: number;
  /** ZIP_MAX_RATIO applies to a whole archive once its entries total more than this */
  zipRatioFloorBytes: number;
  /** multimedia jobs this process runs at once (0: this process runs none) */
  workers: number;
  jobLeaseSeconds: number;
  graphqlMaxDepth: number;
  graphqlMaxCost: number;
  /** most aliased fields in one GraphQL document (1,000 aliases of one field cost little each) */
  graphqlMaxAliases: number;
  /** most objects (each object and list item) one GraphQL operation or subscription event may produce */
  graphqlMaxResultObjects: number;
  /** longest one GraphQL operation or subscription event may run, in milliseconds */
  graphqlMaxExecutionMs: number;
  /** most bytes of text (keys, strings, JSON values) one GraphQL result, or one subscription event's results for one user, may carry */
  graphqlMaxResultBytes: number;
  /** most files in one GraphQL multipart request */
  graphqlUploadMaxFiles: number;
  /** largest WebSocket message on /graphql; a larger one closes that connection (1009) */
  wsMaxPayloadBytes: number;
  /** live subscriptions one WebSocket may hold at once */
  wsMaxSubscriptionsPerSocket: number;
  /** live subscriptions one user may hold at once across its WebSockets on this process */
  wsMaxSubscriptionsPerUser: number;
  /** how often every open WebSocket's credential is re-checked, besides on each message and change (0: never) */
  wsRecheckSeconds: number;
  /** requests per user and domain per window, across REST, GraphQL and subscriptions (0: no limit) */
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  /** failed password logins per client address per window, before 429 (0: not counted) */
  loginFailuresPerAddress: number;
  loginAddressWindowSeconds: number;
  /** failed password logins per username per window, before 429 (0: not counted) */
  loginFailuresPerUsername: number;
  loginUsernameWindowSeconds: number;
  /** how long a stopping server lets in-flight requests finish before it cuts them */
  shutdownGraceSeconds: number;
  logLevel: LogLevel;
  /** when set, GET /metrics asks for `Authorization: Bearer <this token>` */
  metricsToken: string | undefined;
  /** OTLP/HTTP collector; traces are exported only when it is set (the OTel SDK is not even loaded otherwise) */
  otelEndpoint: string | undefined;
  /**
   * The public base URL of the server (origin plus an optional path prefix, no trailing slash):
   * absolute URLs the server writes start with it, whatever the request's Host said.
   */
  publicUrl: string | undefined;
  /** X-Forwarded-Proto and X-Forwarded-Host (of a trusted reverse proxy) shape the absolute URLs */
  trustProxy: boolean;
  /** browser origins (`scheme://host[:port]`) allowed to call the API cross-origin (CORS), and to write */
  corsOrigins: string[];
  /** the GraphQL IDE on `GET /graphql` for browsers */
  graphqlIde: boolean;
  /** most lexical tokens in one GraphQL document */
  graphqlMaxTokens: number;
  /** most directives in one GraphQL operation (its fragments included) */
  graphqlMaxDirectives: number;
  /** how long an automatic persisted query stays registered after its last registration */
  apqTtlSeconds: number;
  /** most automatic persisted queries kept in the database (the oldest go first) */
  apqMaxEntries: number;
  /** `all`: any document runs; `only`: only the trusted documents of the manifest */
  persistedOperations: "all" | "only";
  /** the trusted-documents manifest (JSON), required by `PERSISTED_OPERATIONS=only` */
  persistedOperationsManifest: string | undefined;
  /** S3-compatible object storage for archives and media (BLOB_STORE_URL); absent: DATA_DIR/blobs or the database */
  objectStore: ObjectStoreConfig | undefined;
  /** OpenID Connect sign-in (OIDC_ISSUER): bearer JWTs of that identity provider are accepted; absent: none are */
  oidc: OidcConfig | undefined;
  /** serve /graphql as an Apollo Federation 2 subgraph (`@key`s, `_service`, `_entities`) */
  federation: boolean;
}

/** An external OpenID Connect identity provider whose access tokens (JWT) admit this server's users. */
export interface OidcConfig {
  /** the issuer exactly as its tokens' `iss` and its discovery document say it */
  issuer: string;
  /** the `aud` a token must carry to be meant for this server */
  audience: string;
  /** the claims naming the user, tried in order: the first that holds a string names them */
  usernameClaims: string[];
  /** the dashboard's public client (authorization code with PKCE); absent: the dashboard offers no OIDC sign-in */
  clientId: string | undefined;
  /** the scopes the dashboard asks for */
  scope: string;
  /** after a fetch of the issuer's keys, how long a token naming an unknown key waits for the next fetch */
  jwksCooldownSeconds: number;
  /** whether a token may name a superuser (off: superusers sign in here only, never by a name the provider gives out) */
  allowSuperusers: boolean;
}

/** Where and how archives and media are kept in an S3-compatible store (CONTRACT §7.6). */
export interface ObjectStoreConfig {
  bucket: string;
  /** every key starts with it: empty, or ending with `/` */
  prefix: string;
  /** a store other than AWS (S3_ENDPOINT) */
  endpoint: string | undefined;
  region: string;
  /** bucket in the path (`host/bucket/key`) rather than in the host name */
  forcePathStyle: boolean;
  /** how long a pre-signed download URL stays valid */
  presignSeconds: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0, max = Number.POSITIVE_INFINITY): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    const range = Number.isFinite(max) ? `between ${min} and ${max}` : `>= ${min}`;
    throw new ConfigError(`${name} must be an integer ${range}, got '${raw}'`);
  }
  return Number(raw);
}

function bootstrapAdmin(raw: string | undefined): Config["bootstrapAdmin"] {
  if (!raw) return undefined;
  const colon = raw.indexOf(":");
  if (colon <= 0 || colon === raw.length - 1) {
    throw new ConfigError("BOOTSTRAP_ADMIN must be username:password");
  }
  return { username: raw.slice(0, colon), password: raw.slice(colon + 1) };
}

function databaseUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (!/^postgres(ql)?:\/\//.test(raw)) {
    throw new ConfigError("DATABASE_URL must be a postgresql:// URL");
  }
  return raw;
}

/** DATABASE_DIRECT_URL: only beside DATABASE_URL (it names the same database, without the pooler). */
function databaseDirectUrl(env: Env): string | undefined {
  const raw = env.DATABASE_DIRECT_URL;
  if (!raw) return databaseUrl(env.DATABASE_URL);
  if (!env.DATABASE_URL) throw new ConfigError("DATABASE_DIRECT_URL needs DATABASE_URL (the pooled connection to the same database)");
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new ConfigError("DATABASE_DIRECT_URL must be a postgresql:// URL");
  return raw;
}

function redisUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (!/^rediss?:\/\/[^/?#]/.test(raw) || !URL.canParse(raw)) {
    throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got '${raw.replace(/\/\/[^@/]*@/, "//…@")}'`);
  }
  return raw;
}

function logLevel(raw: string | undefined): LogLevel {
  const level = (raw || "info").toLowerCase();
  if (!LOG_LEVELS.includes(level as LogLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got '${raw}'`);
  }
  return level as LogLevel;
}

function otelEndpoint(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (!/^https?:\/\/[^\s]+$/.test(raw)) {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL, got '${raw}'`);
  }
  return raw;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = raw.toLowerCase();
  if (["true", "1", "yes", "on"].includes(value)) return true;
  if (["false", "0", "no", "off"].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false, got '${raw}'`);
}

function publicUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got '${raw}'`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL without credentials, query or fragment, got '${raw}'`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** CORS_ORIGINS: exact origins, as browsers write them in `Origin` (lower-case scheme and host, no path). */
function corsOrigins(raw: string | undefined): string[] {
  const entries = (raw ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    const url = URL.canParse(entry) ? new URL(entry) : undefined;
    // an origin has no path, query, fragment or credentials: its URL is the origin and a slash
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.href !== `${url.origin}/`) {
      throw new ConfigError(`CORS_ORIGINS must list origins like https://app.example.org (scheme, host, optional port), got '${entry}'`);
    }
    return url.origin;
  });
}

function persistedOperations(env: Env): Pick<Config, "persistedOperations" | "persistedOperationsManifest"> {
  const mode = env.PERSISTED_OPERATIONS || "all";
  if (mode !== "all" && mode !== "only") throw new ConfigError(`PERSISTED_OPERATIONS must be all or only, got '${mode}'`);
  const manifest = env.PERSISTED_OPERATIONS_MANIFEST || undefined;
  if (mode === "only" && !manifest) throw new ConfigError("PERSISTED_OPERATIONS=only needs PERSISTED_OPERATIONS_MANIFEST (a JSON file)");
  return { persistedOperations: mode, persistedOperationsManifest: manifest && path.resolve(manifest) };
}

/** BLOB_STORE_URL=s3://BUCKET/PREFIX and the S3_* settings beside it; undefined when it is unset. */
function objectStore(env: Env): ObjectStoreConfig | undefined {
  const raw = env.BLOB_STORE_URL;
  if (!raw) return undefined;
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (!match) throw new ConfigError(`BLOB_STORE_URL must be s3://BUCKET or s3://BUCKET/PREFIX (a bucket name in lower case), got '${raw}'`);
  const prefix = (match[2] ?? "").replace(/^\/+|\/+$/g, "");
  const endpoint = env.S3_ENDPOINT || undefined;
  if (endpoint && !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(endpoint)) throw new ConfigError(`S3_ENDPOINT must be an http(s) URL, got '${endpoint}'`);
  const region = env.S3_REGION || "us-east-1";
  if (!/^[a-z0-9-]+$/.test(region)) throw new ConfigError(`S3_REGION must be a region name like us-east-1, got '${region}'`);
  return {
    bucket: match[1]!,
    prefix: prefix ? `${prefix}/` : "",
    endpoint,
    region,
    forcePathStyle: flag(env, "S3_FORCE_PATH_STYLE", false),
    // SigV4 pre-signed URLs are valid for a week at most
    presignSeconds: integer(env, "S3_PRESIGN_SECONDS", 300, 1, 7 * 24 * 3600),
  };
}

/** Loopback hosts, where an issuer may speak plain http (a provider on the same machine). */
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

function oidcIssuer(raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  const secure = url?.protocol === "https:" || (url?.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname));
  if (!url || !secure || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`OIDC_ISSUER must be an https URL (http only on loopback) without credentials, query or fragment, got '${raw}'`);
  }
  // compared character for character with each token's `iss`: kept as written
  return raw;
}

/** OIDC_* settings: all of them need OIDC_ISSUER, and OIDC_ISSUER needs OIDC_AUDIENCE (a token for any audience is no token for us). */
function oidc(env: Env): OidcConfig | undefined {
  const issuer = env.OIDC_ISSUER?.trim() || undefined;
  if (!issuer) {
    const settings = ["OIDC_AUDIENCE", "OIDC_CLIENT_ID", "OIDC_USERNAME_CLAIM", "OIDC_SCOPE", "OIDC_JWKS_COOLDOWN_SECONDS", "OIDC_ALLOW_SUPERUSERS"];
    const stray = settings.find((name) => env[name]);
    if (stray) throw new ConfigError(`${stray} needs OIDC_ISSUER (the identity provider's issuer URL)`);
    return undefined;
  }
  const audience = env.OIDC_AUDIENCE?.trim();
  if (!audience) throw new ConfigError("OIDC_ISSUER needs OIDC_AUDIENCE (the audience, `aud`, the provider writes in tokens meant for this server)");
  const claim = env.OIDC_USERNAME_CLAIM?.trim();
  if (claim !== undefined && claim !== "" && /\s/.test(claim)) throw new ConfigError(`OIDC_USERNAME_CLAIM must be one claim name, got '${claim}'`);
  const scope = (env.OIDC_SCOPE ?? "").trim().split(/\s+/).filter(Boolean).join(" ");
  const clientId = env.OIDC_CLIENT_ID?.trim() || undefined;
  // the provider's ID tokens are issued to the client (`aud` = its id): they must not pass for access tokens
  if (clientId === audience)
    throw new ConfigError("OIDC_AUDIENCE must not be OIDC_CLIENT_ID: the provider's ID tokens (aud = the client id) would pass for access tokens");
  return {
    issuer: oidcIssuer(issuer),
    audience,
    usernameClaims: claim ? [claim] : ["preferred_username", "sub"],
    clientId,
    scope: scope || "openid profile",
    // at least a second: every token naming a made-up key would otherwise fetch the provider's keys again
    jwksCooldownSeconds: integer(env, "OIDC_JWKS_COOLDOWN_SECONDS", 30, 1, 3600),
    allowSuperusers: flag(env, "OIDC_ALLOW_SUPERUSERS", false),
  };
}

export function loadConfig(env: Env = process.env): Config {
  return {
    port: integer(env, "PORT", 8000),
    host: env.HOST || "127.0.0.1",
    dataDir: path.resolve(env.DATA_DIR || "./data"),
    databaseUrl: databaseUrl(env.DATABASE_URL),
    databaseDirectUrl: databaseDirectUrl(env),
    redisUrl: redisUrl(env.REDIS_URL),
    embeddedCacheMb: integer(env, "EMBEDDED_DB_CACHE_MB", 16, 1),
    migrateOnStart: flag(env, "MIGRATE_ON_START", true),
    // a statement outlives no request: by default as long as a GraphQL operation may run
    databaseStatementTimeoutMs: integer(env, "DATABASE_STATEMENT_TIMEOUT_MS", integer(env, "GRAPHQL_MAX_EXECUTION_MS", 15_000, 1), 0),
    bootstrapAdmin: bootstrapAdmin(env.BOOTSTRAP_ADMIN),
    authRealm: env.AUTH_REALM || "field-data",
    bodyLimitBytes: integer(env, "BODY_LIMIT_BYTES", 10 * 1024 * 1024, 1024),
    uploadLimitBytes: integer(env, "UPLOAD_LIMIT_BYTES", 1024 * 1024 * 1024, 1024),
    multimediaQueueLimitBytes: integer(env, "MULTIMEDIA_QUEUE_LIMIT_BYTES", 2 * 1024 * 1024 * 1024, 0),
    uploadMinFreeBytes: integer(env, "UPLOAD_MIN_FREE_BYTES", 512 * 1024 * 1024, 0),
    digestNonceTtlSeconds: integer(env, "DIGEST_NONCE_TTL_SECONDS", 300, 1),
    accessTokenTtlSeconds: integer(env, "ACCESS_TOKEN_TTL_SECONDS", 3600, 1),
    refreshTokenTtlSeconds: integer(env, "REFRESH_TOKEN_TTL_SECONDS", 14 * 24 * 3600, 1),
    appSourceLimitBytes: integer(env, "APP_SOURCE_LIMIT_BYTES", 64 * 1024 * 1024, 1024),
    multimediaJobTtlSeconds: integer(env, "MULTIMEDIA_JOB_TTL_SECONDS", 3600, 1),
    multimediaJobHistoryDays: integer(env, "MULTIMEDIA_JOB_HISTORY_DAYS", 7, 1),
    progressEventsPerSecond: integer(env, "PROGRESS_EVENTS_PER_SECOND", 10, 1),
    zipMaxEntryBytes: integer(env, "ZIP_MAX_ENTRY_BYTES", 512 * 1024 * 1024, 1),
    zipMaxTotalBytes: integer(env, "ZIP_MAX_TOTAL_BYTES", 8 * 1024 * 1024 * 1024, 1),
    zipMaxRatio: integer(env, "ZIP_MAX_RATIO", 100, 1),
    zipRatioFloorBytes: integer(env, "ZIP_RATIO_FLOOR_BYTES", 16 * 1024 * 1024, 0),
    workers: integer(env, "WORKERS", 1, 0),
    jobLeaseSeconds: integer(env, "JOB_LEASE_SECONDS", 30, 10),
    graphqlMaxDepth: integer(env, "GRAPHQL_MAX_DEPTH", 12, 1),
    graphqlMaxCost: integer(env, "GRAPHQL_MAX_COST", 250_000, 1),
    graphqlMaxAliases: integer(env, "GRAPHQL_MAX_ALIASES", 100, 0),
    graphqlMaxResultObjects: integer(env, "GRAPHQL_MAX_RESULT_OBJECTS", 50_000, 1),
    graphqlMaxExecutionMs: integer(env, "GRAPHQL_MAX_EXECUTION_MS", 15_000, 1),
    // at most 64 MiB: the text it counts may be written up to 6 times longer (escapes), and must
    // stay within one JavaScript string (2^29 characters) to be sent at all
    graphqlMaxResultBytes: integer(env, "GRAPHQL_MAX_RESULT_BYTES", 32 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    graphqlUploadMaxFiles: integer(env, "GRAPHQL_UPLOAD_MAX_FILES", 10, 1),
    wsMaxPayloadBytes: integer(env, "WS_MAX_PAYLOAD_BYTES", 1024 * 1024, 1024),
    wsMaxSubscriptionsPerSocket: integer(env, "WS_MAX_SUBSCRIPTIONS_PER_SOCKET", 100, 1),
    wsMaxSubscriptionsPerUser: integer(env, "WS_MAX_SUBSCRIPTIONS_PER_USER", 500, 1),
    wsRecheckSeconds: integer(env, "WS_RECHECK_SECONDS", 60, 0),
    rateLimitRequests: integer(env, "RATE_LIMIT_REQUESTS", 1200, 0),
    rateLimitWindowSeconds: integer(env, "RATE_LIMIT_WINDOW_SECONDS", 60, 1),
    loginFailuresPerAddress: integer(env, "LOGIN_FAILURES_PER_ADDRESS", 10, 0),
    loginAddressWindowSeconds: integer(env, "LOGIN_ADDRESS_WINDOW_SECONDS", 60, 1),
    loginFailuresPerUsername: integer(env, "LOGIN_FAILURES_PER_USERNAME", 50, 0),
    loginUsernameWindowSeconds: integer(env, "LOGIN_USERNAME_WINDOW_SECONDS", 900, 1),
    shutdownGraceSeconds: integer(env, "SHUTDOWN_GRACE_SECONDS", 10, 0),
    logLevel: logLevel(env.LOG_LEVEL),
    metricsToken: env.METRICS_TOKEN || undefined,
    otelEndpoint: otelEndpoint(env.OTEL_EXPORTER_OTLP_ENDPOINT),
    publicUrl: publicUrl(env.PUBLIC_URL),
    trustProxy: flag(env, "TRUST_PROXY", false),
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    graphqlIde: flag(env, "GRAPHQL_IDE", true),
    graphqlMaxTokens: integer(env, "GRAPHQL_MAX_TOKENS", 20_000, 1),
    graphqlMaxDirectives: integer(env, "GRAPHQL_MAX_DIRECTIVES", 50, 0),
    apqTtlSeconds: integer(env, "APQ_TTL_SECONDS", 7 * 24 * 3600, 1),
    apqMaxEntries: integer(env, "APQ_MAX_ENTRIES", 10_000, 1),
    ...persistedOperations(env),
    objectStore: objectStore(env),
    oidc: oidc(env),
    federation: flag(env, "FEDERATION", false),
  };
}
