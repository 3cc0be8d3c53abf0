import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The logger writes its lines in batches (src/log.ts): none may be lost where code still runs. A
 * process of its own logs through src/log.ts onto a stderr pipe read here, and ends in each way a
 * process ends: the lines it logged are all there, in order.
 */

const LOG = path.resolve(import.meta.dirname, "../src/log.ts");

/** Runs `body` (ES module code, `log` in scope) in a Node process; its stderr lines and exit code. */
function run(body: string, input?: (stderr: string, stdin: NodeJS.WritableStream) => void): Promise<{ lines: string[]; code: number | null }> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", `import { log } from ${JSON.stringify(LOG)};\n${body}`], {
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    input?.(stderr, child.stdin);
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ lines: stderr.split("\n").filter(Boolean), code })));
}

const messages = (lines: string[]) => lines.map((line) => (line.startsWith("{") ? (JSON.parse(line) as { message: string }).message : line));

describe("§7.2: every line logged reaches stderr, in order, though lines are written in batches", () => {
  it("process.exit writes the lines held", async () => {
    const { lines, code } = await run("log.info('one'); log.warn('two'); process.exit(0);");
    expect(code).toBe(0);
    expect(messages(lines)).toEqual(["one", "two"]);
  });

  it("an uncaught exception writes the lines held, before Node's report of it", async () => {
    const { lines, code } = await run("log.info('before the throw'); setTimeout(() => { throw new Error('boom'); }, 1);");
    expect(code).toBe(1);
    expect(messages(lines)[0]).toBe("before the throw");
    expect(lines.join("\n")).toContain("Error: boom");
  });

  it("an error or fatal line is written as it is logged, with the lines before it", async () => {
    const { lines } = await run(
      "import { writeSync } from 'node:fs'; log.info('one'); log.error('two'); writeSync(2, 'after the error\\n'); log.fatal('three'); writeSync(2, 'after the fatal\\n'); process.exit(1);",
    );
    expect(messages(lines)).toEqual(["one", "two", "after the error", "three", "after the fatal"]);
  });

  it("a line below error is written while the process runs on, without an exit to push it out", async () => {
    // the process ends only once it has been told its line arrived: a line held for good never ends it
    const { lines, code } = await run("log.info('held briefly'); process.stdin.once('data', () => process.exit(0));", (stderr, stdin) => {
      if (stderr.includes("held briefly")) stdin.end("seen\n");
    });
    expect(code).toBe(0);
    expect(messages(lines)).toEqual(["held briefly"]);
  });
});
