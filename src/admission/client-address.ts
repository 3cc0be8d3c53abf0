/**
 * The address a request comes from, as every face sees it (REST, GraphQL over HTTP, the WebSocket
 * upgrade request, the OAuth token endpoint). An express request knows it as `req.ip`, which
 * follows TRUST_PROXY (the client named by X-Forwarded-For behind a trusted proxy, else the peer);
 * a bare upgrade request has only its socket's peer address. Undefined once the socket is gone.
 */
export function clientAddress(req: { ip?: string; socket: { remoteAddress?: string } }): string | undefined {
  return req.ip ?? req.socket.remoteAddress;
}
