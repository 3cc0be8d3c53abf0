import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { DomainError } from "../errors.ts";
import { log } from "../log.ts";
import { rateLimitedRequests } from "../observability/metrics.ts";

/**
 * Requests per user and domain (CONTRACT §1: "Rate limit: 429 with Retry-After"), with
 * rate-limiter-flexible. One budget per (user, domain), shared by every face: a REST request under
 * /a/{domain}/…, a GraphQL request or WebSocket `subscribe` naming that domain or reading it through
 * global ids. GraphQL operations that name none (`me`, administration), or only domains the user is
 * not in, draw on the user's own budget, keyed by no domain (graphql/rate-limit.ts). Fixed windows: RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_SECONDS; 0 requests disables.
 *
 * Embedded database (one process): counters in memory. PostgreSQL (any number of processes): counters
 * in the `rate_limits` table (created by a Prisma migration, so no process creates it at run time and
 * none races another), through the process's one Prisma client and its pool: no extra connections.
 * A key refused once is then refused from memory until its window ends, without a query.
 * REDIS_URL set: counters in Redis instead (RateLimiterRedis), keys expiring with their window.
 *
 * If the counter store fails (the database is restarting), requests are let through rather than
 * refused: the request then meets the same outage and gets its 503. So too when Redis fails: the
 * budget guards capacity, not secrets, and refusing every request for a counter outage would turn
 * it into an outage of the whole service.
 */
const RATE_LIMIT_MESSAGE = "Rate limit exceeded";
export const RATE_LIMIT_TABLE = "rate_limits";

/** A request naming more domains is charged in the first this many, plus one point on the user's own budget. */
const MAX_DOMAINS_COUNTED = 20;
/** How often a PostgreSQL-mode process deletes counters whose window has ended. */
export const CLEANUP_INTERVAL_MS = 5 * 60 * 1000;
/** How long requests pass unchecked after the counter store failed, before it is asked again. */
const STORE_RETRY_MS = 1000;

/**
 * The counter store's failures, shared by the request rate limit and the login throttle: after one,
 * callers pass unchecked for STORE_RETRY_MS (no pile-up of doomed queries on an outage), and the
 * failure is logged at most once a second.
 */
export class StoreOutage {
  private bypassUntil = 0;
  private lastLogged = 0;

  /** `message`: the log line, e.g. "rate limit store unavailable; request let through" */
  constructor(private readonly message: string) {}

  get bypassing(): boolean {
    return Date.now() < this.bypassUntil;
  }

  failed(error: unknown): void {
    this.bypassUntil = Date.now() + STORE_RETRY_MS;
    if (Date.now() - this.lastLogged < 1000) return;
    this.lastLogged = Date.now();
    const e = (error ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
    log.error(this.message, {
      error: { name: e.name, code: e.code, message: typeof e.message === "string" ? e.message.split("\n")[0].slice(0, 200) : undefined },
    });
  }
}

export class RateLimitedError extends DomainError {
  /** seconds until the window ends, as sent in Retry-After */
  readonly retryAfter: number;
  constructor(retryAfter: number, message = RATE_LIMIT_MESSAGE) {
    super("RATE_LIMITED", message, {}, { "Retry-After": String(retryAfter) });
    this.retryAfter = retryAfter;
  }
}

type Row = { points: number; expire: number | null };

/**
 * The node-postgres `query({text, values})` interface RateLimiterPostgres speaks, served by Prisma's
 * raw queries, so that the counters use the pool the process already has. PostgreSQL returns the
 * bigint `expire` as a BigInt here: the limiter does arithmetic with it, so it becomes a number
 * (epoch milliseconds fit exactly).
 */
export function prismaStore(prisma: Database["prisma"]) {
  return {
    async query(q: { text: string; values?: unknown[] }): Promise<{ rows: Row[]; rowCount: number }> {
      const values = q.values ?? [];
      if (/\bRETURNING\b|^\s*SELECT\b/i.test(q.text)) {
        const rows = await prisma.$queryRawUnsafe<{ points: unknown; expire: unknown }[]>(q.text, ...values);
        const shaped = rows.map((r) => ({ points: Number(r.points), expire: r.expire === null || r.expire === undefined ? null : Number(r.expire) }));
        return { rows: shaped, rowCount: shaped.length };
      }
      const count = await prisma.$executeRawUnsafe(q.text, ...values);
      return { rows: [], rowCount: count };
    },
  };
}

/** Keys stay short and printable whatever the path held: odd or long domain names are hashed. */
export function rateLimitKey(userId: string, domain: string | undefined): string {
  if (domain === undefined) return `${userId}:`;
  const plain = /^[A-Za-z0-9_.-]{1,100}$/.test(domain);
  return `${userId}:${plain ? domain : `#${createHash("sha256").update(domain).digest("hex").slice(0, 40)}`}`;
}

/**
 * Deletes the counters of `rate_limits` (any prefix: request budgets, login failures) whose window
 * ended over a minute ago. Returns how many went.
 */
export async function deleteEndedCounters(prisma: Database["prisma"], now = Date.now()): Promise<number> {
  const { count } = await prisma.rateLimitCounter.deleteMany({ where: { expire: { lt: BigInt(now - 60_000) } } });
  return count;
}

/** Seconds a client waits for a counter refused with `msBeforeNext` left in its window (at least 1). */
export function retryAfterSeconds(msBeforeNext: number): number {
  return Math.max(1, Math.ceil(msBeforeNext / 1000));
}

export class RateLimiter {
  private readonly outage = new StoreOutage("rate limit store unavailable; request let through");
  private cleanup: NodeJS.Timeout | undefined;

