/**
 * Child process: `count` subscribers for the delivery part, each on a WebSocket of its own that
 * speaks `graphql-transport-ws` with the bare `ws` client (connection_init with the credential,
 * one subscribe), so that the same client serves our server and the raw-socket baseline and costs
 * them the same. It only counts `next` frames (no parse: its own CPU stays low) and keeps the
 * first one's text, which the baseline then sends. With `timed`, it also notes each `next`
 * frame's arrival on the machine's wall clock by the progress it carries (`"current":N`, found
 * without parsing), for the part's latency mode.
 *   argv: wsUrl authorization count query variablesJson [timed]
 */
import WebSocket from "ws";
import { serveCalls } from "./rpc.ts";

const [url, authorization, countArg, query, variables, timed] = process.argv.slice(2);
const count = Number(countArg);
const sockets: WebSocket[] = [];
let received = 0;
let failures = 0;
let sample: string | undefined;
const NEXT = '"type":"next"';
const CURRENT = '"current":';
/** arrival times (ms, wall clock) by the progress the frame carried */
const arrivals = new Map<number, number[]>();

function noteArrival(text: string): void {
  const at = performance.timeOrigin + performance.now();
  const i = text.indexOf(CURRENT);
  if (i < 0) return;
  const current = Number.parseInt(text.slice(i + CURRENT.length, i + CURRENT.length + 12), 10);
  let times = arrivals.get(current);
  if (!times) arrivals.set(current, (times = []));
  times.push(at);
}

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
        if (timed) noteArrival(text);
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
      arrivals.clear();
    },
    /** with `timed`: the arrivals since the last reset, by progress */
    arrivals: () => [...arrivals].map(([current, times]) => [current, Float64Array.from(times)] as const),
  },
  async () => {
    for (const socket of sockets) socket.terminate();
  },
);
