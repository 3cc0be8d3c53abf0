/**
 * Child process: `count` subscribers for the delivery part, each on a WebSocket of its own that
 * speaks `graphql-transport-ws` with the bare `ws` client (connection_init with the credential,
 * one subscribe), so that the same client serves our server and the raw-socket baseline and costs
 * them the same. It only counts `next` frames (no parse: its own CPU stays low) and keeps the
 * first one's text, which the baseline then sends.
 *   argv: wsUrl authorization count query variablesJson
 */
import WebSocket from "ws";
import { serveCalls } from "./rpc.ts";

const [url, authorization, countArg, query, variables] = process.argv.slice(2);
const count = Number(countArg);
const sockets: WebSocket[] = [];
let received = 0;
let failures = 0;
let sample: string | undefined;
const NEXT = '"type":"next"';

/** One subscriber; resolves once its subscription is sent (or its socket failed). */
function subscriber(i: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, "graphql-transport-ws", { perMessageDeflate: false });
    sockets.push(socket);
    socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: authorization } })));
    socket.on("message", (data) => {
      const text = String(data);
      if (text.includes(NEXT)) {
        received += 1;
        sample ??= text;
        return;
      }
      if (text.includes('"type":"connection_ack"')) {
        socket.send(JSON.stringify({ id: `s${i}`, type: "subscribe", payload: { query, variables: JSON.parse(variables) } }));
        resolve();
      } else if (text.includes('"type":"ping"')) socket.send('{"type":"pong"}');
    });
    let failed = false;
    const fail = () => {
      if (failed) return;
      failed = true;
      failures += 1;
      resolve();
    };
    socket.on("error", fail);
    socket.on("close", fail);
  });
}

// in batches, each once the last is acknowledged: a loaded server resets connections over its backlog
const BATCH = 50;
for (let i = 0; i < count; i += BATCH) {
  await Promise.all(Array.from({ length: Math.min(BATCH, count - i) }, (_, j) => subscriber(i + j)));
}

serveCalls(
  { subscribers: count },
  {
    /** `next` frames received since the last reset, and sockets failed */
    counts: () => ({ received, failures, sample }),
    reset() {
      received = 0;
    },
  },
  async () => {
    for (const socket of sockets) socket.terminate();
  },
);
