import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { CloseCode, handleProtocols, makeServer, type ServerOptions, type WebSocket as GraphQLWsSocket } from "graphql-ws";
import type { WebSocket, WebSocketServer } from "ws";
import { log } from "../log.ts";
import { requestIdOf } from "../observability/http.ts";
import { ConnectionLog } from "../observability/websocket-log.ts";

/**
 * graphql-ws's protocol server (`makeServer`) on a `ws` server: the glue its `useServer` starter
 * provides, written here so that the process behaves the same under test and in production and
 * logs through the one logger. The starter decides by the environment's mode variable whether a
 * close reason may carry an error's message, and prints failures with console.error as raw
 * multi-line stacks; here a close reason never carries one, and a failure is one redacted JSON
 * log line. Each connection gets a request id (the upgrade's X-Request-Id when well-formed, sent
 * back on the 101 answer as on every HTTP answer) and its log (websocket-log.ts), whose close line
 * is written here.
 */

/** What a connection's context carries besides the protocol's own state (graphql-ws's `Extra`). */
export interface SocketExtra {
  readonly socket: WebSocket;
  /**
   * the upgrade request, until the connection is admitted: its headers and streams are a good part
   * of what an idle socket would hold for its whole life, so the admission lets it go (ws.ts)
   */
  request: IncomingMessage | undefined;
  /** the connection's lines: connect, operations, close */
  readonly log: ConnectionLog;
}

/**
 * A subscription's `next` frames written straight to its socket (subscription-events.ts sends its
 * events so): the payload's JSON text, serialised once for every subscriber of the same result,
 * with the subscription's id spliced in, byte for byte what graphql-ws's own emit writes
 * (`JSON.stringify({ id, type: "next", payload })`, no replacer). A socket whose earlier frames are
 * still unsent makes the subscription wait until this one is written, as graphql-ws's emit waits
 * on every send: a slow socket then takes the latest event of its feed (job.coalescing.ts) instead
 * of a backlog that grows in memory.
 */
export class NextFrames {
  private readonly head: string;

  constructor(
    private readonly socket: WebSocket,
    id: string,
  ) {
    this.head = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  }

  /** Writes the frame of `payload`; a promise when the socket's earlier frames are still unsent. */
  write(payload: string): Promise<void> | undefined {
    const socket = this.socket;
    if (socket.readyState !== socket.OPEN) return undefined;
    const frame = `${this.head}${payload}}`;
    if (socket.bufferedAmount === 0) {
      socket.send(frame);
      return undefined;
    }
    // a failed write closes the socket, which ends its subscriptions
    return new Promise<void>((resolve) => socket.send(frame, () => resolve()));
  }
}

/**
 * A `ws` socket as graphql-ws's protocol server sees it: one object per connection, its methods
 * the class's (not a closure each per socket).
 */
class ProtocolSocket implements GraphQLWsSocket {
  readonly protocol: string;

  constructor(
    private readonly socket: WebSocket,
    private readonly connection: ConnectionLog,
  ) {
    this.protocol = socket.protocol;
  }

