import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { usingPostgres } from "../helpers/db.ts";
import { freePort, startServer, type ServerProcess } from "../helpers/process.ts";
import { tempPrefix } from "../../src/util/temp-entries.ts";

/**
 * CONTRACT §0 Running: the real process on the embedded database, as production starts it (without
 * vitest's NODE_ENV=test). Signals in detail: shutdown.test.ts.
 */

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const ADMIN = basic("admin", "admin-pass");

async function graphql(url: string, query: string) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: ADMIN },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] } };
}

/**
 * A start that must fail (scripts/start.sh, as production runs it): its exit code and its lines,
 * each of which must be JSON (CONTRACT §7.2: the failure is a log line like any other).
 */
async function failedStart(env: Record<string, string>, timeoutMs = 30_000) {
  const failure = await startServer(env, timeoutMs).then(
    async (server) => {
      await server.stop("SIGKILL");
      throw new Error("the server started");
    },
    (error: Error) => error,
  );
  const [head, ...output] = failure.message.split("\n");
  const lines = output.filter(Boolean).map((line) => JSON.parse(line) as { level: string; message: string; error: { message: string } });
  return { code: Number(/exited with (\d+)/.exec(head!)?.[1]), lines: lines.filter((line) => line.level === "fatal"), output: output.join("\n") };
}

describe.skipIf(usingPostgres())("server process on the embedded database", () => {
  let dataDir: string;
  let server: ServerProcess | undefined;

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-data-"));
  });
  afterEach(async () => {
    await server?.stop("SIGKILL");
    server = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it("prints one ready line with its URL, answers 401 JSON, and exits 0 on SIGTERM after a 'stopped' line", async () => {
    server = await startServer({ DATA_DIR: dataDir, BOOTSTRAP_ADMIN: "admin:admin-pass" });
    const running = server;
    const lines = server
      .output()
      .trim()
      .split("\n")
      .filter((l) => l.includes("listening on"));
    expect(lines).toHaveLength(1);
    const res = await fetch(`${server.url}/a/demo/api/case/v2/`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: expect.any(String) });
    const code = await server.stop("SIGTERM");
    server = undefined;
    expect(code).toBe(0);
    const last = JSON.parse(running.output().trim().split("\n").at(-1) ?? "{}");
    expect(last).toMatchObject({ level: "info", message: "stopped", signal: "SIGTERM", durationMs: expect.any(Number) });
  });

  it("keeps data across a restart, and BOOTSTRAP_ADMIN resets the admin password", async () => {
    server = await startServer({ DATA_DIR: dataDir, BOOTSTRAP_ADMIN: "admin:admin-pass" });
    const created = await graphql(server.url, 'mutation { createDomain(name: "kept") { name } }');
    expect(created.body.data).toEqual({ createDomain: { name: "kept" } });
    expect(await server.stop("SIGINT")).toBe(0);

    server = await startServer({ DATA_DIR: dataDir, BOOTSTRAP_ADMIN: "admin:admin-pass" });
    const listed = await graphql(server.url, "{ domains { name } }");
    expect(listed.body.data).toEqual({ domains: [{ name: "kept" }] });
  });

  it("F17: start-up sweeps DATA_DIR/tmp of what a killed process left, and keeps a live process's entries", async () => {
    const tmp = path.join(dataDir, "tmp");
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await once(child, "exit");
    const host = path
      .basename(await mkdtemp(path.join(dataDir, tempPrefix("upload"))))
      .split("-")[1]
      .split(".")[1];
    const killed = path.join(tmp, `upload-${child.pid}.${host}-killed`);
    const live = path.join(tmp, `archive-${process.pid}.${host}-living`);
    for (const entry of [killed, live]) {
      await mkdir(entry, { recursive: true });
      await writeFile(path.join(entry, "0-bulk_upload_file"), "partial");
    }
    server = await startServer({ DATA_DIR: dataDir });
    expect(await readdir(tmp)).toEqual([path.basename(live)]);
  });

  it("refuses to start with a malformed setting, saying which", async () => {
    await expect(startServer({ DATA_DIR: dataDir, PORT: "not-a-port" }, 30_000)).rejects.toThrow(/PORT must be an integer/);
  });

  it("§7.2: a malformed setting is one JSON line, level fatal, naming the setting; exit 1", async () => {
    const { code, lines } = await failedStart({ DATA_DIR: dataDir, PORT: "not-a-port" });
    expect(code).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "fatal",
        message: "failed to start",
        setting: "PORT",
        error: expect.objectContaining({ message: expect.stringMatching(/^PORT must be an integer/) }),
      }),
    ]);
  });

  it("§7.2: an unreachable DATABASE_URL is one JSON line naming the database as the dependency, and never its password; exit 1", async () => {
    const port = await freePort();
    const { code, lines, output } = await failedStart(
      { DATA_DIR: dataDir, DATABASE_URL: `postgresql://gateway:db-Secret-4471@127.0.0.1:${port}/gateway` },
      60_000,
    );
    expect(code).toBe(1);
    expect(lines).toEqual([expect.objectContaining({ level: "fatal", message: "failed to start", dependency: "database" })]);
    expect(lines[0]!.error.message).toMatch(/Can't reach database server/);
    expect(output).not.toContain("db-Secret-4471");
  });
});
