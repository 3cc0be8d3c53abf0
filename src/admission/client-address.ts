/**
 * The address a request comes from, as every face sees it (REST, GraphQL over HTTP, the WebSocket
 * upgrade request, the OAuth token endpoint): the one place to teach about a trusted proxy.
 * Today it is the socket's peer address; undefined once the socket is gone.
 */
export function clientAddress(req: { socket: { remoteAddress?: string } }): string | undefined {
  return req.socket.remoteAddress;
}
