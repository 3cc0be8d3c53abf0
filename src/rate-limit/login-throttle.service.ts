import { createHash } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { rateLimitedRequests } from "../observability/metrics.ts";
import {
  CLEANUP_INTERVAL_MS,
  deleteEndedCounters,
  prismaStore,
  RATE_LIMIT_TABLE,
  RateLimitedError,
  retryAfterSeconds,
  StoreOutage,
} from "./rate-limit.service.ts";

/**
 * Failed password logins: every password-bearing attempt (Basic on REST, GraphQL and WebSocket,
 * Digest, the OAuth token endpoint) is admitted here BEFORE any password is hashed, so that
 * guessing and scrypt CPU exhaustion are bounded. Budgets of failures, in fixed windows, in the
 * request rate limit's store (shared by every process on PostgreSQL); a budget of 0 disables it:
 * - per client address (tight: one client guessing; an IPv6 client's budget is its /64);
 * - per username (larger: a distributed guess at one account);
 * - per address and username, for an address that logged in as the user lately (TRUSTED_SECONDS):
 *   it draws on this budget instead of the two above, so that neither a distributed attacker nor a
 *   neighbour behind the same NAT can lock the real user out. Past it, an attempt falls back on the
 *   username's budget, so a guesser at the user's own address still meets the account's bound.
 *
 * A point is taken BEFORE hashing and given back when the password was right: only failures stay
 * counted, and a burst sent at once meets the budget as surely as attempts one by one. A right
 * password past every budget is refused like a wrong one, so a 429 tells nothing of the password.
 * If the counter store fails (database restarting), attempts are let through: the login then meets
 * the same outage and gets its 503.
 *
 * REDIS_URL set: the counters live in Redis (shared by every process). The database is then up
 * while Redis may not be, so letting attempts through would let guessing and hashing run unbounded
 * for the length of the outage; refusing them would lock every password user out. Instead each
 * process falls back on counters in its own memory with the same budgets (rate-limiter-flexible's
 * insurance limiter): guessing stays bounded (by the budget times the number of processes) and
 * the right password still logs in.
 */
export const LOGIN_THROTTLE_MESSAGE = "Too many failed login attempts. Retry later.";

/** How long a successful login exempts its address from that username's budget. */
const TRUSTED_SECONDS = 7 * 24 * 3600;
/** A process writes the same trust again at most this often (Basic logs in on every request). */
const TRUST_REFRESH_MS = 3600 * 1000;
/** Trusts this process remembers having written; past this it forgets them all and writes again. */
const TRUST_MEMO_LIMIT = 10_000;

/** What a password-bearing attempt is known by; either may be unknown (no address on a test socket). */
export interface LoginAttemptKey {
  address: string | undefined;
  username: string | undefined;
}

/** The outcome of an admitted attempt, reported once the password has been checked. */
export interface LoginAttempt {
  /**
   * the password (or Digest response, or client secret) was wrong: the points it took stay taken.
   * Throws the RateLimitedError (429) when the attempt was admitted past its pair's budget on the
   * username's: a wrong guess there is answered as over budget, not as a plain 401.
   */
  failed(): Promise<void>;
  /** the password was right: its points are given back, and the address is trusted for the username */
  succeeded(): Promise<void>;
  /** no password was judged (a stale Digest nonce, a malformed request): its points are given back */
  released(): Promise<void>;
}

const NOTHING_TO_REPORT: LoginAttempt = { failed: async () => {}, succeeded: async () => {}, released: async () => {} };

type LoginThrottleConfig = Pick<
  Config,
  "loginFailuresPerAddress" | "loginAddressWindowSeconds" | "loginFailuresPerUsername" | "loginUsernameWindowSeconds"
>;

/** One budget: a counter store and the keys it is charged by. */
interface Budget {
  limiter: RateLimiterAbstract;
  key: string;
}

export class LoginThrottle {
  private readonly trustedMemo = new Map<string, number>();
  private readonly outage = new StoreOutage("login throttle store unavailable; attempt let through");
  private cleanup: NodeJS.Timeout | undefined;

