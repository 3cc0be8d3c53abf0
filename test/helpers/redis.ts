/**
 * A throwaway Debian `redis-server` on loopback for the REDIS_URL tests (CONTRACT §7.6): a free
 * port, a temporary directory, no persistence, stopped (and its directory removed) by the test. A
 * test may stop and start it again on the same port, as a Redis restart does to the gateway.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./process.ts";

export interface RedisServer {
  url: string;
  port: number;
  /** a plain connection of the test's own, for CLIENT KILL, XLEN and the like */
  admin(): Redis;
  /** stops the server (its data is gone: no persistence) */
  down(): Promise<void>;
  /** starts it again on the same port */
  up(): Promise<void>;
  /** stops it for good and removes its directory */
  remove(): Promise<void>;
}

/** Why the Redis tests cannot run here, or undefined when they can (.ci/run installs the package). */
export function redisUnavailable(): string | undefined {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "redis-server is not installed (apt-get install -y redis-server)";
  }
}

export async function startRedis(): Promise<RedisServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "gateway-redis-"));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const admins: Redis[] = [];
  let child: ChildProcess | undefined;
  const up = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
      child!.once("exit", (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
      const ready = () => {
        if (!/Ready to accept connections/.test(output)) return;
        clearTimeout(timer);
        resolve();
      };
      child!.stdout!.on("data", ready);
    });
  };
  const down = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGKILL");
    await exited;
  };
  await up();
  return {
    url,
    port,
    admin() {
      const redis = new Redis(url, { lazyConnect: false });
      redis.on("error", () => {});
      admins.push(redis);
      return redis;
    },
    down,
    up,
    async remove() {
      for (const admin of admins) admin.disconnect();
      await down();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
