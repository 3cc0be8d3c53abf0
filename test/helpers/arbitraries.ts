/**
 * fast-check arbitraries for malformed and wrongly typed input (strings, JSON, query strings, path
 * segments, mutated payloads, deep nesting, date offsets), and the run settings of the property files.
 */
import fc from "fast-check";

/** Characters that break naive code: NUL and other controls, lone surrogates, BOM, RTL marks, emoji. */
const oddChar = fc.oneof(
  fc.constantFrom("\u0000", "\u0001", "\u0007", "\b", "\t", "\n", "\r", "\u001b", "\u007f", "\u0085", "\u2028", "\u2029"),
  fc.constantFrom("\ud800", "\udfff", "\udc00", "\ud83d", "\udfff\udfff", "\udc00\udc01"), // lone surrogates (two low ones in a row trip PGlite)
  fc.constantFrom("\ufeff", "\u200b", "\u202e", "\ufffe", "\uffff", "\u0301", "😀", "𝔘", "Ω", "ß", "İ", "ﬁ"),
  fc.constantFrom("'", '"', "\\", "/", "%", "&", "=", "?", "#", "+", ";", ",", ".", "*", "$", "{", "}", "[", "]", "<", ">", ":"),
);

/** Strings that a service might choke on: empty, blank, odd characters, injections, huge. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: fc.oneof(fc.constantFrom("a", "_", "-", "1"), oddChar), maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  {
    weight: 2,
    // biome-ignore format: a list of hostile values, packed
    arbitrary: fc.constantFrom(
      "", " ", "\u0000", "null", "undefined", "NaN", "true", "0", "-1", "1e309", "[]", "{}", "__proto__", "constructor",
      "toString", "hasOwnProperty", "' OR 1=1 --", "\"; DROP TABLE cases; --", "$where", "../../etc/passwd", "..",
      "%00", "%ZZ", "\\u0000", "<x>&amp;</x>", "<![CDATA[", "xml", "XMLfoo", "a:b", "jr://file/../x.png",
      "2020-02-30", "9999-99-99T99:99:99Z", "\ud800", "\udfff\udfff", "a\u0000b", "x".repeat(256), "é".repeat(300),
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200_000 }).map((n) => "A".repeat(n)) },
);

/**
 * The same, but short enough for a URL: Node itself answers a request line over its 16 KiB header
 * limit with a bare 431 and closes the socket, before the app sees it (see the report).
 */
export const hostileUrlString: fc.Arbitrary<string> = hostileString.map((s) => (s.length > 2000 ? s.slice(0, 2000) : s));

/** A value of the wrong JSON type for a string field (or, sometimes, an odd string). */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, Number.MAX_SAFE_INTEGER + 2, [], {}, [null], { a: null }),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
  hostileString,
);

/** Nested arrays/objects `depth` levels deep, as JSON text (parsers and validators recurse). */
export const deepJson: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean())
  .map(([depth, objects]) => (objects ? `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}` : "[".repeat(depth) + "]".repeat(depth)));

/** JSON values made of hostile strings, wrong types and nesting. */
export const hostileJsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    wrongValue,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostileString, tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** Bodies that are not valid JSON, or JSON of a shape nobody expects. */
export const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "{",
    "[",
    "{]",
    '{"a":}',
    "{'a': 1}",
    "nul",
    "tru",
    "undefined",
    "NaN",
    "Infinity",
    "\ufeff{}",
    "{}garbage",
    '"unterminated',
    "[1,]",
    '{"a":1,}',
    "\u0000",
    "0x10",
    "--1",
    '{"__proto__": {"polluted": 1}}',
    "1e999999",
    "-",
    "[][]",
    '{"a":1}{"b":2}',
  ),
  fc.string({ unit: "binary", maxLength: 200 }),
  deepJson,
  hostileJsonValue.map((v) => JSON.stringify(v) ?? "null"),
  fc.jsonValue().map((v) => JSON.stringify(v)),
);

/** A percent-encoding of any string that Node will send (non-ASCII and controls encoded). */
export function encodeLoosely(s: string): string {
  // well-formed where possible; lone surrogates become a replacement byte sequence
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code >= 0x21 && code < 0x7f && !"#?%".includes(ch)) out += ch;
    else if (code >= 0xd800 && code <= 0xdfff) out += "%ED%A0%80";
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** Query strings: repeated keys, brackets, empty parts, odd numbers, percent garbage. */
export function queryString(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...keys) },
    { weight: 1, arbitrary: fc.constantFrom(...keys).map((k) => `${k}[]`) },
    { weight: 1, arbitrary: fc.constantFrom(...keys).map((k) => `${k}[0]`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        "[",
        "]",
        "a[b]c",
        "__proto__",
        "constructor",
        "%",
        "%ZZ",
        "%00",
        "%2e",
        "fields.",
        "properties.",
        "indices.",
        "last_modified.",
        "last_modified.between",
        ".",
        "..",
      ),
    },
    { weight: 1, arbitrary: hostileUrlString.map(encodeLoosely) },
  );
  const value = fc.oneof(
    fc.constantFrom(
      "",
      "0",
      "-1",
      "1.5",
      "1e3",
      "99999999999999999999999",
      "-0",
      "+5",
      " 5",
      "NaN",
      "Infinity",
      "0x10",
      "5000",
      "5001",
      "2024-01-01",
      "2020-02-30",
      "2024-01-01T00:00:00+25:00",
      "json",
      "xml",
      "last_modified",
      "-last_modified",
      "%",
      "%ZZ",
      "%00",
      "a,b",
      ",",
      "true",
      "false",
    ),
    fc.integer().map(String),
    fc.double().map(String),
    hostileUrlString.map(encodeLoosely),
  );
  const pair = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(key, value).map(([k, v]) => `${k}=${v}`) },
    { weight: 1, arbitrary: key },
    { weight: 1, arbitrary: fc.constantFrom("", "=", "==", "&", "a=b=c") },
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom("", "?", "??", "?&", "?#frag") },
    { weight: 8, arbitrary: fc.array(pair, { minLength: 1, maxLength: 6 }).map((pairs) => `?${pairs.join("&")}`) },
  );
}

