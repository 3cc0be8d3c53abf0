/**
 * Text that a JSON writer other than JavaScript's (PostgreSQL's to_json, json_build_array) must
 * escape exactly as JSON.stringify does: quotes, backslashes, control characters, line and
 * paragraph separators, characters beyond the BMP, long values. The case pages built as JSON in
 * PostgreSQL are compared with the record path over these (test/cases/case-json, case-slice).
 */
import type { CaseTestApp } from "./cases.ts";
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
const prefix = (text: string, n: number): string => Array.from(text).slice(0, n).join("");

/**
 * A parent, a host and one case per awkward value, through the API: the value in the case's name,
 * owner, external id (every other case) and one property each, under property names whose order
 * JavaScript's objects and jsonb keep differently (upper before lower, `_`, `-`, `.`, letters beyond
 * ASCII), with indices of awkward names and types; every third case closed.
 */
export async function createAwkwardCases(app: CaseTestApp): Promise<void> {
  const names = ["zeta", "Alpha", "alpha", "_under", "a-b", "a.b", "a_b", "Ärger", "éclair", "Ωmega", "中文", "b2", "B10"];
  const parent = await app.createCase({ external_id: "parent-1", properties: { a: "1" } });
  const host = await app.createCase({ case_type: "household", external_id: 'host "q"' });
  for (const [i, value] of AWKWARD_VALUES.entries()) {
    await app.createCase({
      case_name: `awkward ${prefix(value, 40)}`,
      owner_id: `owner ${prefix(value, 10)}`,
      ...(i % 2 ? { external_id: `ext ${prefix(value, 20)}` } : {}),
      properties: Object.fromEntries(names.map((name, n) => [name, n === i % names.length ? value : `${name} ${i}`])),
      indices: {
        ...(i % 3 !== 2 ? { parent: { case_id: parent.case_id, case_type: "patient", relationship: "child" } } : {}),
        ...(i % 3 === 1 ? { host: { case_id: host.case_id, case_type: "household", relationship: "extension" } } : {}),
        ...(i % 4 === 0 ? { Zindex: { case_id: host.case_id, case_type: value || "t", relationship: "extension" } } : {}),
        ...(i % 5 === 0 ? { ündex: { case_id: parent.case_id, case_type: "patient", relationship: "child" } } : {}),
        ...(i % 2 === 0 ? { a_index: { case_id: parent.case_id, case_type: "patient", relationship: "child" } } : {}),
      },
      ...(i % 3 === 0 ? { close: true } : {}),
    });
  }
}
