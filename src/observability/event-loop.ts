import { log } from "../log.ts";

/**
 * Makes a blocked event loop visible in the log: one `warn` line whenever the loop could not run a
 * timer for more than BLOCKED_MS, naming the requests that were being served meanwhile (those in
 * flight, and the last ones to end since the previous check), so that an operator can find what
 * blocked it. The lag itself is measured for /metrics by prom-client's defaults
 * (`nodejs_eventloop_lag_*`).
 */

export const BLOCKED_MS = 1000;
const CHECK_EVERY_MS = 250;
/** request ids named in one line, at most */
const NAMED = 10;

/** the requests being served, by a token of their own (a client may send one request id twice) */
const inFlight = new Map<symbol, string>();
/** the last NAMED requests to end since the previous check */
let ended: string[] = [];

/** Records a request as being served until the returned function is called. */
export function serving(requestId: string): () => void {
  const token = Symbol();
  inFlight.set(token, requestId);
  return () => {
    inFlight.delete(token);
    ended.push(requestId);
    if (ended.length > NAMED) ended.shift();
  };
}

let watchers = 0;
let stopTimer: (() => void) | undefined;

/** Starts the watch (one timer per process, however many servers start it); returns its stop. */
export function watchEventLoop(): () => void {
  if (watchers++ === 0) stopTimer = startTimer();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--watchers === 0) stopTimer?.();
  };
}

function startTimer(): () => void {
  let expected = performance.now() + CHECK_EVERY_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    const blockedMs = Math.round(now - expected);
    expected = now + CHECK_EVERY_MS;
    const endedMeanwhile = ended;
    ended = [];
    if (blockedMs <= BLOCKED_MS) return;
    const requestIds = [...inFlight.values(), ...endedMeanwhile].slice(0, NAMED);
    log.warn("event loop blocked", { blockedMs, ...(requestIds.length ? { requestIds } : {}) });
  }, CHECK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
