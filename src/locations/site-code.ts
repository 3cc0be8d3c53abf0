/** Site codes (CONTRACT §3): lowercased, `^[-_\w]+$`, unique in the domain; generated from the name. */
import { createRequire } from "node:module";

type Transliteration = typeof import("transliteration");
let transliteration: Transliteration | undefined;

/** Loaded on the first generated code: its tables are megabytes of heap that most processes never use. */
function transliterate(text: string): string {
  transliteration ??= createRequire(import.meta.url)("transliteration") as Transliteration;
  return transliteration.transliterate(text);
}

const VALID = /^[-_\p{L}\p{N}_]+$/u;

export function isValidSiteCode(code: string): boolean {
  return VALID.test(code);
}

/** Longest generated base: with a collision suffix it stays within 255 characters. */
const MAX_BASE_LENGTH = 240;

/**
 * The base of a generated site code: the name transliterated to ASCII and lowercased, each run of
 * non-letters turned into `_`, `_` stripped from the ends, and the name's trailing digits appended.
 * An empty result is `no_name`.
 */
export function siteCodeBase(name: string): string {
  const ascii = transliterate(name).toLowerCase();
  const letters = ascii.replace(/[^a-z]+/g, "_").replace(/^_+|_+$/g, "");
  const digits = (/(\d+)\s*$/.exec(name)?.[1] ?? "").slice(-MAX_BASE_LENGTH);
  // Transliteration can make a name up to 12 times longer (北 → "bei_"): cut the letters so that
  // the code stays a short index key, digits kept.
  const cut = letters.slice(0, MAX_BASE_LENGTH - digits.length).replace(/_+$/, "");
  return cut + digits || "no_name";
}

/** The base, or the base with the first of 1, 2, … that is not taken. */
export function uniqueSiteCode(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 1; ; n++) if (!taken.has(`${base}${n}`)) return `${base}${n}`;
}
