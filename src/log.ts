import pino, { type Level, type Logger } from "pino";

/**
 * The process's structured logger: pino, one JSON line per event on stderr (`level` as a name,
 * `time` as ISO 8601, `message`). Credentials are never written: every field is scrubbed before it
 * is written, in one walk: values under secret-looking keys at any depth are dropped (which covers
 * where credentials are known to sit: a request's Authorization, Cookie and API key headers, an
 * OAuth token request's form, password/secret/token fields), and credentials inside text
 * (Authorization values, password=…, a URL's password) are redacted, in the fields and in the message.
 *
 * A line costs at most a bounded amount of work, whatever it is handed (CONTRACT §7.5: one request
 * must not stall the process through its log line): strings are cut to MAX_TEXT characters before
 * any pattern runs, every pattern's repetitions are bounded (so none can backtrack over a long run
 * of text), and the walk of a field stops at a depth, a number of keys and items, and a number of
 * values per line. Only plain data is walked: an object of a class (a request, a socket, a buffer)
 * is written as its class name, never entered.
 *
 * Every request writes a line at `info`, so a line must also cost little when there is nothing to
 * redact, which is nearly always: text that holds none of the characters every credential pattern
 * needs skips the patterns, and the walk is the only pass over the fields (no second redaction
 * pass by path in pino). Lines are written in batches (see flushLog for when a line may be lost).
 */

export type LogLevel = Level | "silent";
/** every level pino knows, and `silent` (LOG_LEVEL) */
export const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** Keys whose values are never written, at any depth of a logged field. */
const SECRET_KEY = /pass(word)?|secret|token|authorization|api[-_]?key|cookie|credential|^ha1|digest_?ha1|^key$/i;
/** Keys secret only in one place: an OAuth token request's authorization code, `req.body.code`. */
const SECRET_AT = new Map([["req.body", "code"]]);
/** The places SECRET_AT names are this deep, at most; below, a place is no longer tracked. */
const PLACE_DEPTH = 2;

/** Characters of one string that are written; the rest is replaced by a count. */
export const MAX_TEXT = 2048;
/** How far past MAX_TEXT credentials are redacted before the cut, so that none is cut in two and half-written. */
const REDACT_OVERLAP = 600;
const MAX_DEPTH = 4;
const MAX_ENTRIES = 50;
/** Values (strings, numbers, objects…) written for one line's fields, in all. */
const MAX_VALUES = 1000;

/**
 * Credentials that may hide inside free text (an error message quoting a header, a URL with a
 * password): Authorization values of the four schemes, `password=`/`token=`-like parameters, and
 * the password part of a URL's userinfo (its user name may be empty: `redis://:password@host`).
 * Every repetition is bounded and no two quantifiers can share the same characters, so each
 * pattern does bounded work per position of the text.
 */
const SECRET_TEXT: [RegExp, string][] = [
  [/\b(Basic|Bearer|ApiKey)\s{1,16}[^\s"',;]{1,512}/gi, "$1 [redacted]"],
  [/\bDigest\s[^\n]*/gi, "Digest [redacted]"],
  [
    /\b((?:password|passwd|secret|client_secret|token|access_token|refresh_token|api_key|key)\s{0,16}[=:]\s{0,16})("[^"]{0,512}"?|[^\s&"',;]{1,512})/gi,
    "$1[redacted]",
  ],
  [/\b([A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^:/@\s]{0,256}:)[^@\s/]{1,256}@/g, "$1[redacted]@"],
];

/**
 * What every match of a SECRET_TEXT pattern starts with (a scheme and its space, a parameter's name
 * and its `=` or `:`, a URL's `://`), in one pass: text without any holds nothing to redact, and
 * skips the four replacements.
 */
const MAY_HOLD_SECRET =
  /\b(?:basic|bearer|apikey|digest)\s|\b(?:password|passwd|secret|client_secret|token|access_token|refresh_token|api_key|key)\s{0,16}[=:]|:\/\//i;

/** `text` with every credential-shaped part redacted, cut to MAX_TEXT characters. */
export function redactText(text: string): string {
  const head = text.length > MAX_TEXT + REDACT_OVERLAP ? text.slice(0, MAX_TEXT + REDACT_OVERLAP) : text;
  const redacted = MAY_HOLD_SECRET.test(head) ? SECRET_TEXT.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), head) : head;
  return redacted.length > MAX_TEXT ? `${redacted.slice(0, MAX_TEXT)}…[${text.length - MAX_TEXT} more characters]` : redacted;
}

