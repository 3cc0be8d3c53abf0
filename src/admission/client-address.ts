import type { IncomingMessage } from "node:http";
import type { Express, Request } from "express";

/**
 * The address a request comes from, as every face sees it (REST, GraphQL over HTTP, the WebSocket
 * upgrade request, the OAuth token endpoint): express's `req.ip`, which follows the app's
 * `trust proxy` (TRUST_PROXY: the client named by X-Forwarded-For behind one trusted proxy, else
 * the peer). Undefined once the socket is gone.
 */
export function clientAddress(req: { ip?: string; socket: { remoteAddress?: string } }): string | undefined {
  return req.ip ?? req.socket.remoteAddress;
}

/**
 * The address of a request that never passes through express (a WebSocket upgrade), read through
 * the same app's request getters, so that TRUST_PROXY means the same for it as for HTTP: behind a proxy, every WebSocket login would otherwise share the
 * proxy's address, and its failed-login budget.
 */
export function upgradeAddress(app: Express, req: IncomingMessage): string | undefined {
  const view: Request = Object.create(app.request, {
    headers: { value: req.headers },
    socket: { value: req.socket },
    connection: { value: req.socket },
  });
  return clientAddress(view);
}
