/**
 * Child process: `count` GraphQL subscribers, each on its own WebSocket (graphql-ws client,
 * credentials in connection_init), all subscribed to one job's multimediaProgress. For every
 * progress value it reports when the first and the last of its subscribers received it (wall
 * clock), once all have.
 *   argv: wsUrl authorization domain processingId count
 */
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { sendEvent, serveCalls } from "./rpc.ts";
import { wallClock } from "./stats.ts";

const [url, authorization, domain, processingId, countArg] = process.argv.slice(2);
const count = Number(countArg);
const query = `subscription($domain: String!, $id: ID!) {
  multimediaProgress(domain: $domain, processingId: $id) { complete failed progress { current total percent } }
}`;

const arrivals = new Map<number, { n: number; first: number; last: number }>();
const clients: Client[] = [];
let subscribed = 0;
let resolveAll: () => void;
const allSubscribed = new Promise<void>((resolve) => (resolveAll = resolve));

function subscriber(): void {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: authorization },
    lazy: false,
    retryAttempts: 0,
  });
  clients.push(client);
  let initial = true;
  client.subscribe<{ multimediaProgress: { progress: { current: number } } }>(
    { query, variables: { domain, id: processingId } },
    {
      next(result) {
        const at = wallClock();
        if (result.errors?.length || !result.data) {
          console.error("subscription error", JSON.stringify(result.errors));
          process.exit(1);
        }
        if (initial) {
          initial = false;
          if (++subscribed === count) resolveAll();
          return;
        }
        const current = result.data.multimediaProgress.progress.current;
        const entry = arrivals.get(current) ?? { n: 0, first: at, last: at };
        entry.n += 1;
        entry.first = Math.min(entry.first, at);
        entry.last = Math.max(entry.last, at);
        arrivals.set(current, entry);
        if (entry.n === count) {
          sendEvent({ current, first: entry.first, last: entry.last });
          arrivals.delete(current);
        }
      },
      error(error) {
        console.error("subscriber failed", error);
        process.exit(1);
      },
      complete() {},
    },
  );
}

// connect in batches, so that the server is not asked for hundreds of handshakes at once
for (let i = 0; i < count; i++) {
  subscriber();
  if (i % 50 === 49) await new Promise((resolve) => setTimeout(resolve, 20));
}
await allSubscribed;

serveCalls({ subscribers: count }, {}, async () => {
  await Promise.all(clients.map((c) => c.dispose()));
});
