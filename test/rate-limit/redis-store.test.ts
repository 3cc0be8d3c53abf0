import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { counterConnection } from "../../src/db/redis.ts";
import { LOGIN_THROTTLE_MESSAGE, LoginThrottle } from "../../src/rate-limit/login-throttle.service.ts";
import { RateLimitedError, RateLimiter } from "../../src/rate-limit/rate-limit.service.ts";
import { redisUnavailable, startRedis, type RedisServer } from "../helpers/redis.ts";

/**
 * CONTRACT §7.6: with REDIS_URL the request and login counters live in Redis (rate-limiter-flexible's
 * RateLimiterRedis), shared by every process that names it, with today's budgets and answers; and
 * what each does while Redis is down (operations.md "Redis"): the request budget lets requests
 * through, the login throttle counts in the process's own memory. Each "process" here is a limiter
 * with a Redis connection of its own.
 */

// the database is not asked when the counters are in Redis
const db = { kind: "postgres" as const, prisma: {} as never };
const config = { ...loadConfig({}), rateLimitRequests: 3, rateLimitWindowSeconds: 60, loginFailuresPerAddress: 2 };

async function refusal(promise: Promise<unknown>): Promise<RateLimitedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RateLimitedError);
  return error as RateLimitedError;
}

describe.skipIf(redisUnavailable())("§7.6: rate-limit and login counters in Redis", () => {
  let server: RedisServer | undefined;
  const connections: Redis[] = [];
  afterEach(async () => {
    for (const c of connections.splice(0)) c.disconnect();
    await server?.remove();
    server = undefined;
  });

  async function connection(): Promise<Redis> {
    server ??= await startRedis();
    const redis = await counterConnection(server.url);
    connections.push(redis);
    return redis;
  }

  it("§7.6: two processes share each user's request budget; the refusal is today's (Rate limit exceeded, Retry-After); keys rl:… expire with the window", async () => {
    const [one, two] = [RateLimiter.create(config, db, await connection()), RateLimiter.create(config, db, await connection())];
    await one.consume({ userId: "u" }, ["demo"]);
    await two.consume({ userId: "u" }, ["demo"]);
    await one.consume({ userId: "u" }, ["demo"]);
    const refused = await refusal(two.consume({ userId: "u" }, ["demo"]));
    expect(refused.message).toBe("Rate limit exceeded");
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(refused.retryAfter).toBeLessThanOrEqual(60);
    // another domain, another budget
    await two.consume({ userId: "u" }, ["other"]);
    const admin = server!.admin();
    expect(await admin.keys("rl:*")).toEqual(expect.arrayContaining(["rl:u:demo", "rl:u:other"]));
    expect(await admin.pttl("rl:u:demo")).toBeGreaterThan(0);
  });

  it("§7.6: failed logins on one process count on another; the answer is today's 429", async () => {
    const [one, two] = [LoginThrottle.create(config, db, await connection()), LoginThrottle.create(config, db, await connection())];
    await (await one.attempt({ address: "192.0.2.1", username: "a" })).failed();
    await (await two.attempt({ address: "192.0.2.1", username: "b" })).failed();
    const refused = await refusal(one.attempt({ address: "192.0.2.1", username: "c" }));
    expect(refused.message).toBe(LOGIN_THROTTLE_MESSAGE);
    // a success gives its point back: another address logging in right never nears the budget
    for (let i = 0; i < 5; i++) await (await two.attempt({ address: "192.0.2.9", username: "a" })).succeeded();
    expect(await server!.admin().keys("login-addr:*")).toEqual(expect.arrayContaining(["login-addr:192.0.2.1"]));
  });

  it("§7.6: Redis down: requests are let through, not refused and not failed", async () => {
    const limiter = RateLimiter.create(config, db, await connection());
    await server!.down();
    for (let i = 0; i < 10; i++) await expect(limiter.consume({ userId: "u" }, ["demo"])).resolves.toBeUndefined();
  });

  it("§7.6: Redis down: failed logins are still bounded, by this process's own counters, and a right password from elsewhere logs in", async () => {
    const throttle = LoginThrottle.create(config, db, await connection());
    await server!.down();
    await (await throttle.attempt({ address: "192.0.2.1", username: "u" })).failed();
    await (await throttle.attempt({ address: "192.0.2.1", username: "u" })).failed();
    const refused = await refusal(throttle.attempt({ address: "192.0.2.1", username: "u" }));
    expect(refused.message).toBe(LOGIN_THROTTLE_MESSAGE);
    await (await throttle.attempt({ address: "192.0.2.2", username: "u" })).succeeded();
  });
});
