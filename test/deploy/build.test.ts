/**
 * CONTRACT §7.5, the compiled build: `npm run build` writes dist/, and scripts/start.sh with
 * RUN_COMPILED=true (as the container image sets it) runs it with plain node, no TypeScript loader:
 * the server starts on a new data directory, builds its GraphQL schema from the compiled
 * decorators' metadata, serves the static pages read from beside its modules, and stops with 0;
 * `npm run db:migrate` runs compiled too. start.sh never picks dist/ on its own.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const ADMIN = `Basic ${Buffer.from("buildadmin:admin-Pass-1").toString("base64")}`;

let server: ServerProcess | undefined;
let dataDir: string;
let db: Database | undefined;

beforeAll(async () => {
  await run("npm", ["run", "build"], { cwd: ROOT });
  dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-build-"));
  if (usingPostgres()) db = await freshDatabase();
}, 120_000);

afterAll(async () => {
  server?.child.kill("SIGKILL");
  await server?.exited;
  await db?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the compiled build", () => {
  it("§7.5: RUN_COMPILED=true runs dist/src/main.js with plain node, serving GraphQL and the static pages; SIGTERM exits 0", {
    timeout: 120_000,
  }, async () => {
    const env = { DATA_DIR: path.join(dataDir, "server"), RUN_COMPILED: "true", BOOTSTRAP_ADMIN: "buildadmin:admin-Pass-1" };
    server = await startServer({ ...env, ...(db?.url ? { DATABASE_URL: db.url } : {}) });
    const commandLine = (await readFile(`/proc/${server.child.pid}/cmdline`, "utf8")).split("\0");
    expect(commandLine).toContain("dist/src/main.js");
    expect(commandLine.join(" ")).not.toMatch(/tsx|\.ts\b/);

    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const created = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { Authorization: ADMIN, "Content-Type": "application/json" },
      body: JSON.stringify({ query: 'mutation { createDomain(name: "built") { name } }' }),
    });
    expect(await created.json()).toEqual({ data: { createDomain: { name: "built" } } });
    for (const [page, type] of [
      ["/dashboard/", "text/html"],
      ["/dashboard/dashboard.js", "javascript"],
      ["/docs/", "text/html"],
      ["/docs/docs.js", "javascript"],
      ["/docs/swagger-ui.css", "text/css"],
    ]) {
      const res = await fetch(`${server.url}${page}`);
      expect({ page, status: res.status }).toEqual({ page, status: 200 });
      expect(res.headers.get("content-type")).toContain(type);
    }
    expect(await server.stop("SIGTERM")).toBe(0);
    server = undefined;
  });

  it("§7.5: `npm run db:migrate` with RUN_COMPILED=true migrates a new (embedded) database", { timeout: 120_000 }, async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, RUN_COMPILED: "true", DATA_DIR: path.join(dataDir, "migrated") };
    delete env.NODE_ENV;
    delete env.DATABASE_URL;
    const { stdout } = await run("npm", ["run", "--silent", "db:migrate"], { cwd: ROOT, env });
    expect(stdout).toMatch(/^applied: \d+_init, /m);
  });

  it("§7.5: RUN_COMPILED=true where nothing was built fails at once, naming the missing file", async () => {
    const bare = await mkdtemp(path.join(os.tmpdir(), "gateway-unbuilt-"));
    await mkdir(path.join(bare, "scripts"));
    await copyFile(path.join(ROOT, "scripts/start.sh"), path.join(bare, "scripts/start.sh"));
    const started = run("sh", ["scripts/start.sh"], { cwd: bare, env: { ...process.env, RUN_COMPILED: "true" } });
    await expect(started).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining("dist/src/main.js does not exist: run npm run build") });
    await rm(bare, { recursive: true, force: true });
  });
});
