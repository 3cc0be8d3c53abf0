/**
 * Child process: the raw-socket baseline of the delivery part. A bare `ws` server that answers
 * `graphql-transport-ws`'s handshake (connection_ack, the subscriber's id noted) and, on `fanout`,
 * sends each subscriber the given `next` payload with its own id spliced in, `events` times, one
 * event every `intervalMs`: the bytes our server sends, through the same socket library, with
 * nothing else in between. Its CPU (process.cpuUsage) is the floor of a delivery.
 */
import { WebSocketServer, type WebSocket } from "ws";
import { serveCalls } from "./rpc.ts";

const ids = new Map<WebSocket, string>();
const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
server.on("connection", (socket) => {
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { type: string; id?: string };
    if (message.type === "connection_init") socket.send('{"type":"connection_ack"}');
    else if (message.type === "subscribe") ids.set(socket, message.id!);
  });
  socket.on("close", () => ids.delete(socket));
});
await new Promise((resolve) => server.once("listening", resolve));
const { port } = server.address() as { port: number };

serveCalls(
  { url: `ws://127.0.0.1:${port}/` },
  {
    subscribers: () => ids.size,
    async fanout(payload: string, events: number, intervalMs: number) {
      for (let e = 0; e < events; e++) {
        const started = performance.now();
        for (const [socket, id] of ids) socket.send(`{"id":${JSON.stringify(id)},"type":"next","payload":${payload}}`);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, intervalMs - (performance.now() - started))));
      }
    },
    cpuUsage: () => process.cpuUsage(),
  },
  async () => {
    for (const socket of ids.keys()) socket.terminate();
    server.close();
  },
);
