/**
 * A minimal structured logger (one JSON line per event on stderr). Never pass credentials: request
 * headers are not logged, and errors are reduced to name, message and stack.
 */
type Level = "silent" | "error" | "info";

let level: Level = "info";

export function setLogLevel(next: Level): void {
  level = next;
}

function describe(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

function write(at: "error" | "info", message: string, fields: Record<string, unknown>): void {
  if (level === "silent" || (level === "error" && at === "info")) return;
  const entry: Record<string, unknown> = { level: at, time: new Date().toISOString(), message };
  for (const [key, value] of Object.entries(fields)) entry[key] = describe(value);
  process.stderr.write(`${JSON.stringify(entry)}\n`);
}

export const log = {
  info: (message: string, fields: Record<string, unknown> = {}) => write("info", message, fields),
  error: (message: string, fields: Record<string, unknown> = {}) => write("error", message, fields),
};