/** Path segments: encoded slashes and dots, percent garbage, NUL, unicode, huge. */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "%2F",
    "a%2Fb",
    "%2f..%2f",
    "%2e",
    "%2e%2e",
    ".",
    "..",
    "...",
    "%",
    "%Z",
    "%ZZ",
    "%E0%A4%A",
    "%C0%AF",
    "%00",
    "a%00b",
    "%FF%FE",
    "%ED%A0%80",
    ",",
    ",,",
    "a,b,",
    "-",
    "_",
    "%20",
    "+",
    "~",
    "%7E",
    ";x=1",
    "a;b",
    "*",
    "$",
    "(",
    ")",
    "'",
    "@",
    "!",
    "%25",
    "%2525",
    "ext",
    "bulk-fetch",
    "status",
    "file",
    "multimedia",
  ),
  fc.uuid().map(String),
  hostileUrlString.map(encodeLoosely),
  fc.string({ unit: fc.constantFrom("a", "-", "_", ","), maxLength: 10 }),
  fc.integer({ min: 1, max: 4_000 }).map((n) => "a".repeat(n)),
);

/**
 * A mostly valid object with one to three things wrong: a field set to a wrong type or an odd
 * string, a field removed, or an unknown key added. `fields` maps each known key to what a valid
 * value of it looks like (so the rest of the payload passes and the fault reaches deep checks).
 */
export function mutatedObject(base: Record<string, unknown>, fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const names = Object.keys(fields);
  const mutation = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constant("set" as const), fc.constantFrom(...names), fc.oneof(wrongValue, hostileJsonValue, hostileString)) },
    {
      weight: 3,
      arbitrary: fc.tuple(
        fc.constant("set" as const),
        fc.constantFrom(...names),
        fc.constantFrom(...names).chain((n) => fields[n]),
      ),
    },
    { weight: 1, arbitrary: fc.tuple(fc.constant("delete" as const), fc.constantFrom(...names), fc.constant(undefined)) },
    { weight: 1, arbitrary: fc.tuple(fc.constant("set" as const), hostileString, hostileJsonValue) },
  );
  return fc.array(mutation, { minLength: 1, maxLength: 3 }).map((mutations) => {
    const out: Record<string, unknown> = { ...base };
    for (const [op, key, value] of mutations) {
      if (op === "delete") delete out[key];
      else Object.defineProperty(out, key, { value, enumerable: true, configurable: true, writable: true }); // even "__proto__"
    }
    return out;
  });
}

/**
 * fast-check's run settings for these files: explicit numRuns; FC_SEED fixes the seed and
 * FC_SCALE multiplies the runs (for a longer bug hunt by hand; the suite runs the stated counts).
 */
export function runs(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
  return {
    numRuns: Math.round(numRuns * (Number(process.env.FC_SCALE) || 1)),
    ...(seed === undefined ? {} : { seed }),
    endOnFailure: true,
    // fast-check's report shows the whole counterexample: shorten runs of one character
    reporter(details) {
      const message = fc.defaultReportMessage(details);
      if (!message) return;
      const cause = details.errorInstance instanceof Error ? `\nGot: ${details.errorInstance.message}` : "";
      const short = (message + cause).replace(/(.)\1{40,}/gsu, (run, c: string) => `${c}…(×${run.length})`);
      throw new Error(short.length > 6000 ? `${short.slice(0, 6000)}…` : short);
    },
  };
}

// ---- deep nesting and date offsets ------------------------------------------------------------

/**
 * JSON text of a value nested `depth` levels deep (1 to 10,000), as a list `[[…]]` or an object
 * `{"a":{"a":…}}`: written as text, since JSON.stringify itself recurses.
 */
export const deepValueText: fc.Arbitrary<{ depth: number; text: string }> = fc
  .tuple(fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 5_000, max: 10_000 })), fc.boolean())
  .map(([depth, objects]) => ({
    depth,
    text: objects ? `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}` : "[".repeat(depth) + "]".repeat(depth),
  }));

/** An offset in minutes east of UTC: any ±HH:MM from -23:59 to +23:59, the extremes more often. */
export const offsetMinutes: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
  fc.integer({ min: 16 * 60, max: 23 * 60 + 59 }).chain((m) => fc.constantFrom(m, -m)),
  fc.constantFrom(0, -(23 * 60 + 59), 23 * 60 + 59, 16 * 60, -16 * 60, 15 * 60 + 59),
);

/** The instant `ms` written as local time at `minutes` east of UTC, `YYYY-MM-DDTHH:MM:SS.mmm±HH:MM`. */
export function withOffset(ms: number, minutes: number): string {
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 23);
  const abs = Math.abs(minutes);
  return `${local}${minutes < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}
