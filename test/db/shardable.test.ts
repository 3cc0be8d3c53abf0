import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase } from "../helpers/db.ts";

/**
 * CONTRACT §7.6, last bullet, read from the migrated database's catalog (on PGlite and on
 * PostgreSQL alike): every table that holds a domain's data could be distributed by `domain_id`
 * (Citus, or native hash partitioning by domain, which has the same rules). Citus itself cannot be
 * installed here; docs/scaling.md says which tables would be distributed and how each query would
 * be planned.
 *
 * Every table of the schema is a per-domain table unless it is listed below with its reason, so a
 * new table is checked the day it is added.
 */

/** Tables with one copy on every node: what per-domain tables may reference. */
const REFERENCE = {
  domains: "the tenants themselves: every per-domain table references it, and it is small",
} as const;

/** Tables that stay on one node (a Citus coordinator's local tables): not a domain's data. */
const LOCAL = {
  _prisma_migrations: "the migration history of the whole schema",
  users: "accounts span domains; read on every request by the authentication path, never by domain",
  memberships: "which users belong to which domains: read with users on every request (user_id first)",
  api_keys: "a user's credentials, looked up by key hash before any domain is known",
  oauth_clients: "OAuth clients belong to the server, not to a domain",
  oauth_tokens: "looked up by token hash before any domain is known",
  digest_nonces: "Digest replay protection, keyed by nonce before any domain is known",
  persisted_queries: "APQ documents are shared by every domain",
  server_secrets: "the server's own secrets",
  rate_limits: "counters of the whole deployment, keyed by text (and moving to Redis with REDIS_URL)",
  event_payloads: "the PostgreSQL bus's large payloads: LISTEN/NOTIFY is node-local, so the table is too",
  blobs: "content keyed by blob key, no domain; BLOB_STORE_URL moves it to object storage",
  blob_chunks: "the chunks of `blobs`, keyed like it",
} as const;

/**
 * What this schema breaks today. The list only shrinks: a migration that fixes an offender
 * removes its line, and the test fails if a line is fixed but left here or a new one appears.
 * Empty means the schema meets §7.6.
 */
const KNOWN_OFFENDERS: string[] = [];

type Placement = "reference" | "local" | "domain";

interface UniqueIndex {
  table: string;
  name: string;
  primary: boolean;
  columns: string[];
}

interface ForeignKey {
  table: string;
  name: string;
  columns: string[];
  referenced: string;
  referencedColumns: string[];
  onUpdate: string;
}

interface Catalog {
  tables: string[];
  domainIdColumns: Map<string, { nullable: boolean; type: string }>;
  uniqueIndexes: UniqueIndex[];
  foreignKeys: ForeignKey[];
  transitionTriggers: { table: string; name: string }[];
}

async function readCatalog(db: Database): Promise<Catalog> {
  const q = <T>(sql: string) => db.prisma.$queryRawUnsafe<T[]>(sql);
  const tables = await q<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1`,
  );
  const columns = await q<{ table: string; nullable: string; type: string }>(
    `SELECT table_name AS "table", is_nullable AS nullable, data_type AS type FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'domain_id'`,
  );
  // every unique index, the primary key's and those Prisma's @unique creates without a constraint;
  // an expression column (attnum 0) has no name and so never counts as domain_id
  const uniqueIndexes = await q<UniqueIndex>(
    `SELECT t.relname AS "table", i.relname AS name, x.indisprimary AS primary,
            array(SELECT coalesce(a.attname::text, '(expression)') FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(n, o)
                  LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.o) AS columns
       FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
      WHERE t.relnamespace = current_schema()::regnamespace AND x.indisunique`,
  );
  const foreignKeys = await q<ForeignKey>(
    `SELECT t.relname AS "table", con.conname AS name, r.relname AS referenced,
            array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
                  JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o) AS columns,
            array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
                  JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o) AS "referencedColumns",
            con.confupdtype::text AS "onUpdate"
       FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid JOIN pg_class r ON r.oid = con.confrelid
      WHERE con.contype = 'f' AND t.relnamespace = current_schema()::regnamespace`,
  );
  const transitionTriggers = await q<{ table: string; name: string }>(
    `SELECT t.relname AS "table", g.tgname AS name FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid
      WHERE t.relnamespace = current_schema()::regnamespace AND NOT g.tgisinternal
        AND (g.tgoldtable IS NOT NULL OR g.tgnewtable IS NOT NULL)`,
  );
  return {
    tables: tables.map((t) => t.name),
    domainIdColumns: new Map(columns.map((c) => [c.table, { nullable: c.nullable === "YES", type: c.type }])),
    uniqueIndexes,
    foreignKeys,
    transitionTriggers,
  };
}

function placementOf(table: string): Placement {
  if (table in REFERENCE) return "reference";
  if (table in LOCAL) return "local";
  return "domain";
}

const ON_UPDATE_ACTIONS: Record<string, string> = { c: "CASCADE", n: "SET NULL", d: "SET DEFAULT" };

/** Every way the catalog breaks §7.6, one line each, sorted. */
function offenders(catalog: Catalog): string[] {
  const found: string[] = [];
  const isDomain = (table: string) => placementOf(table) === "domain";
  for (const table of catalog.tables.filter(isDomain)) {
    const column = catalog.domainIdColumns.get(table);
    if (!column) found.push(`${table}: has no domain_id column`);
    else {
      if (column.nullable) found.push(`${table}: domain_id is nullable`);
      if (column.type !== "uuid") found.push(`${table}: domain_id is ${column.type}, not uuid (co-location needs one type)`);
    }
    if (!catalog.uniqueIndexes.some((i) => i.table === table && i.primary)) found.push(`${table}: has no primary key`);
  }
  for (const index of catalog.uniqueIndexes.filter((i) => isDomain(i.table) && !i.columns.includes("domain_id"))) {
    const kind = index.primary ? "primary key" : "unique index";
    found.push(`${index.table}: ${kind} ${index.name} (${index.columns.join(", ")}) lacks domain_id`);
  }
  for (const fk of catalog.foreignKeys) {
    const from = placementOf(fk.table);
    const to = placementOf(fk.referenced);
    if (from === "domain" && to === "domain" && !pairsDomainIds(fk)) {
      found.push(
        `${fk.table}: foreign key ${fk.name} (${fk.columns.join(", ")}) -> ${fk.referenced} (${fk.referencedColumns.join(", ")}) lacks domain_id on both sides`,
      );
    }
    if (from === "domain" && to === "local") found.push(`${fk.table}: foreign key ${fk.name} references local table ${fk.referenced}`);
    if (from === "reference" && to === "domain") found.push(`${fk.table}: reference table's foreign key ${fk.name} references ${fk.referenced}`);
    const touchesSharded = [from, to].some((p) => p !== "local");
    if (touchesSharded && fk.onUpdate in ON_UPDATE_ACTIONS) {
      found.push(`${fk.table}: foreign key ${fk.name} has ON UPDATE ${ON_UPDATE_ACTIONS[fk.onUpdate]}`);
    }
  }
  for (const trigger of catalog.transitionTriggers.filter((t) => isDomain(t.table))) {
    found.push(`${trigger.table}: statement trigger ${trigger.name} has a transition table`);
  }
  return found.sort();
}

