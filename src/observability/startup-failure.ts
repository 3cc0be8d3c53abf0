import { ConfigError } from "../config.ts";
import { isDatabaseUnavailable } from "../db/unavailable.ts";
import { log, logsAt, setLogLevel } from "../log.ts";

/**
 * A start-up that fails is one JSON line like every other (CONTRACT §7.2), level `fatal`, message
 * `failed to start`, naming what to fix: the `setting` (a malformed configuration variable, a port
 * already taken) or the `dependency` (the database: unreachable, refusing the login, or its data
 * directory unusable), with the error's name, code and message. Anything else is written whole,
 * stack included: it is a bug.
 */

/** The dependency each failed step needed (see `needs`). */
const dependencyOf = new WeakMap<object, string>();

/** Runs a start-up step that needs `dependency` (the database): if it fails, the failure names it. */
export async function needs<T>(dependency: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (typeof error === "object" && error !== null && !dependencyOf.has(error)) dependencyOf.set(error, dependency);
    throw error;
  }
}

/** Config errors open with the variable they are about (`PORT must be an integer …`). */
const LEADING_SETTING = /^[A-Z][A-Z0-9_]*(?=[\s=:]|$)/;

/** The error in brief: a failure that names its cause needs no stack, and Prisma's text spans lines. */
function brief(error: Error & { code?: unknown }): Record<string, unknown> {
  return {
    name: error.name,
    ...(error.code !== undefined ? { code: error.code } : {}),
    message: error.message.replace(/\s+/g, " ").trim(),
  };
}

/** What a start-up failure says it was. */
function failureFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  if (error instanceof ConfigError) {
    const setting = LEADING_SETTING.exec(error.message)?.[0];
    return { ...(setting ? { setting } : {}), error: brief(error) };
  }
  const { syscall, code, address, port } = error as NodeJS.ErrnoException & { address?: string; port?: number };
  // the address is not available on this machine: HOST; taken or not allowed: PORT
  if (syscall === "listen") return { setting: code === "EADDRNOTAVAIL" ? "HOST" : "PORT", address, port, error: brief(error) };
  const dependency = dependencyOf.get(error) ?? (isDatabaseUnavailable(error) ? "database" : undefined);
  if (dependency) return { dependency, error: brief(error) };
  return { error };
}

/** Writes the start-up failure's line, whatever LOG_LEVEL says: the process exits next, and must say why. */
export function logStartupFailure(error: unknown): void {
  if (!logsAt("fatal")) setLogLevel("fatal");
  log.fatal("failed to start", failureFields(error));
}
