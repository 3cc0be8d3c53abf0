/**
 * Raw HTTP for the hostile-input tests: requests that say exactly what they send (paths and bodies
 * byte for byte, no client-side URL normalisation). Each answer is still checked against the
 * OpenAPI document, as app.http()'s are.
 */
import http from "node:http";
import type { Config } from "../../src/config.ts";
import { documentValidator, rawRequestSent } from "./openapi.ts";

/** Build overrides for these tests: they send hundreds of requests a second as one user. */
export const NO_RATE_LIMIT: Partial<Config> = { rateLimitRequests: 0 };

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** the body parsed as JSON, or undefined when it is not JSON */
  json: unknown;
}

/**
 * No keep-alive: the server closes a connection after refusing a body it did not read (a broken
 * multipart, a 413), and a reused socket would then fail with ECONNRESET on the next request.
 */
const agent = new http.Agent({ keepAlive: false, maxSockets: 4 });

/**
 * One request to `base` (an `http://host:port` of a listening server), the path sent exactly as
 * given: Node only refuses characters outside \x21-\xff, so callers percent-encode those.
 */
export function rawRequest(
  base: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, "utf8");
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: options.method,
        path: sendable(options.path),
        headers: { ...(body ? { "Content-Length": String(body.length) } : {}), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          const answer = { status: res.statusCode ?? 0, headers: res.headers, text, json };
          // as every REST answer of the suite: as the OpenAPI document says (test/helpers/openapi.ts)
          try {
            documentValidator().check(options.method, options.path, answer, rawRequestSent(options.headers, options.body));
          } catch (error) {
            return reject(error);
          }
          resolve(answer);
        });
      },
    );
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}

/** Percent-encodes what Node would refuse to send (spaces, controls, non-ASCII); `%` garbage stays. */
function sendable(path: string): string {
  return path.replace(/[^\x21-\x7e]/gu, (ch) => (/[\ud800-\udfff]/.test(ch) ? "%ED%A0%80" : encodeURIComponent(ch)));
}
