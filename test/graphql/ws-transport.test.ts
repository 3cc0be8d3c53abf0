import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { buildSchema } from "graphql";
import { createClient } from "graphql-ws";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { serveGraphQLOverWebSocket } from "../../src/graphql/ws-transport.ts";
import { captureLog } from "../helpers/log.ts";

/**
 * Issue #24 (security review G8): graphql-ws's starter printed a failure while handling a message
 * as a raw multi-line stack on stderr (console.error), and chose the close reason by NODE_ENV. The
 * transport logs it as one JSON line through the logger and closes 4500 without the error's text,
 * whatever NODE_ENV says.
 */

let httpServer: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => httpServer?.close(resolve) ?? resolve(undefined));
  httpServer = undefined;
});

async function serverWhoseSubscribeThrows(message: string): Promise<string> {
  httpServer = createServer();
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql" });
  serveGraphQLOverWebSocket(
    {
      schema: buildSchema("type Query { ok: Boolean }"),
      onSubscribe() {
        throw new Error(message);
      },
    },
    wsServer,
  );
  await new Promise<void>((resolve) => httpServer!.listen(0, "127.0.0.1", resolve));
  return `ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}/graphql`;
}

describe("GraphQL over WebSocket: a failure while handling a message", () => {
  it("is one JSON log line (no console output), and the socket closes 4500 'Internal server error' without the error's text", async () => {
    const url = await serverWhoseSubscribeThrows("internal detail with password=hunter2");
    const consoleError = vi.spyOn(console, "error");
    let closeEvent: { code: number; reason: string } | undefined;
    const lines = await captureLog(async () => {
      const client = createClient({
        url,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: false,
        onNonLazyError: () => {},
        on: { closed: (event) => (closeEvent = event as typeof closeEvent) },
      });
      await new Promise<void>((resolve) =>
        client.subscribe({ query: "{ ok }" }, { next: () => {}, error: () => resolve(), complete: () => resolve() }),
      );
      await client.dispose();
    });
    expect(consoleError).not.toHaveBeenCalled();
    consoleError.mockRestore();
    expect(closeEvent).toMatchObject({ code: 4500, reason: "Internal server error" });
    const failures = lines.map((line) => JSON.parse(line)).filter((entry) => entry.message === "websocket message handling failed");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ level: "error", error: { name: "Error", message: "internal detail with password=[redacted]" } });
  });
});
