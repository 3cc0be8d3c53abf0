import http from "node:http";
import { expect } from "vitest";
import fc from "fast-check";
import type { Config } from "../../src/config.ts";
import type { Database } from "../../src/db/client.ts";
import { documentValidator } from "./openapi.ts";

/**
 * Hostile input for the property tests (issue #7 part 1): raw HTTP requests that say exactly what
 * they send (paths and bodies byte for byte, no client-side URL normalisation), fast-check
 * arbitraries for malformed and wrongly typed input, the checks every answer must pass, and a
 * snapshot of the domain tables to prove that a refused request changed nothing.
 */

/** Build overrides for these tests: they send hundreds of requests a second as one user. */
export const NO_RATE_LIMIT: Partial<Config> = { rateLimitRequests: 0 };

// ---- raw HTTP --------------------------------------------------------------------------------

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** the body parsed as JSON, or undefined when it is not JSON */
  json: unknown;
}

/**
 * No keep-alive: the server closes a connection after refusing a body it did not read (a broken
 * multipart, a 413), and a reused socket would then fail with ECONNRESET on the next request.
 */
const agent = new http.Agent({ keepAlive: false, maxSockets: 4 });

/**
 * One request to `base` (an `http://host:port` of a listening server), the path sent exactly as
 * given: Node only refuses characters outside \x21-\xff, so callers percent-encode those.
 */
export function rawRequest(
  base: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, "utf8");
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: options.method,
        path: sendable(options.path),
        headers: { ...(body ? { "Content-Length": String(body.length) } : {}), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          const answer = { status: res.statusCode ?? 0, headers: res.headers, text, json };
          // as every REST answer of the suite: as the OpenAPI document says (test/helpers/openapi.ts)
          try {
            documentValidator().check(options.method, options.path, answer);
          } catch (error) {
            return reject(error);
          }
          resolve(answer);
        });
      },
    );
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}

/** Percent-encodes what Node would refuse to send (spaces, controls, non-ASCII); `%` garbage stays. */
export function sendable(path: string): string {
  return path.replace(/[^\x21-\x7e]/gu, (ch) => (/[\ud800-\udfff]/.test(ch) ? "%ED%A0%80" : encodeURIComponent(ch)));
}

export type Family = "case" | "location" | "apps" | "graphql";

const isJsonType = (res: RawResponse | { headers: Record<string, unknown> }) =>
  String(res.headers["content-type"] ?? "").startsWith("application/json");

/**
 * What every answer to hostile input must be: never a 5xx; JSON, and when refused, the family's
 * error shape (CONTRACT §1 "Error bodies"). Returns the reason it is not (undefined when it is).
 * `allowXml`: the Location API answers successful reads in XML unless JSON is asked for.
 */
export function badAnswer(res: RawResponse, family: Family, options: { allowXml?: boolean; allowBinary?: boolean } = {}): string | undefined {
  const show = () => `${res.status} ${String(res.headers["content-type"])} ${res.text.slice(0, 300)}`;
  if (res.status >= 500 || res.status < 100) return `status ${show()}`;
  if (res.status < 400) {
    if (options.allowBinary) return undefined;
    if (options.allowXml && String(res.headers["content-type"]).includes("xml")) return undefined;
    if (!isJsonType(res) || res.json === undefined) return `success not JSON: ${show()}`;
    return undefined;
  }
  if (!isJsonType(res) || res.json === undefined) return `error not JSON: ${show()}`;
  const body = res.json as Record<string, unknown>;
  if (typeof body !== "object" || body === null || Array.isArray(body)) return `error body not an object: ${show()}`;
  if (family === "graphql") {
    const errors = body.errors as { message?: unknown; extensions?: { code?: unknown } }[] | undefined;
    if (!Array.isArray(errors) || errors.length === 0) return `no errors[]: ${show()}`;
    for (const e of errors) {
      if (typeof e.message !== "string" || typeof e.extensions?.code !== "string") return `error without message/code: ${show()}`;
      if (e.extensions.code === "INTERNAL_SERVER_ERROR") return `INTERNAL_SERVER_ERROR: ${show()}`;
    }
    return undefined;
  }
  const keys = Object.keys(body);
  if (family === "apps") {
    if (keys[0] !== "success" || keys[1] !== "error" || body.success !== false) return `not the Import App error shape: ${show()}`;
  } else if (keys[0] !== "error") return `not the {"error"} shape: ${show()}`;
  if (typeof body.error !== "string" || body.error === "") return `error is not a message: ${show()}`;
  return undefined;
}

