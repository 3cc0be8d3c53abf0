/**
 * The longest echo of a client's value in a message, in UTF-16 units: any ordinary value fits, and
 * a longer one (a whole body sent where a flag belongs) is cut and ends with "…", so that a refusal
 * never costs more than the request that caused it.
 */
export const MAX_ECHO_LENGTH = 1000;

/** An array or object being printed: its items, and how many of them are printed so far. */
interface Open {
  items: readonly unknown[] | Record<string, unknown>;
  keys: string[] | null;
  printed: number;
  close: "]" | "}";
}

const quoted = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

function scalar(value: unknown): string {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return quoted(value);
  return String(value);
}

/** A value cut at `limit` units, never inside a surrogate pair. */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const end = /[\ud800-\udbff]/.test(text[limit - 1] ?? "") ? limit - 1 : limit;
  return `${text.slice(0, end)}…`;
}

/**
 * Python's repr of a JSON value, written with an explicit stack: a value nested as deep as a body
 * may carry (JSON.parse has no depth limit) must not overflow the call stack. Printing stops once
 * the text passes `limit`, so a huge value costs no more than its first `limit` characters.
 */
function repr(value: unknown, limit: number): string {
  const open: Open[] = [];
  const enter = (v: unknown): string => {
    if (Array.isArray(v)) {
      open.push({ items: v, keys: null, printed: 0, close: "]" });
      return "[";
    }
    if (v !== null && typeof v === "object") {
      open.push({ items: v as Record<string, unknown>, keys: Object.keys(v), printed: 0, close: "}" });
      return "{";
    }
    return scalar(v);
  };
  let text = enter(value);
  while (open.length && text.length <= limit) {
    const top = open[open.length - 1]!;
    const count = top.keys ? top.keys.length : (top.items as readonly unknown[]).length;
    if (top.printed === count) {
      text += top.close;
      open.pop();
      continue;
    }
    if (top.printed > 0) text += ", ";
    const key = top.keys?.[top.printed];
    const item = key === undefined ? (top.items as readonly unknown[])[top.printed] : (top.items as Record<string, unknown>)[key];
    top.printed++;
    if (key !== undefined) text += `${quoted(key)}: `;
    text += enter(item);
  }
  return cut(text, limit);
}

/** How the original server (Python) prints a value in its messages, cut after `limit` characters. */
export function pythonStr(value: unknown, limit = MAX_ECHO_LENGTH): string {
  if (typeof value === "string") return cut(value, limit);
  return repr(value, limit);
}
