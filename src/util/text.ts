/** With the u flag, \p{Cs} matches only a surrogate that is not half of a pair. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why PostgreSQL cannot hold a text: a NUL character, or an unpaired surrogate. */
export type UnstorableReason = "nul" | "surrogate";

/**
 * What keeps PostgreSQL from holding the text, if anything: text and jsonb refuse U+0000 ("nul",
 * reported first when the text has both), and an unpaired UTF-16 surrogate has no UTF-8 form
 * ("surrogate": PGlite would send invalid bytes, node-postgres a U+FFFD). Each feature words its
 * own message for each reason.
 */
export function unstorableReason(text: string): UnstorableReason | undefined {
  if (text.includes("\u0000")) return "nul";
  if (LONE_SURROGATE.test(text)) return "surrogate";
  return undefined;
}

/**
 * Whether PostgreSQL can hold the text (see unstorableReason). A name or id that is not storable
 * names nothing stored; a value to store that is not is refused.
 * (String.prototype.isWellFormed is ES2024, past this project's lib setting.)
 */
export function isStorableText(text: string): boolean {
  return unstorableReason(text) === undefined;
}

/** The text as PostgreSQL can receive it: each unpaired surrogate replaced by U+FFFD. */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(/\p{Cs}/gu, "\uFFFD") : text;
}