/** domain_id on both sides, at the same position: a row and its parent then live in one shard. */
function pairsDomainIds(fk: ForeignKey): boolean {
  const at = fk.columns.indexOf("domain_id");
  return at >= 0 && fk.referencedColumns[at] === "domain_id";
}

describe("§7.6 a schema shardable by domain_id", () => {
  let db: Database;
  let catalog: Catalog;
  beforeAll(async () => {
    db = await freshDatabase();
    catalog = await readCatalog(db);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("§7.6: every reference and local table named here exists (no stale reasons)", () => {
    const named = [...Object.keys(REFERENCE), ...Object.keys(LOCAL)];
    expect(named.filter((t) => !catalog.tables.includes(t))).toEqual([]);
  });

  it("§7.6: the per-domain tables are the ones docs/scaling.md distributes", () => {
    expect(catalog.tables.filter((t) => placementOf(t) === "domain")).toEqual([
      "app_versions",
      "apps",
      "case_indices",
      "case_write_versions",
      "cases",
      "form_cases",
      "forms",
      "location_types",
      "locations",
      "multimedia_files",
      "multimedia_jobs",
    ]);
  });

  it("§7.6: per-domain tables carry domain_id in every key and foreign key, without ON UPDATE actions or transition-table triggers (known offenders only shrink)", () => {
    expect(offenders(catalog)).toEqual([...KNOWN_OFFENDERS].sort());
  });

  it("§7.6: the check sees each kind of offence (a table built to break every rule)", async () => {
    await db.prisma.$executeRawUnsafe(`CREATE TABLE "zz_bad_parent" ("id" UUID PRIMARY KEY, "code" TEXT, "domain_id" UUID)`);
    await db.prisma.$executeRawUnsafe(`CREATE UNIQUE INDEX "zz_bad_parent_code" ON "zz_bad_parent" ("code")`);
    await db.prisma.$executeRawUnsafe(
      `CREATE TABLE "zz_bad_child" ("parent_id" UUID REFERENCES "zz_bad_parent" ("id") ON UPDATE CASCADE,
                                    "user_id" UUID REFERENCES "users" ("id"))`,
    );
    await db.prisma.$executeRawUnsafe(`CREATE FUNCTION "zz_noop"() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END'`);
    await db.prisma.$executeRawUnsafe(
      `CREATE TRIGGER "zz_changed" AFTER INSERT ON "zz_bad_child" REFERENCING NEW TABLE AS "changed"
         FOR EACH STATEMENT EXECUTE FUNCTION "zz_noop"()`,
    );
    const found = offenders(await readCatalog(db)).filter((line) => line.startsWith("zz_"));
    expect(found).toEqual([
      "zz_bad_child: foreign key zz_bad_child_parent_id_fkey (parent_id) -> zz_bad_parent (id) lacks domain_id on both sides",
      "zz_bad_child: foreign key zz_bad_child_parent_id_fkey has ON UPDATE CASCADE",
      "zz_bad_child: foreign key zz_bad_child_user_id_fkey references local table users",
      "zz_bad_child: has no domain_id column",
      "zz_bad_child: has no primary key",
      "zz_bad_child: statement trigger zz_changed has a transition table",
      "zz_bad_parent: domain_id is nullable",
      "zz_bad_parent: primary key zz_bad_parent_pkey (id) lacks domain_id",
      "zz_bad_parent: unique index zz_bad_parent_code (code) lacks domain_id",
    ]);
  });
});
