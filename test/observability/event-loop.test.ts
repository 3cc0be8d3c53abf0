import { afterEach, describe, expect, it } from "vitest";
import { BLOCKED_MS, serving, watchEventLoop } from "../../src/observability/event-loop.ts";
import { build, type TestApp } from "../helpers/app.ts";
import { captureLog } from "../helpers/log.ts";

/**
 * Issue #24: event-loop health is visible. prom-client's `nodejs_eventloop_lag_*` on /metrics, and
 * one `warn` line, naming the requests being served, whenever the loop was blocked for more than
 * a second.
 */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the event loop can run nothing else meanwhile
  }
}

describe("event loop blocked for more than a second", () => {
  it("one warn line 'event loop blocked' with how long, and the id of the request being served", async () => {
    const stop = watchEventLoop();
    const done = serving("req-blocking-1");
    const lines = await captureLog(async () => {
      await sleep(300);
      blockFor(BLOCKED_MS + 300);
      done();
      await sleep(600);
    });
    stop();
    const warnings = lines.map((line) => JSON.parse(line)).filter((entry) => entry.message === "event loop blocked");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: "warn", requestIds: ["req-blocking-1"] });
    expect(warnings[0].blockedMs).toBeGreaterThanOrEqual(BLOCKED_MS);
  });

  it("no line for a loop that keeps turning", async () => {
    const stop = watchEventLoop();
    const lines = await captureLog(async () => {
      for (let i = 0; i < 6; i++) {
        blockFor(100);
        await sleep(50);
      }
    });
    stop();
    expect(lines.filter((line) => line.includes("event loop blocked"))).toEqual([]);
  });
});

describe("event loop lag on /metrics", () => {
  it("§7.2: prom-client's nodejs_eventloop_lag_seconds and its percentiles are exposed", async () => {
    app = await build();
    const res = await app.http().get("/metrics");
    expect(res.status).toBe(200);
    for (const name of [
      "nodejs_eventloop_lag_seconds",
      "nodejs_eventloop_lag_p50_seconds",
      "nodejs_eventloop_lag_p99_seconds",
      "nodejs_eventloop_lag_max_seconds",
    ]) {
      expect(res.text).toMatch(new RegExp(`^${name} \\d`, "m"));
    }
  });
});
