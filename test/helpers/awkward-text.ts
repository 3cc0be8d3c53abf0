/**
 * Text that a JSON writer other than JavaScript's (PostgreSQL's to_json, json_build_array) must
 * escape exactly as JSON.stringify does: quotes, backslashes, control characters, line and
 * paragraph separators, characters beyond the BMP, long values. The case pages built as JSON in
 * PostgreSQL are compared with the record path over these (test/cases/case-json, case-slice).
 */
export const AWKWARD_VALUES = [
  "",
  'say "hi"',
  "back\\slash \\u0041 \\n",
  "line\nbreak\ttab\rreturn\bback\fform",
  "\u0001\u0002\u001f\u007f controls",
  "é ü ß Ω 中文 日本語 한국어",
  "emoji 😀 👩‍👩‍👧 flags 🇫🇷",
  "\u2028 line and paragraph \u2029 separators",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the characters themselves, for the JSON writers
  "</script><!-- & ' ` ${x}",
  "x".repeat(3000),
  "\uFEFF bom \u00A0 nbsp \uFFFD replacement \uE000 private",
];

/** The first `n` characters (code points: no half of a pair, which the API refuses). */
export const prefix = (text: string, n: number): string => Array.from(text).slice(0, n).join("");