  private constructor(
    private readonly byAddress: RateLimiterAbstract | undefined,
    private readonly byUsername: RateLimiterAbstract | undefined,
    private readonly trusted: RateLimiterAbstract | undefined,
    prisma?: Database["prisma"],
  ) {
    if (!prisma || (!byAddress && !byUsername)) return;
    this.cleanup = setInterval(() => void deleteEndedCounters(prisma).catch((error: unknown) => this.outage.failed(error)), CLEANUP_INTERVAL_MS);
    this.cleanup.unref();
  }

  static create(config: LoginThrottleConfig, db: Pick<Database, "kind" | "prisma">, redis?: Redis): LoginThrottle {
    const store = (keyPrefix: string, points: number, duration: number): RateLimiterAbstract | undefined => {
      if (points <= 0) return undefined;
      if (redis) {
        const insuranceLimiter = new RateLimiterMemory({ keyPrefix, points, duration });
        return new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration, rejectIfRedisNotReady: true, insuranceLimiter });
      }
      if (db.kind === "pglite") return new RateLimiterMemory({ keyPrefix, points, duration });
      return new RateLimiterPostgres({
        storeClient: prismaStore(db.prisma),
        storeType: "client",
        tableName: RATE_LIMIT_TABLE,
        tableCreated: true,
        keyPrefix,
        points,
        duration,
        clearExpiredByTimeout: false, // deleteEndedCounters, on our own timer
      });
    };
    const byUsername = store("login-user", config.loginFailuresPerUsername, config.loginUsernameWindowSeconds);
    return new LoginThrottle(
      store("login-addr", config.loginFailuresPerAddress, config.loginAddressWindowSeconds),
      byUsername,
      config.loginFailuresPerAddress > 0 || byUsername ? store("login-ok", 1, TRUSTED_SECONDS) : undefined,
      db.kind === "pglite" || redis ? undefined : db.prisma,
    );
  }

  /** Stops the cleanup timer (the counters stay in the table for the other processes). */
  close(): void {
    clearInterval(this.cleanup);
    this.cleanup = undefined;
  }

  /**
   * Admits one password attempt, or throws a RateLimitedError (429, Retry-After,
   * LOGIN_THROTTLE_MESSAGE) when its address or username has spent its budget of failures.
   * Call before hashing; report the outcome on the attempt.
   */
  async attempt(key: LoginAttemptKey): Promise<LoginAttempt> {
    if (this.outage.bypassing) return NOTHING_TO_REPORT;
    const address = key.address === undefined ? undefined : addressBucket(key.address);
    try {
      if (key.username !== undefined && address !== undefined && (await this.isTrusted(key.username, address))) {
        return await this.trustedAttempt(key.username, address);
      }
      const budgets = this.budgetsOf(key.username, address);
      const wait = await this.reserve(budgets);
      if (wait !== undefined) throw this.refusal(wait);
      return this.outcome(budgets, key.username, address);
    } catch (error) {
      if (error instanceof RateLimitedError) throw error;
      this.outage.failed(error);
      return NOTHING_TO_REPORT;
    }
  }

  private budgetsOf(username: string | undefined, address: string | undefined): Budget[] {
    const budgets: Budget[] = [];
    if (this.byAddress && address !== undefined) budgets.push({ limiter: this.byAddress, key: counterKey(address) });
    if (this.byUsername && username !== undefined) budgets.push({ limiter: this.byUsername, key: counterKey(username) });
    return budgets;
  }

  /**
   * A trusted address guessing its user's password (a neighbour behind the same NAT) still meets a
   * budget: one of that address and username together, as large as an address's, which nobody
   * else's failures can spend.
   */
  private pairBudget(username: string, address: string): Budget[] {
    return this.byAddress ? [{ limiter: this.byAddress, key: `pair-${trustKey(username, address)}` }] : [];
  }

  /**
   * An attempt from an address trusted for the username: on the pair's budget, and past it on the
   * username's (G5: the user's right password is not refused for a neighbour's guesses while the
   * account's budget lasts, and those guesses still count there). Refused when both are spent,
   * until the first of them has a point again.
   */
  private async trustedAttempt(username: string, address: string): Promise<LoginAttempt> {
    const pair = this.pairBudget(username, address);
    const pairWait = await this.reserve(pair);
    if (pairWait === undefined) return this.outcome(pair, username, address);
    const account = this.budgetsOf(username, undefined);
    const accountWait = account.length === 0 ? pairWait : await this.reserve(account);
    if (accountWait !== undefined) throw this.refusal(Math.min(pairWait, accountWait));
    return this.outcome(account, username, address, pairWait);
  }

  /**
   * Takes one point of each budget: undefined when all were taken, else (having given back what it
   * took) the longest wait until the refusing ones have a point again. A store failure throws.
   */
  private async reserve(budgets: Budget[]): Promise<number | undefined> {
    const taken = await Promise.allSettled(budgets.map((b) => b.limiter.consume(b.key)));
    const refusals = taken.flatMap((t) => (t.status === "rejected" ? [t.reason as unknown] : []));
    if (refusals.length === 0) return undefined;
    await Promise.all(budgets.filter((_, i) => taken[i]!.status === "fulfilled").map((b) => b.limiter.reward(b.key)));
    const storeError = refusals.find((r) => !(r instanceof RateLimiterRes));
    if (storeError !== undefined) throw storeError;
    return Math.max(...refusals.map((r) => (r as RateLimiterRes).msBeforeNext));
  }

  private refusal(waitMs: number): RateLimitedError {
    rateLimitedRequests.inc({ limiter: "login" });
    return new RateLimitedError(retryAfterSeconds(waitMs), LOGIN_THROTTLE_MESSAGE);
  }

  /** `overPairMs`: the attempt was admitted past its pair's budget, which frees a point after that long. */
  private outcome(budgets: Budget[], username: string | undefined, address: string | undefined, overPairMs?: number): LoginAttempt {
    const giveBack = async () => void (await Promise.all(budgets.map((b) => b.limiter.reward(b.key))));
    return {
      failed: async () => {
        if (overPairMs !== undefined) throw this.refusal(overPairMs);
      },
      succeeded: () =>
        this.report(async () => {
          await giveBack();
          if (username !== undefined) await this.trust(username, address);
        }),
      released: () => this.report(giveBack),
    };
  }

  private async isTrusted(username: string, address: string | undefined): Promise<boolean> {
    if (!this.trusted || address === undefined) return false;
    const res = await this.trusted.get(trustKey(username, address));
    return res !== null && res.consumedPoints > 0;
  }

  private async trust(username: string, address: string | undefined): Promise<void> {
    if (!this.trusted || address === undefined) return;
    const key = trustKey(username, address);
    const now = Date.now();
    if ((this.trustedMemo.get(key) ?? 0) > now) return;
    await this.trusted.set(key, 1, TRUSTED_SECONDS);
    if (this.trustedMemo.size >= TRUST_MEMO_LIMIT) this.trustedMemo.clear();
    this.trustedMemo.set(key, now + TRUST_REFRESH_MS);
  }

  /** A report that fails (the store is down) must not fail the login it reports on. */
  private async report(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.outage.failed(error);
    }
  }
}

