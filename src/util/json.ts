import { badInput } from "../errors.ts";

/**
 * A request body that was sent but is not JSON. The REST body parser leaves this marker instead of
 * failing at once, and the adapter calls requireJson once it holds the domain scope, so that
 * authentication and permission are answered first (401, 403/404) and only then the payload
 * (400 `Payload must be valid JSON`).
 */
export const UNPARSABLE_JSON: unique symbol = Symbol("unparsable JSON body");

export function requireJson(body: unknown): unknown {
  if (body === UNPARSABLE_JSON || body === undefined) throw badInput("Payload must be valid JSON");
  return body;
}

/** A JSON object: not null, not a list. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
