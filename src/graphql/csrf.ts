import { MIMEType } from "node:util";
import type { Request, RequestHandler } from "express";
import { sendGraphQLError } from "./errors.ts";

/**
 * CSRF prevention on /graphql (CONTRACT §5): a page on another site may make a browser send a
 * "simple" request (a form, an `<img>`, a fetch without custom headers) with the Basic or Digest
 * credentials the browser has cached for this server, and no preflight asks this server first.
 * Such a request is refused unless it shows that a page could only have sent it after a CORS
 * preflight: a content type a form cannot send (`application/json`), a CSRF header
 * (`apollo-require-preflight` or `x-apollo-operation-name`, Apollo's names), or, for a GET
 * query, an `Authorization` a page set itself: a scheme the browser never attaches on its own
 * (`ApiKey`, `Bearer`). That last one lets urql's and other clients' GET queries through as they
 * are; it is kept to GETs, which only read, so a form's POST (an upload) still needs the header
 * whatever credentials it carries, as it always did. Apollo Server's own `csrfPrevention` is the
 * same rule without it; its refusal (status, code and message) is kept to the letter.
 */

/** The content types of a form or a fetch that needs no preflight (the Fetch standard's CORS-safelisted ones). */
const SIMPLE_CONTENT_TYPES = new Set(["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]);

/** Headers only a preflighted request can carry, as Apollo Server names them. */
const CSRF_HEADERS = ["x-apollo-operation-name", "apollo-require-preflight"];

/** The schemes of the credentials a browser keeps and sends by itself (its own sign-in prompt's). */
const BROWSER_SCHEMES = new Set(["basic", "digest", "negotiate", "ntlm"]);

const REFUSAL =
  "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header " +
  `(with a type that is not one of ${[...SIMPLE_CONTENT_TYPES].join(", ")}) or provide a non-empty value for one of the following headers: ` +
  `${CSRF_HEADERS.join(", ")}\n`;

/** Whether a page could send the body's type without a preflight; a type that does not parse needs one. */
function hasSimpleContentType(req: Request): boolean {
  const type = req.get("content-type");
  if (type === undefined) return true;
  try {
    return SIMPLE_CONTENT_TYPES.has(new MIMEType(type).essence);
  } catch {
    return false;
  }
}

/** An `Authorization` a page must have set itself (so preflighted): any scheme but those the browser manages. */
function hasPageSetAuthorization(req: Request): boolean {
  const scheme = /^\s*(\S+)/.exec(req.get("authorization") ?? "")?.[1];
  return scheme !== undefined && !BROWSER_SCHEMES.has(scheme.toLowerCase());
}

function mayHaveSkippedPreflight(req: Request): boolean {
  if (!hasSimpleContentType(req)) return false;
  if (CSRF_HEADERS.some((name) => Boolean(req.get(name)))) return false;
  return !(req.method === "GET" && hasPageSetAuthorization(req));
}

/** Refuses, 400 BAD_REQUEST, a request another site's page could have made a browser send. */
export function preventCrossSiteRequests(): RequestHandler {
  return (req, res, next) => (mayHaveSkippedPreflight(req) ? sendGraphQLError(res, 400, "BAD_REQUEST", REFUSAL) : next());
}
