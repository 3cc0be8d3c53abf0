import { Redis, type RedisOptions } from "ioredis";
import { log } from "../log.ts";

/**
 * Connections to the Redis server of REDIS_URL (CONTRACT §7.6), through ioredis. Each use opens its
 * own: the bus's blocking reader must not hold up its publisher, and the counters must fail fast
 * rather than queue behind an outage. Every connection reconnects by itself, with the same backoff
 * as the PostgreSQL event listener, and logs its losses (at most once per outage, not per retry).
 */

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;
const CONNECT_TIMEOUT_MS = 5000;
/** How long a process starting waits for Redis before it gives up (and does not start). */
export const START_TIMEOUT_MS = 5000;

/** What the connection is for, as its logs and `CLIENT LIST` name it. */
type Purpose = "events-publisher" | "events-reader" | "counters";

export function redisConnection(url: string, purpose: Purpose, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    connectionName: `gateway-${purpose}`,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(RETRY_FIRST_MS * 2 ** (times - 1), RETRY_MAX_MS),
    ...options,
  });
  let down = false;
  let lastError: { name: string; code?: string; message: string } | undefined;
  // without a listener ioredis prints every failed retry; the loss is logged once, below
  redis.on("error", (error: Error & { code?: string }) => (lastError = { name: error.name, code: error.code, message: error.message }));
  redis.on("reconnecting", () => {
    if (down) return;
    down = true;
    log.error("redis connection lost; reconnecting", { purpose, error: lastError });
  });
  redis.on("ready", () => {
    lastError = undefined;
    if (!down) return;
    down = false;
    log.info("redis connection back", { purpose });
  });
  return redis;
}

/** Closes a connection without waiting for an unreachable server. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === "ready") await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}

/** A counter command that has not answered by then has failed (the request goes on without it). */
const COUNTER_COMMAND_TIMEOUT_MS = 1000;

/**
 * The connection of the rate-limit and login-throttle counters (and of the readiness check): while
 * Redis is away its commands fail at once rather than queue, so that no request waits on an outage.
 * Resolves once connected, so that the first requests meet the shared counters; fails, as the bus
 * does, when Redis does not answer at start.
 */
export async function counterConnection(url: string): Promise<Redis> {
  const redis = redisConnection(url, "counters", {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COUNTER_COMMAND_TIMEOUT_MS,
  });
  if (redis.status === "ready") return redis;
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis (REDIS_URL) did not answer within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      redis.once("ready", () => resolve());
    });
    return redis;
  } catch (error) {
    redis.disconnect();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