const isPlain = (value: object) => {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/** A copy of a line's fields fit to write: bounded, plain, and with no credential. */
function scrubFields(fields: Record<string, unknown>): Record<string, unknown> {
  let budget = MAX_VALUES;
  // `place`: the dotted keys down to the value while it is within PLACE_DEPTH, else ""
  const scrub = (value: unknown, depth: number, place: string): unknown => {
    if (--budget < 0) return "[…]";
    if (typeof value === "string") return redactText(value);
    if (typeof value === "bigint") return value.toString();
    if (value === null || typeof value !== "object") return value;
    if (depth > MAX_DEPTH) return "[…]";
    if (value instanceof Error) return scrubError(value, (item) => scrub(item, depth + 1, ""));
    if (value instanceof Date) return value.toISOString();
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ENTRIES).map((item) => scrub(item, depth + 1, ""));
      return value.length > MAX_ENTRIES ? [...items, `[${value.length - MAX_ENTRIES} more items]`] : items;
    }
    if (!isPlain(value)) return `[${value.constructor?.name ?? "object"}]`;
    const out: Record<string, unknown> = {};
    const secretHere = SECRET_AT.get(place);
    let entries = 0;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (++entries > MAX_ENTRIES) {
        out["[…]"] = "more keys";
        break;
      }
      const secret = key === secretHere || SECRET_KEY.test(key.length > 64 ? key.slice(0, 64) : key);
      const childPlace = depth < PLACE_DEPTH ? (place ? `${place}.${key}` : key) : "";
      out[redactText(key)] = secret ? "[redacted]" : scrub((value as Record<string, unknown>)[key], depth + 1, childPlace);
    }
    return out;
  };
  return scrub(fields, 0, "") as Record<string, unknown>;
}

function scrubError(error: Error, scrub: (value: unknown) => unknown): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return {
    name: redactText(String(error.name)),
    ...(code !== undefined ? { code: scrub(code) } : {}),
    message: redactText(String(error.message)),
    ...(error.stack ? { stack: redactText(error.stack) } : {}),
  };
}

/** Lines are written together once they reach this many characters (one write, one wake of the reader)… */
const BATCH_CHARS = 4096;
/** …or once the first of them has waited this long. */
const BATCH_MS = 100;

let batch: string[] = [];
let batchChars = 0;
let batchTimer: NodeJS.Timeout | undefined;

/**
 * Writes the lines held so far, at once. Lines wait at most BATCH_MS; an `error` or `fatal` line
 * is written with those before it as it is logged, and the process writes what it holds as it
 * exits (process.exit, the end of its work, an uncaught exception). What a kill that runs no code
 * (SIGKILL, an out-of-memory abort) finds held is lost: at most BATCH_MS of lines below `error`.
 */
export function flushLog(): void {
  if (batchTimer) clearTimeout(batchTimer);
  batchTimer = undefined;
  if (batch.length === 0) return;
  const text = batch.length === 1 ? batch[0]! : batch.join("");
  batch = [];
  batchChars = 0;
  process.stderr.write(text);
}

/**
 * The line sink: stderr (synchronous on a pipe or a file; looked up on each write, as a test may
 * capture it), in batches: on a pipe, each write wakes the process that reads it (a log shipper),
 * which costs the writer more than the write itself when a line goes out on its own.
 */
const batchingSink = {
  write(line: string) {
    if (batchChars + line.length > BATCH_CHARS) flushLog();
    batch.push(line);
    batchChars += line.length;
    batchTimer ??= setTimeout(flushLog, BATCH_MS).unref();
  },
};
process.on("exit", flushLog);

const logger: Logger = pino(
  {
    level: "info",
    messageKey: "message",
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      log: scrubFields,
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
  batchingSink,
);

export function setLogLevel(next: LogLevel): void {
  logger.level = next;
}

/** Whether a line of `level` would be written now (LOG_LEVEL). */
export function logsAt(level: Level): boolean {
  return logger.isLevelEnabled(level);
}

type Fields = Record<string, unknown>;

/** The call sites' shape: a message, then its fields. */
export const log = {
  fatal: (message: string, fields: Fields = {}) => {
    logger.fatal(fields, message);
    flushLog();
  },
  error: (message: string, fields: Fields = {}) => {
    logger.error(fields, message);
    flushLog();
  },
  warn: (message: string, fields: Fields = {}) => logger.warn(fields, message),
  info: (message: string, fields: Fields = {}) => logger.info(fields, message),
  debug: (message: string, fields: Fields = {}) => logger.debug(fields, message),
};