  private constructor(
    private readonly limiter: RateLimiterAbstract | undefined,
    private readonly prisma?: Database["prisma"],
  ) {
    if (!prisma) return;
    this.cleanup = setInterval(() => void this.purgeExpired().catch((error: unknown) => this.outage.failed(error)), CLEANUP_INTERVAL_MS);
    this.cleanup.unref();
  }

  /**
   * PostgreSQL mode: deletes the counters whose window ended over a minute ago (dead weight: the
   * next request of that key starts a new window anyway). Returns how many went.
   */
  async purgeExpired(now = Date.now()): Promise<number> {
    return this.prisma ? deleteEndedCounters(this.prisma, now) : 0;
  }

  /**
   * Memory for the embedded database, the shared table for PostgreSQL, Redis when given; none when
   * requests is 0.
   */
  static create(
    config: Pick<Config, "rateLimitRequests" | "rateLimitWindowSeconds">,
    db: Pick<Database, "kind" | "prisma">,
    redis?: Redis,
  ): RateLimiter {
    const points = config.rateLimitRequests;
    if (points <= 0) return new RateLimiter(undefined);
    const duration = config.rateLimitWindowSeconds;
    if (redis) {
      return new RateLimiter(
        new RateLimiterRedis({
          storeClient: redis,
          keyPrefix: "rl",
          points,
          duration,
          inMemoryBlockOnConsumed: points + 1,
          rejectIfRedisNotReady: true,
        }),
      );
    }
    if (db.kind === "pglite") return new RateLimiter(new RateLimiterMemory({ keyPrefix: "rl", points, duration }));
    return new RateLimiter(
      new RateLimiterPostgres({
        storeClient: prismaStore(db.prisma),
        storeType: "client",
        tableName: RATE_LIMIT_TABLE,
        tableCreated: true,
        keyPrefix: "rl",
        points,
        duration,
        // once a key is over its budget, this process refuses it from memory until the window ends
        inMemoryBlockOnConsumed: points + 1,
        clearExpiredByTimeout: false, // our own timer, stopped by close()
      }),
      db.prisma,
    );
  }

  /** Stops the cleanup timer (the counters stay in the table for the other processes). */
  close(): void {
    clearInterval(this.cleanup);
    this.cleanup = undefined;
  }

  get enabled(): boolean {
    return this.limiter !== undefined;
  }

  /**
   * Takes one request from the caller's budget in each named domain (`undefined`: the user's own
   * budget); throws RATE_LIMITED with Retry-After when any of them is spent.
   */
  async consume(principal: { userId: string }, domains: readonly (string | undefined)[]): Promise<void> {
    const limiter = this.limiter;
    if (!limiter || this.outage.bypassing) return;
    const distinct = [...new Set(domains)];
    const counted: (string | undefined)[] = distinct.length > MAX_DOMAINS_COUNTED ? [...distinct.slice(0, MAX_DOMAINS_COUNTED), undefined] : distinct;
    let waitMs = -1;
    await Promise.all(
      [...new Set(counted)].map(async (domain) => {
        try {
          await limiter.consume(rateLimitKey(principal.userId, domain));
        } catch (result) {
          if (result instanceof RateLimiterRes) waitMs = Math.max(waitMs, result.msBeforeNext);
          else this.outage.failed(result);
        }
      }),
    );
    if (waitMs >= 0) {
      rateLimitedRequests.inc({ limiter: "requests" });
      throw new RateLimitedError(retryAfterSeconds(waitMs));
    }
  }
}
