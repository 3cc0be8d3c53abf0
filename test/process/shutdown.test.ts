import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { loadConfig } from "../../src/config.ts";
import { usingPostgres } from "../helpers/db.ts";
import { groupProcesses, killGroup, startServer, type ServerProcess, type StartOptions } from "../helpers/process.ts";

/**
 * CONTRACT §7.1 Process lifecycle, on the server as production starts it: no NODE_ENV=test (under
 * which Apollo Server installs no signal handlers of its own), and through `npm start`.
 */

const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
/** SHUTDOWN_GRACE_SECONDS's default, and the contract's bound on a stop: grace + 5 s */
const GRACE_MS = 10_000;
const STOP_BOUND_MS = GRACE_MS + 5_000;

/** Whether a new TCP connection to `url` is refused. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

async function until(what: string, condition: () => Promise<boolean>, withinMs: number): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
    await sleep(100);
  }
  return Date.now() - started;
}

/** Resolves with the exit code, or null when the process still runs after `ms`. */
function exitWithin(server: ServerProcess, ms: number): Promise<number | null | "running"> {
  return Promise.race([server.exited, sleep(ms, "running" as const)]);
}

/**
 * A GraphQL request whose body is still arriving: sent with `Expect: 100-continue`, so that it is
 * known to be in the server (its 100 Continue came back) before the test goes on. `finish()` sends
 * the body and resolves with the response.
 */
async function requestInFlight(url: string): Promise<{ finish(): Promise<{ status: number; connection?: string; body: string }> }> {
  const body = JSON.stringify({ query: "{ __typename }" });
  const req = http.request(`${url}/graphql`, {
    method: "POST",
    agent: false,
    headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), Authorization: ADMIN, Expect: "100-continue" },
  });
  const response = new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
    req.on("error", reject); // `on`: a request cut at the end of the grace may fail more than once
    req.once("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.once("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: text }));
      res.once("error", reject);
    });
  });
  response.catch(() => {}); // awaited by finish(); a test that never finishes it must not fail on it
  await new Promise<void>((resolve, reject) => {
    req.once("continue", resolve);
    req.once("error", reject);
    req.flushHeaders();
  });
  req.write(body.slice(0, 5));
  return {
    finish() {
      req.end(body.slice(5));
      return response;
    },
  };
}

describe("SHUTDOWN_GRACE_SECONDS", () => {
  it("defaults to 10 and is validated like the other settings", () => {
    expect(loadConfig({}).shutdownGraceSeconds).toBe(10);
    expect(loadConfig({ SHUTDOWN_GRACE_SECONDS: "0" }).shutdownGraceSeconds).toBe(0);
    expect(() => loadConfig({ SHUTDOWN_GRACE_SECONDS: "soon" })).toThrow(/SHUTDOWN_GRACE_SECONDS must be an integer/);
  });
});

describe.skipIf(usingPostgres())("CONTRACT §7.1: SIGTERM and SIGINT stop the server as started in production", () => {
  let dataDir: string;
  let server: ServerProcess | undefined;
  let group: number | undefined;

  const start = async (env: Record<string, string> = {}, options: StartOptions = {}) => {
    server = await startServer({ DATA_DIR: dataDir, BOOTSTRAP_ADMIN: "admin:admin-pass", ...env }, 60_000, options);
    if (options.npmStart) group = server.child.pid;
    return server;
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-data-"));
  });
  afterEach(async () => {
    if (group !== undefined) await killGroup(group);
    else await server?.stop("SIGKILL");
    server = undefined;
    group = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it("SIGTERM to the server process: an open WebSocket is closed with 1001 Going Away, and it exits 0 within grace + 5 s", async () => {
    const running = await start();
    const socket = new WebSocket(`${running.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: ADMIN } })));
      socket.on("message", (data) => {
        if ((JSON.parse(String(data)) as { type: string }).type === "connection_ack") resolve();
      });
      socket.once("error", reject);
    });
    const sent = Date.now();
    running.child.kill("SIGTERM");
    expect(await closed).toBe(1001);
    expect(await exitWithin(running, STOP_BOUND_MS)).toBe(0);
    expect(Date.now() - sent).toBeLessThan(STOP_BOUND_MS);
    expect(await refused(running.url)).toBe(true);
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s to the process group of `npm start`: every process of it is gone within grace + 5 s, the port closed",
    async (signal) => {
      const running = await start({}, { npmStart: true });
      expect((await groupProcesses(group!)).length).toBeGreaterThanOrEqual(2); // npm and the server
      process.kill(-group!, signal);
      await until("every process of the group gone", async () => (await groupProcesses(group!)).length === 0, STOP_BOUND_MS);
      // npm exits with its script's status (0), or 143/130 when it got the group's signal first
      expect([0, 128 + os.constants.signals[signal]]).toContain(await running.exited);
      expect(await refused(running.url)).toBe(true);
    },
  );

  it("SIGTERM to npm alone (a container's stop signal): npm forwards it and leaves no server behind", async () => {
    const running = await start({}, { npmStart: true });
    running.child.kill("SIGTERM");
    await until("every process of `npm start` gone", async () => (await groupProcesses(group!)).length === 0, STOP_BOUND_MS);
    expect(await running.exited).toBe(0);
    expect(await refused(running.url)).toBe(true);
  });

  it("an in-flight request finishes during the stop, while new connections are refused", async () => {
    const running = await start({ SHUTDOWN_GRACE_SECONDS: "60" }); // however slow this machine, the request is not cut
    const request = await requestInFlight(running.url);
    running.child.kill("SIGTERM");
    await until("new connections refused", () => refused(running.url), STOP_BOUND_MS);
    expect(await exitWithin(running, 1_000)).toBe("running"); // waits for the request
    const response = await request.finish();
    expect(response).toEqual({ status: 200, connection: "close", body: expect.any(String) });
    expect(JSON.parse(response.body)).toEqual({ data: { __typename: "Query" } });
    expect(await exitWithin(running, STOP_BOUND_MS)).toBe(0);
  });

  it("a request still running at the end of the grace is cut, and the process exits 0 within grace + 5 s", async () => {
    const running = await start({ SHUTDOWN_GRACE_SECONDS: "1" });
    const request = await requestInFlight(running.url);
    running.child.kill("SIGTERM");
    expect(await exitWithin(running, 1_000 + 5_000)).toBe(0);
    await expect(request.finish()).rejects.toThrow();
  });

  it("a signal repeated more than a second after the first exits at once; one forwarded within the second does not", async () => {
    const running = await start({ SHUTDOWN_GRACE_SECONDS: "600" });
    await requestInFlight(running.url); // never finished: the stop waits for it, up to the grace
    running.child.kill("SIGTERM");
    await sleep(200);
    running.child.kill("SIGTERM"); // as npm forwards the group's signal
    expect(await exitWithin(running, 1_500)).toBe("running");
    const sent = Date.now();
    running.child.kill("SIGINT");
    expect(await exitWithin(running, 5_000)).toBe(0);
    expect(Date.now() - sent).toBeLessThan(5_000);
  });
});