/** A GraphQL answer: never 5xx, always JSON; any error carries a code that is not INTERNAL_SERVER_ERROR. */
export function badGraphQLAnswer(res: RawResponse): string | undefined {
  const show = () => `${res.status} ${res.text.slice(0, 400)}`;
  if (res.status >= 500) return `status ${show()}`;
  if (!isJsonType(res) || typeof res.json !== "object" || res.json === null) return `not JSON: ${show()}`;
  const body = res.json as { errors?: { message?: unknown; extensions?: { code?: unknown } }[]; data?: unknown };
  if (res.status >= 400 && !body.errors?.length) return `error status without errors[]: ${show()}`;
  for (const e of body.errors ?? []) {
    if (typeof e.message !== "string" || typeof e.extensions?.code !== "string") return `error without code: ${show()}`;
    if (e.extensions.code === "INTERNAL_SERVER_ERROR") return `INTERNAL_SERVER_ERROR: ${show()}`;
  }
  return undefined;
}

// ---- database snapshots ------------------------------------------------------------------------

/**
 * The tables that hold domain data, each with the columns that legitimately change on a read
 * (left out of the hash) and the rows a refused request may add by contract (left out too): a
 * Case API submission error keeps its error form (CONTRACT §2: 400 with `xform_id`).
 */
const SNAPSHOT_TABLES: { table: string; ignoreColumns?: string[]; where?: string }[] = [
  { table: "domains" },
  { table: "users" },
  { table: "memberships" },
  { table: "api_keys", ignoreColumns: ["last_used_at"] },
  { table: "oauth_clients" },
  { table: "oauth_tokens" },
  { table: "cases" },
  { table: "case_indices" },
  { table: "forms", where: "problem IS NULL" },
  { table: "form_cases" },
  { table: "location_types" },
  { table: "locations" },
  { table: "apps" },
  { table: "app_versions" },
  { table: "multimedia_files" },
  { table: "multimedia_jobs" },
  { table: "blobs" },
  { table: "blob_chunks" },
];

export type Snapshot = Record<string, { rows: number; hash: string }>;

/** Row count and an order-independent hash of every domain table, in one SQL statement. */
export async function snapshot(db: Database): Promise<Snapshot> {
  const parts = SNAPSHOT_TABLES.map(({ table, ignoreColumns = [], where }) => {
    const row = `(to_jsonb(t)${ignoreColumns.map((c) => ` - '${c}'`).join("")})::text`;
    return `SELECT '${table}' AS name, count(*)::int AS rows, md5(coalesce(string_agg(${row}, '|' ORDER BY ${row}), '')) AS hash FROM "${table}" t${where ? ` WHERE ${where}` : ""}`;
  });
  const rows = await db.prisma.$queryRawUnsafe<{ name: string; rows: number; hash: string }[]>(parts.join(" UNION ALL "));
  return Object.fromEntries(rows.map((r) => [r.name, { rows: Number(r.rows), hash: r.hash }]));
}

/** The tables whose content differs between two snapshots. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return Object.keys(before).filter((t) => before[t].rows !== after[t]?.rows || before[t].hash !== after[t]?.hash);
}

// ---- arbitraries ---------------------------------------------------------------------------------

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
  .map(([depth, objects]) => (objects ? '{"a":'.repeat(depth) + "1" + "}".repeat(depth) : "[".repeat(depth) + "]".repeat(depth)));

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

/** Asserts a list of problems is empty, showing them all. */
export function expectNoProblems(problems: string[]): void {
  expect(problems, problems.slice(0, 10).join("\n")).toEqual([]);
}

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

/** Status codes seen per property, for the summary line of each file. */
export class StatusTally {
  private readonly counts = new Map<string, Map<number, number>>();
  add(property: string, status: number): void {
    const byStatus = this.counts.get(property) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.counts.set(property, byStatus);
  }
  total(): number {
    let n = 0;
    for (const byStatus of this.counts.values()) for (const c of byStatus.values()) n += c;
    return n;
  }
  toString(): string {
    return [...this.counts]
      .map(
        ([p, byStatus]) =>
          `${p}: ${[...byStatus]
            .sort((a, b) => a[0] - b[0])
            .map(([s, c]) => `${s}×${c}`)
            .join(" ")}`,
      )
      .join("\n");
  }
}

/** Any NUL or unpaired surrogate, as JSON text writes them. */
export const UNSTORABLE_JSON = /\\u0000|\\ud[89a-f][0-9a-f]{2}/i;

// ---- deep nesting and date offsets (issue #12: F8, F10) -----------------------------------------

/**
 * JSON text of a value nested `depth` levels deep (1 to 10,000), as a list `[[…]]` or an object
 * `{"a":{"a":…}}`: written as text, since JSON.stringify itself recurses.
 */
export const deepValueText: fc.Arbitrary<{ depth: number; text: string }> = fc
  .tuple(fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 5_000, max: 10_000 })), fc.boolean())
  .map(([depth, objects]) => ({
    depth,
    text: objects ? '{"a":'.repeat(depth) + "1" + "}".repeat(depth) : "[".repeat(depth) + "]".repeat(depth),
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
