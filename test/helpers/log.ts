/**
 * The in-process log, as tests see it: the server code logs at `info`, as in production, into a
 * buffer instead of the terminal, so that a slow or throwing log path fails the tests that go
 * through it, and a test can read what was written. Lines that are not the logger's JSON (vitest's
 * own, a library's console) still reach stderr, and TEST_LOG=1 sends the logger's there too.
 * The logger holds lines briefly to write them in batches: captureLog writes what it holds before
 * it reads.
 */
import { flushLog } from "../../src/log.ts";

/** the last lines kept: enough for any one test, bounded over a whole file */
const KEPT = 5000;
let lines: string[] = [];
/** lines written since the file began, kept or not */
let written = 0;

/** Sends the logger's lines (written on process.stderr) into the buffer; once per test file. */
export function captureLogLines(echo = false): void {
  const write = process.stderr.write.bind(process.stderr) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    if (!text.startsWith('{"level":')) return write(chunk, ...rest);
    const added = text.split("\n").filter(Boolean);
    lines.push(...added);
    written += added.length;
    if (lines.length > KEPT) lines = lines.slice(-KEPT);
    return echo ? write(chunk, ...rest) : true;
  }) as typeof process.stderr.write;
}

/**
 * Runs `fn` and returns the log lines written meanwhile; with `until`, also those written after it
 * until `until` holds for them (a line the server writes once a socket's close reaches it), failing
 * after `timeoutMs`.
 */
export async function captureLog(fn: () => Promise<void> | void, until?: (lines: string[]) => boolean, timeoutMs = 5000): Promise<string[]> {
  flushLog();
  const from = written;
  const since = () => {
    flushLog();
    const count = written - from;
    if (count > lines.length) throw new Error(`${count} log lines were written, more than the ${KEPT} kept`);
    return count ? lines.slice(-count) : [];
  };
  await fn();
  const deadline = Date.now() + timeoutMs;
  while (until && !until(since())) {
    if (Date.now() > deadline) throw new Error(`the log lines awaited were not written within ${timeoutMs} ms:\n${since().join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return since();
}
