import type { Server, ServerResponse } from "node:http";
import { log } from "./log.ts";

/**
 * CONTRACT §7.1 Process lifecycle: how a signalled server stops.
 */

/** A signal repeated within this time is the first one forwarded (npm, a shell, a process group). */
const SAME_SIGNAL_MS = 1000;
/** What the rest of the stop (jobs back to the queue, the database) may take after the grace. */
const AFTER_GRACE_MS = 3000;
/** setTimeout's longest delay (about 24.8 days); a longer one would fire at once. */
const longest = (ms: number) => Math.min(ms, 2 ** 31 - 1);

/** when the first shutdown signal came, if one did */
let firstAt: number | undefined;

/** True from the first shutdown signal on: /readyz then answers 503 (CONTRACT §7.2). */
export function isStopping(): boolean {
  return firstAt !== undefined;
}

/**
 * The first SIGTERM or SIGINT runs `stop` and exits 0 when it is done (1 if it failed). Whatever
 * still runs `graceMs` + 3 s later is cut short and the process exits 0. A signal repeated more
 * than a second after the first exits at once; sooner, it is the same signal delivered twice (to
 * the process group and forwarded by npm) and changes nothing.
 */
export function stopOnSignals(stop: () => Promise<void>, graceMs: number): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstAt === undefined) {
      firstAt = Date.now();
      log.info("stopping", { signal, graceSeconds: graceMs / 1000 });
      setTimeout(
        () => {
          log.error("stop did not finish in time; exiting");
          process.exit(0);
        },
        longest(graceMs + AFTER_GRACE_MS),
      );
      stop().then(
        () => {
          // the line an operator looks for after "stopping": the stop finished, and how long it took
          log.info("stopped", { signal, durationMs: Date.now() - (firstAt ?? Date.now()) });
          process.exit(0);
        },
        (error: unknown) => {
          log.error("unclean stop", { error });
          process.exit(1);
        },
      );
    } else if (Date.now() - firstAt > SAME_SIGNAL_MS) {
      log.info("stopping now, on a second signal", { signal });
      process.exit(0);
    }
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/**
 * Keeps count of the requests in progress on `server` and returns its drain: stop accepting
 * connections, close idle keep-alive ones, let the requests in progress finish (each then closes
 * its connection), and after `graceMs` cut those still running. Resolves true when all finished.
 * Upgraded connections (WebSockets) carry no request and are left to their own close.
 */
export function requestDrain(server: Server): (graceMs: number) => Promise<boolean> {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  let drained = () => {};
  server.on("request", (req, res) => {
    inFlight.add(res);
    if (draining) res.setHeader("Connection", "close");
    res.once("close", () => {
      inFlight.delete(res);
      if (!draining) return;
      if (![...inFlight].some((other) => other.req.socket === req.socket)) req.socket.end();
      if (inFlight.size === 0) drained();
    });
  });
  return (graceMs) => {
    draining = true;
    server.close();
    server.closeIdleConnections();
    for (const res of inFlight) if (!res.headersSent) res.setHeader("Connection", "close");
    if (inFlight.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const cut = setTimeout(() => {
        log.error("requests cut at the end of the shutdown grace", { requests: inFlight.size });
        for (const res of inFlight) res.socket?.destroy();
        resolve(false);
      }, longest(graceMs));
      drained = () => {
        clearTimeout(cut);
        resolve(true);
      };
    });
  };
}
