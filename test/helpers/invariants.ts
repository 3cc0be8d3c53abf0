/**
 * What every answer to hostile input must be (never a 5xx, JSON in the family's error shape), and a
 * snapshot of the domain tables to prove that a refused request changed nothing.
 */
import { expect } from "vitest";
import type { Database } from "../../src/db/client.ts";
import type { RawResponse } from "./raw-http.ts";

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

/** Asserts a list of problems is empty, showing them all. */
function _expectNoProblems(problems: string[]): void {
  expect(problems, problems.slice(0, 10).join("\n")).toEqual([]);
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
const _UNSTORABLE_JSON = /\\u0000|\\ud[89a-f][0-9a-f]{2}/i;
