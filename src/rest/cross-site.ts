import type { Request, RequestHandler } from "express";
import { forbidden } from "../errors.ts";

export const CROSS_SITE_REFUSED = "Cross-site request refused: browsers may send writes only from this server's own origin.";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export interface CrossSiteOptions {
  /** PUBLIC_URL: its host is this server's too */
  publicUrl: string | undefined;
  /** origins allowed to write from a browser (exact `scheme://host[:port]`), e.g. a CORS allow-list */
  trustedOrigins?: readonly string[];
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host || undefined;
  } catch {
    return undefined; // "null" (sandboxed frames, file:) and garbage name no host
  }
}

/** The hosts this server answers as: the request's (X-Forwarded-Host under TRUST_PROXY) and PUBLIC_URL's. */
function ownHosts(req: Request, publicUrl: string | undefined): string[] {
  const hosts = [req.host, req.get("host")];
  if (publicUrl) hosts.push(hostOf(publicUrl));
  return hosts.filter((h): h is string => Boolean(h)).map((h) => h.toLowerCase());
}

/**
 * Whether a write was sent by a browser on behalf of another site (CSRF: a form or a simple fetch
 * that rides on the Basic/Digest credentials the browser has cached for this server). Browsers
 * say where a request comes from: `Sec-Fetch-Site` (current browsers) decides when present;
 * otherwise an `Origin` (sent on every cross-origin POST/PUT/PATCH/DELETE) whose host is not this
 * server's. A request with neither is not from a browser page (the legacy API clients), and a
 * trusted origin may write. The rule is the one of Go's net/http CrossOriginProtection; the
 * content type plays no part, so a cross-site form is refused whatever its encoding.
 */
function isCrossSiteWrite(req: Request, { publicUrl, trustedOrigins = [] }: CrossSiteOptions): boolean {
  if (SAFE_METHODS.has(req.method)) return false;
  const origin = req.get("origin");
  if (origin !== undefined && trustedOrigins.includes(origin)) return false;
  const site = req.get("sec-fetch-site");
  if (site) return site !== "same-origin" && site !== "none";
  if (origin === undefined) return false;
  const host = hostOf(origin)?.toLowerCase();
  return host === undefined || !ownHosts(req, publicUrl).includes(host);
}

/** Refuses a cross-site write with 403 before anything runs (credentials are not even checked). */
export function refuseCrossSiteWrites(options: CrossSiteOptions): RequestHandler {
  return (req, _res, next) => next(isCrossSiteWrite(req, options) ? forbidden(CROSS_SITE_REFUSED) : undefined);
}
