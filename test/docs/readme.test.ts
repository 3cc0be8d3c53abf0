import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usingPostgres } from "../helpers/db.ts";
import { killGroup, startServer, type ServerProcess } from "../helpers/process.ts";
import { blocksUnder, readDoc, ROOT } from "./markdown.ts";

/**
 * The README's quick start and "Try it", and docs/graphql.md's first query and subscription, run
 * as written: the server is started with the quick start's own `npm start` line (on a fresh
 * DATA_DIR and a free port), and every shell block under the "Try it" heading runs verbatim in
 * bash, which stops at the first command that fails. The only thing the test adds is where the
 * server listens, through the GATEWAY variable the commands read (default http://127.0.0.1:8000).
 */

/** `VAR=value … npm start`, with an optional trailing comment */
const START_LINE = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)npm start\s*(?:#.*)?$/;
const INSTALL_LINE = /^npm (ci|install)\s*(#.*)?$/;

/** The environment the quick start's `npm start` line sets, refusing any other shape of block. */
function quickStartEnv(): Record<string, string> {
  const lines = blocksUnder(readDoc("README.md"), "Quick start", "sh")
    .flatMap((block) => block.code.split("\n"))
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#") && !INSTALL_LINE.test(line) && !/^npm test\b/.test(line));
  expect(lines, "the quick start's commands besides the install and npm test").toHaveLength(1);
  const start = START_LINE.exec(lines[0]!);
  expect(start, `the quick start's start command, as this test can run it: ${lines[0]}`).not.toBeNull();
  return Object.fromEntries(
    start![1]!
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((assignment) => assignment.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Cut after `timeoutMs` (a Try it stuck in its status loop), so that the test still shows what it printed. */
function run(command: string, args: string[], env: Record<string, string>, timeoutMs = 90_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The shell blocks under `heading` of `doc`, as one bash script that stops at the first failure. */
function bash(doc: string, heading: string, env: Record<string, string>): Promise<Run> {
  const blocks = blocksUnder(readDoc(doc), heading, "sh");
  expect(blocks.length, `shell blocks under "${heading}" in ${doc}`).toBeGreaterThan(0);
  return run("bash", ["-e", "-o", "pipefail", "-c", blocks.map((block) => block.code).join("\n")], env);
}

const explain = (result: Run) => `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;

describe.skipIf(usingPostgres())("the README and docs/graphql.md, run as written", () => {
  let dataDir: string;
  let server: ServerProcess;
  let gateway: Record<string, string>;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-readme-"));
    server = await startServer({ ...quickStartEnv(), DATA_DIR: dataDir }, 120_000, { npmStart: true });
    gateway = { GATEWAY: server.url };
  });
  afterAll(async () => {
    if (server) await killGroup(server.child.pid!);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('README: every command of "Try it" succeeds, and what it prints shows it', async () => {
    const result = await bash("README.md", "Try it", gateway);
    expect(result.code, explain(result)).toBe(0);
    // no GraphQL error, no REST error body (the upload's status carries an empty "errors" list)
    expect(result.stdout, explain(result)).not.toMatch(/"errors":\[\{|"error":/);
    // the user and key were made, the case written and listed, the archive processed, the server ready
    expect(result.stdout).toMatch(/"createUser":\{"id":/);
    expect(result.stdout).toMatch(/"case_id":"[0-9a-f-]{36}"/);
    expect(result.stdout).toMatch(/"case_name":"Ann"/);
    expect(result.stdout).toMatch(/"complete":true/);
    expect(result.stdout).toMatch(/"matched_files":\{"AppImage":\[/);
    expect(result.stdout).toMatch(/"status":"ready"/);
  }, 120_000);

  it("docs/graphql.md: the first query answers data and no errors", async () => {
    const result = await bash("docs/graphql.md", "A first query", gateway);
    expect(result.code, explain(result)).toBe(0);
    const answer = JSON.parse(result.stdout) as { data?: unknown; errors?: unknown };
    expect(answer.errors, explain(result)).toBeUndefined();
    expect(answer.data).toMatchObject({ cases: { totalCount: expect.any(Number) } });
  });

  it("docs/graphql.md: the subscription example prints a case written while it listens", async () => {
    const [example] = blocksUnder(readDoc("docs/graphql.md"), "A first subscription", "js");
    expect(example, 'a js block under "A first subscription" in docs/graphql.md').toBeDefined();
    // run from the repository's root, where graphql-ws is installed, as the page says
    const child = spawn(process.execPath, ["--input-type=module", "-e", example!.code], {
      cwd: ROOT,
      env: { ...process.env, ...gateway },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    try {
      // the subscription starts asynchronously: write cases until one is printed
      const deadline = Date.now() + 30_000;
      while (!stdout.includes("caseChanged") && Date.now() < deadline && child.exitCode === null) {
        const res = await fetch(`${server.url}/a/demo/api/case/v2/`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Authorization: `Basic ${btoa("worker:worker-pw")}` },
          body: JSON.stringify({ case_type: "visit", case_name: "Bo", owner_id: "o1", properties: {} }),
        });
        expect(res.ok).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(stdout, `--- stdout\n${stdout}\n--- stderr\n${stderr}`).toMatch(/"caseChanged":\{"caseId":"[0-9a-f-]{36}"/);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
