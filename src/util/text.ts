/** With the u flag, \p{Cs} matches only a surrogate that is not half of a pair. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether PostgreSQL can hold the text: text and jsonb refuse U+0000, and an unpaired UTF-16
 * surrogate has no UTF-8 form (PGlite would send invalid bytes, node-postgres a U+FFFD). A name or
 * id that is not storable names nothing stored; a value to store that is not is refused.
 * (String.prototype.isWellFormed is ES2024, past this project's lib setting.)
 */
export function isStorableText(text: string): boolean {
  return !text.includes("\u0000") && !LONE_SURROGATE.test(text);
}

/** The text as PostgreSQL can receive it: each unpaired surrogate replaced by U+FFFD. */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(/\p{Cs}/gu, "\uFFFD") : text;
}
