import { randomBytes, randomUUID } from "node:crypto";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that are not UUIDs cannot name a UUID row: callers treat them as a miss, not a query. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function newUuid(): string {
  return randomUUID();
}

export function newHexId(bytes = 16): string {
  return randomBytes(bytes).toString("hex");
}

/** A random URL-safe token: API keys, OAuth client ids and secrets, server secrets. */
export function newToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
