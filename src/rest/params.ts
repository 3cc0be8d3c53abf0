import type { Request } from "express";

/** The query parameters in the order sent, repeated keys kept (filters OR repeated values). */
export function queryParams(req: Request): [string, string][] {
  const url = req.originalUrl;
  const q = url.indexOf("?");
  return q < 0 ? [] : [...new URLSearchParams(url.slice(q + 1))];
}

/** The absolute URL of this request's path, without query: `next` links are built on it. */
export function absolutePath(req: Request): string {
  const path = req.originalUrl.split("?")[0];
  return `${req.protocol}://${req.get("host")}${path}`;
}
