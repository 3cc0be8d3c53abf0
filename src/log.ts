/**
 * A minimal structured logger (one JSON line per event on stderr). Never pass credentials: request
 * headers are not logged, and errors are reduced to name, code, message and stack. As a second
 * line of defence every field is scrubbed: values under secret-looking keys are dropped and
 * credentials inside text (Authorization values, password=…, a URL's password) are redacted.
 */
type Level = "silent" | "error" | "info";

let level: Level = "info";

export function setLogLevel(next: Level): void {
  level = next;
}

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

function describe(value: unknown, depth = 0): unknown {
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
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => describe(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? "[redacted]" : describe(item, depth + 1);
  return out;
}

function write(at: "error" | "info", message: string, fields: Record<string, unknown>): void {
  if (level === "silent" || (level === "error" && at === "info")) return;
  const entry: Record<string, unknown> = { level: at, time: new Date().toISOString(), message: redactText(message) };
  for (const [key, value] of Object.entries(fields)) entry[key] = SECRET_KEY.test(key) ? "[redacted]" : describe(value);
  process.stderr.write(`${JSON.stringify(entry)}\n`);
}

export const log = {
  info: (message: string, fields: Record<string, unknown> = {}) => write("info", message, fields),
  error: (message: string, fields: Record<string, unknown> = {}) => write("error", message, fields),
};
