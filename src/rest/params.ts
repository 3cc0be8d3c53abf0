import type { Request } from "express";
import { badInput } from "../errors.ts";

/** The query parameters in the order sent, repeated keys kept (filters OR repeated values). */
export function queryParams(req: Request): [string, string][] {
  const url = req.originalUrl;
  const q = url.indexOf("?");
  return q < 0 ? [] : [...new URLSearchParams(url.slice(q + 1))];
}

/** host, host:port, an IPv4 address or a bracketed IPv6 one: nothing that could end the authority */
const AUTHORITY = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The origin this request reached, as the client sees it: the protocol of the socket and the Host
 * header, or, when `trust proxy` is on (TRUST_PROXY), what X-Forwarded-Proto and X-Forwarded-Host
 * say (Express reads them). A host that is no host (a path, a user part) is refused rather than
 * written into a link.
 */
function requestOrigin(req: Request): string {
  const protocol = req.protocol.toLowerCase() === "https" ? "https" : "http";
  const host = req.host ?? "";
  if (!AUTHORITY.test(host)) throw badInput("Invalid Host header");
  return `${protocol}://${host}`;
}

/**
 * The absolute URL of this request's path, without query: `next` links are built on it. A
 * configured PUBLIC_URL wins over anything the request says; its path prefix comes first (a proxy
 * that serves the API under /prefix strips it before the request arrives).
 */
export function absolutePath(req: Request, publicUrl: string | undefined): string {
  const path = req.originalUrl.split("?")[0];
  return `${publicUrl ?? requestOrigin(req)}${path}`;
}