/** Keys stay short and printable whatever the client sent: anything odd or long is hashed. */
function counterKey(value: string): string {
  return /^[A-Za-z0-9_.@:-]{1,100}$/.test(value) ? value : `#${sha256(value).slice(0, 40)}`;
}

function trustKey(username: string, address: string): string {
  return sha256(`${username}\u0000${address}`).slice(0, 40);
}

function sha256(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/**
 * The budget an address draws on: an IPv4 address itself (also when written IPv4-mapped,
 * `::ffff:1.2.3.4`), the /64 of an IPv6 address (one host is usually given a whole /64, so
 * counting single IPv6 addresses would give it 2^64 budgets), anything else as it is.
 */
export function addressBucket(address: string): string {
  const plain = address.replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (!isIPv6(plain)) return plain;
  return `${expandIPv6(plain).slice(0, 4).join(":")}::/64`;
}

/** The eight groups of an IPv6 address, without leading zeros ("::" filled with zeros). */
function expandIPv6(address: string): string[] {
  const withoutV4 = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a, b, c, d) => {
    const hex = (x: string, y: string) => ((Number(x) << 8) | Number(y)).toString(16);
    return `${hex(a, b)}:${hex(c, d)}`;
  });
  const [head, tail] = withoutV4.split("::");
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill("0");
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16).toString(16));
}