  send(data: string): Promise<void> {
    const socket = this.socket;
    return new Promise<void>((resolve, reject) => {
      if (socket.readyState !== socket.OPEN) return resolve();
      socket.send(data, (error) => (error ? reject(error) : resolve()));
    });
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  onMessage(handle: (data: string) => Promise<void>): void {
    this.socket.on("message", (data) => void this.receive(handle, String(data)));
  }

  /**
   * Handles one message as text. A subscribe message's handling lasts as long as its subscription:
   * whatever this frame holds is held that long, so it holds the text, not the received Buffer.
   */
  private async receive(handle: (data: string) => Promise<void>, text: string): Promise<void> {
    try {
      await handle(text);
    } catch (error) {
      log.error("websocket message handling failed", { requestId: this.connection.requestId, error });
      this.socket.close(CloseCode.InternalServerError, "Internal server error");
    }
  }
}

/** How often an idle connection is pinged; one that does not answer within as long is terminated. */
const KEEP_ALIVE_MS = 12_000;

export function serveGraphQLOverWebSocket<P extends Record<string, unknown>, E extends Record<PropertyKey, unknown>>(
  options: ServerOptions<P, SocketExtra & Partial<E>>,
  wsServer: WebSocketServer,
  /** PERSISTED_OPERATIONS=only: the manifest's operation names, the only ones logged */
  trustedNames?: ReadonlySet<string>,
): { dispose(): Promise<void> } {
  const server = makeServer(options);
  const keepAlive = new KeepAlive();
  wsServer.options.handleProtocols = handleProtocols;
  const requestIds = new WeakMap<IncomingMessage, string>();
  wsServer.on("headers", (headers, request) => {
    const requestId = requestIdOf(request.headers["x-request-id"]);
    requestIds.set(request, requestId);
    headers.push(`X-Request-Id: ${requestId}`);
  });
  wsServer.on("error", (error: Error & { syscall?: string }) => {
    // the HTTP server's own listen failure, which ws passes on: the start-up's failure line says it
    if (error.syscall === "listen") return;
    log.error("websocket server failed", { error });
    for (const client of wsServer.clients) client.close(CloseCode.InternalServerError, "Internal server error");
  });
  wsServer.on("connection", (socket, request) => {
    const connection = new ConnectionLog(requestIds.get(request) ?? randomUUID(), trustedNames);
    // A socket error (a message over maxPayload, a protocol violation) is the client's: ws closes
    // that connection itself (1009, 1002), so it is logged quietly.
    socket.on("error", (error: Error & { code?: string }) =>
      log.info("websocket connection closed on a client error", { requestId: connection.requestId, code: error.code }),
    );
    keepAlive.add(socket);
    const closed = server.opened(new ProtocolSocket(socket, connection), { socket, request, log: connection } as SocketExtra & Partial<E>);
    socket.once("close", (code, reason) => {
      keepAlive.remove(socket);
      // first: the operations the close ends are counted on its line, not logged one by one
      connection.closed(code);
      void closed(code, String(reason));
    });
  });
  return {
    async dispose() {
      keepAlive.stop();
      for (const client of wsServer.clients) client.close(1001, "Going away");
      wsServer.removeAllListeners();
    },
  };
}

/** Sockets visited per KEEP_ALIVE_MS: one a second, so a process's pings are spread over the period. */
const KEEP_ALIVE_SLOTS = 12;

/**
 * Pings every socket every KEEP_ALIVE_MS and terminates one whose pong did not come back by its
 * next ping, from one timer for all sockets (ws's documented pattern) rather than an interval, a
 * pong timeout and a pong listener per ping and socket: a slot of the sockets each tick, so that
 * 10,000 sockets' pings do not go out in one burst between deliveries. Every socket has the same
 * pong listener, and nothing of its own here beside its place in a slot.
 */
class KeepAlive {
  private readonly slots = Array.from({ length: KEEP_ALIVE_SLOTS }, () => new Set<WebSocket>());
  private readonly unanswered = new WeakSet<WebSocket>();
  private slot = 0;
  private readonly timer = setInterval(() => this.tick(), KEEP_ALIVE_MS / KEEP_ALIVE_SLOTS).unref();
  /** every socket's pong listener: one function, the socket its `this` */
  private readonly answered: (this: WebSocket) => void;

  constructor() {
    const unanswered = this.unanswered;
    this.answered = function (this: WebSocket) {
      unanswered.delete(this);
    };
  }

  /** Keeps `socket` alive from now on, until remove(). */
  add(socket: WebSocket): void {
    // visited a whole period from now: the slot just visited
    this.slots[this.slot]!.add(socket);
    socket.on("pong", this.answered);
  }

  /** Stops keeping a closed socket alive. */
  remove(socket: WebSocket): void {
    for (const slot of this.slots) if (slot.delete(socket)) return;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    this.slot = (this.slot + 1) % KEEP_ALIVE_SLOTS;
    for (const socket of this.slots[this.slot]!) {
      if (socket.readyState !== socket.OPEN) continue;
      if (this.unanswered.has(socket)) {
        socket.terminate();
        continue;
      }
      this.unanswered.add(socket);
      socket.ping();
    }
  }
}
