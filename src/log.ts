import pino, { type Level, type Logger } from "pino";

/**
 * The process's structured logger: pino, one JSON line per event on stderr (`level` as a name,
 * `time` as ISO 8601, `message`). Credentials are never written. pino's redaction removes them
 * where they are known to sit (request headers, OAuth form bodies, password/secret/token fields);
 * as a second line of defence every field is scrubbed before it is written: values under
 * secret-looking keys at any depth are dropped and credentials inside text (Authorization values,
 * password=…, a URL's password) are redacted.
 */

export type LogLevel = Level | "silent";
/** every level pino knows, and `silent` (LOG_LEVEL) */
export const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** Keys whose values are never written, at any depth of a logged field. */
const SECRET_KEY = /pass(word)?|secret|token|authorization|api_?key|cookie|credential|^ha1|digest_?ha1|^key$/i;

/**
 * Credentials that may hide inside free text (an error message quoting a header, a URL with a
 * password): Authorization values of the four schemes, `password=`/`token=`-like parameters, and
 * the password part of a URL's userinfo.
 */
const SECRET_TEXT: [RegExp, string][] = [
  [/\b(Basic|Bearer|ApiKey)\s+[^\s"',;]+/gi, "$1 [redacted]"],
  [/\bDigest\s+[^\n]*/gi, "Digest [redacted]"],
  [/\b((?:password|passwd|secret|client_secret|token|access_token|refresh_token|api_key|key)\s*[=:]\s*)("[^"]*"|[^\s&"',;]+)/gi, "$1[redacted]"],
  [/(\w+:\/\/[^:/@\s]+:)[^@\s/]+@/g, "$1[redacted]@"],
];

export function redactText(text: string): string {
  return SECRET_TEXT.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > 4) return "[…]";
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return {
      name: value.name,
      ...(code !== undefined ? { code } : {}),
      message: redactText(value.message),
      stack: value.stack && redactText(value.stack),
    };
  }
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => scrub(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? "[redacted]" : scrub(item, depth + 1);
  return out;
}

/**
 * Where credentials are known to sit in what the request logger and the call sites pass: the
 * headers of a request, an OAuth token request's form, and secret fields one level down.
 */
const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['proxy-authorization']",
  "req.headers['x-api-key']",
  "res.headers['set-cookie']",
  "req.body.password",
  "req.body.client_secret",
  "req.body.refresh_token",
  "req.body.code",
  "*.password",
  "*.client_secret",
  "*.refresh_token",
  "*.access_token",
  "*.apiKey",
  "*.api_key",
];

/** The line sink: stderr, looked up on each write (a test may capture it). */
const stderrSink = { write: (line: string) => process.stderr.write(line) };

export const logger: Logger = pino(
  {
    level: "info",
    messageKey: "message",
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    formatters: {
      level: (label) => ({ level: label }),
      log: (fields) => scrub(fields) as Record<string, unknown>,
    },
    hooks: {
      // the message too may quote a credential (an error's text)
      logMethod(args, method) {
        const [first, second, ...rest] = args as unknown[];
        if (typeof first === "string") return method.apply(this, [redactText(first), ...(args.slice(1) as [])]);
        if (typeof second === "string") return method.apply(this, [first as object, redactText(second), ...(rest as [])]);
        return method.apply(this, args);
      },
    },
  },
  stderrSink,
);

export function setLogLevel(next: LogLevel): void {
  logger.level = next;
}

type Fields = Record<string, unknown>;

/** The call sites' shape: a message, then its fields. */
export const log = {
  error: (message: string, fields: Fields = {}) => logger.error(fields, message),
  warn: (message: string, fields: Fields = {}) => logger.warn(fields, message),
  info: (message: string, fields: Fields = {}) => logger.info(fields, message),
  debug: (message: string, fields: Fields = {}) => logger.debug(fields, message),
};
