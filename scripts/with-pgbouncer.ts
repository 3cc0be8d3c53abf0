/**
 * `npx tsx scripts/with-pgbouncer.ts UPSTREAM_URL COMMAND [ARG…]`: runs COMMAND with a throwaway
 * PgBouncer in transaction pooling mode in front of the PostgreSQL server at UPSTREAM_URL, its URL
 * in TEST_PGBOUNCER_URL, and stops the pooler when the command ends (exiting with its status).
 * The pooler is the tests' own (test/helpers/pgbouncer.ts), so `npm run test:pgbouncer` and the
 * tests that start one configure it in one place.
 */
import { spawn } from "node:child_process";
import { startPgBouncer } from "../test/helpers/pgbouncer.ts";

const [upstreamUrl, command, ...args] = process.argv.slice(2);
if (!upstreamUrl || !command) {
  console.error("usage: tsx scripts/with-pgbouncer.ts UPSTREAM_URL COMMAND [ARG…]");
  process.exit(2);
}
const bouncer = await startPgBouncer({ upstreamUrl });
const pooled = bouncer.url(new URL(upstreamUrl).pathname.slice(1) || "postgres");
console.error(`PgBouncer (transaction mode) in front of ${upstreamUrl} on port ${bouncer.port}`);
const child = spawn(command, args, { stdio: "inherit", env: { ...process.env, TEST_PGBOUNCER_URL: pooled } });
// an interrupted run reaches the command through the terminal's process group; the pooler is stopped after it
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
const status = await new Promise<number>((resolve) => child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));
await bouncer.stop();
process.exit(status);
