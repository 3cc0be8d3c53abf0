/**
 * `npm run db:dump -- FILE`: the embedded database (the PGlite in DATA_DIR) as plain SQL that
 * `psql -v ON_ERROR_STOP=1` restores into an empty PostgreSQL 15 database, the way from the
 * embedded default to a PostgreSQL server (CONTRACT §7.5).
 *
 * The schema comes from PGlite's own pg_dump (`@electric-sql/pglite-tools`, PostgreSQL 18's
 * pg_dump built to WebAssembly, speaking to the engine in this process), rewritten by
 * `forPostgres15` where PostgreSQL 15 refuses what 18 writes: its definitions before the rows
 * (`--section=pre-data`) and the indexes, constraints and triggers after them (`post-data`). The
 * rows are not pg_dump's: pglite-tools forces `--inserts`, where a text value with a line break
 * spans lines, and then drops every line that starts with `\restrict` or `\unrestrict`, inside
 * such a value too; a value whose last line starts so loses its closing quote, and the next
 * value, written by any user, would run as SQL in the restoring session. So each table's rows are
 * copied out with COPY, whose text format escapes line breaks, and written as `COPY … FROM stdin`,
 * then each sequence's position as pg_dump writes it. Everything in the database is in the dump:
 * `_prisma_migrations` (so the restored database is current for MIGRATE_ON_START and
 * `db:migrate`), the `pgboss` schema with its queued jobs, and every sequence.
 *
 * The embedded database keeps uploaded archives and media files as files under DATA_DIR/blobs (the
 * FileBlobStore); on PostgreSQL the server reads them from the `blobs` and `blob_chunks` tables
 * (the DatabaseBlobStore). So the files are appended to the dump as rows of those tables, in the
 * chunk size the DatabaseBlobStore writes, read and written one chunk at a time.
 */
import { createReadStream, createWriteStream, existsSync, type WriteStream } from "node:fs";
import { readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { pgDump } from "@electric-sql/pglite-tools/pg_dump";
import { openDatabase } from "./client.ts";

/**
 * pg_dump's options: no `ALTER … OWNER TO` and no `GRANT`/`REVOKE`, so the objects belong to
 * whichever role restores them (PGlite's only role is `postgres`, which the target need not have);
 * no statistics (PostgreSQL 18's pg_dump can write `pg_restore_relation_stats` calls, which 15 lacks).
 */
const PG_DUMP_ARGS = ["--no-owner", "--no-privileges", "--no-statistics"];

/**
 * One rule of `forPostgres15`: the lines it drops, where, and why PostgreSQL 15 needs it. A rule
 * reads only the dump's head (its settings, before the first object) or its tail (after "dump
 * complete"), never the rows between: a text value with a line break is written over several
 * lines, and one of them may look like anything.
 */
interface Rule {
  drops: RegExp;
  in: "head" | "tail";
  why: string;
}

export const POSTGRES_15_RULES: readonly Rule[] = [
  {
    drops: /^SET transaction_timeout = .*;$/,
    in: "head",
    why: "transaction_timeout is a setting of PostgreSQL 17 and later; 15 refuses it (unrecognized configuration parameter) and has no such timeout to turn off",
  },
  {
    drops: /^\\restrict\b/,
    in: "head",
    why: "the \\restrict and \\unrestrict psql meta-commands are in psql 15.14 and later only; an older psql 15 stops at them (pglite-tools drops them already: kept for a version that does not)",
  },
  {
    drops: /^\\unrestrict\b/,
    in: "tail",
    why: "as \\restrict",
  },
];

/** PostgreSQL 18's pg_dump output made restorable by PostgreSQL 15's psql (the rules above). */
export function forPostgres15(sql: string): string {
  const lines = sql.split("\n");
  const firstObject = lines.findIndex((line) => line.startsWith("-- Name: "));
  const headEnd = firstObject === -1 ? lines.length : firstObject;
  const tailStart = lines.findLastIndex((line) => line.startsWith("-- PostgreSQL database dump complete"));
  const partOf = (index: number): Rule["in"] | undefined => (index < headEnd ? "head" : tailStart !== -1 && index > tailStart ? "tail" : undefined);
  return lines
    .filter((line, index) => {
      const part = partOf(index);
      return !part || !POSTGRES_15_RULES.some((rule) => rule.in === part && rule.drops.test(line.replace(/\r$/, "")));
    })
    .join("\n");
}

/** A file of the FileBlobStore, named by its key. */
interface BlobFile {
  key: string;
  file: string;
}

/** The same chunk size as the DatabaseBlobStore's, which reads chunk after chunk by `seq`. */
const BLOB_CHUNK_BYTES = 1024 * 1024;

/** The files under `root`, each named by its path from there with `/` (the blob's key). */
async function blobFiles(root: string, prefix = ""): Promise<BlobFile[]> {
  const entries = await readdir(path.join(root, prefix), { withFileTypes: true }).catch(() => []);
  const files: BlobFile[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const key = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await blobFiles(root, key)));
    // a .tmp file is a putBuffer that had not been renamed into place: not a blob
    else if (entry.isFile() && !entry.name.endsWith(".tmp")) files.push({ key, file: path.join(root, key) });
  }
  return files;
}

const COPY_ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

/** A value in COPY's text format (backslash, tab, newline and carriage return escaped). */
function copyText(value: string): string {
  return value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] ?? c);
}

function write(out: WriteStream, data: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => (out.write(data) ? resolve() : out.once("drain", resolve).once("error", reject)));
}

/** The blob files as COPY rows of `blobs` and `blob_chunks` (bytea in hex), one chunk in memory at a time. */
async function writeBlobs(out: WriteStream, files: BlobFile[]): Promise<void> {
  await write(out, "\n--\n-- Media and archives: the files of DATA_DIR/blobs, as the DatabaseBlobStore keeps them\n--\n\n");
  await write(out, "COPY public.blobs (key, size, created_at) FROM stdin;\n");
  for (const { key, file } of files) {
    const info = await stat(file);
    await write(out, `${copyText(key)}\t${info.size}\t${info.mtime.toISOString()}\n`);
  }
  await write(out, "\\.\n\nCOPY public.blob_chunks (key, seq, data) FROM stdin;\n");
  for (const { key, file } of files) {
    let seq = 0;
    for await (const chunk of createReadStream(file, { highWaterMark: BLOB_CHUNK_BYTES })) {
      await write(out, `${copyText(key)}\t${seq++}\t\\\\x${(chunk as Buffer).toString("hex")}\n`);
    }
    // an empty blob is one empty chunk, as the DatabaseBlobStore writes it
    if (seq === 0) await write(out, `${copyText(key)}\t0\t\\\\x\n`);
  }
  await write(out, "\\.\n");
}

/**
 * Why `dataDir` cannot be dumped now, or undefined. PGlite is one process's engine with no lock
 * of its own: a second process opening a data directory that a server holds would read pages the
 * server has not yet written, and its own start and stop write to the directory too. PGlite writes
 * `postmaster.pid` when it opens the directory and removes it when it closes it.
 */
export function cannotDump(dataDir: string): string | undefined {
  const pgdata = path.join(dataDir, "pgdata");
  if (!existsSync(path.join(pgdata, "PG_VERSION"))) return `no embedded database in ${pgdata} (DATA_DIR=${dataDir})`;
  if (existsSync(path.join(pgdata, "postmaster.pid"))) {
    return (
      `${pgdata} is in use: a server is running on DATA_DIR=${dataDir} (PGlite is single-process; ` +
      "stop the server, then run db:dump again), or one was killed without closing the database " +
      "(start the server once and stop it with SIGTERM, then run db:dump again)"
    );
  }
  return undefined;
}

/** The schemas pg_dump dumps: all but PostgreSQL's own. */
const USER_SCHEMAS = "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'";

/**
 * Every table holding rows (partitions one by one, as pg_dump does: a partitioned table holds
 * none itself), each as `COPY … FROM stdin` with its rows in COPY's text format.
 */
async function writeRows(out: WriteStream, pg: PGlite): Promise<void> {
  const tables = await pg.query<{ name: string; columns: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name,
            (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '') AS columns
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND c.relpersistence <> 't' AND ${USER_SCHEMAS}
      ORDER BY n.nspname, c.relname`,
  );
  await write(out, "\n--\n-- Rows\n--\n");
  for (const { name, columns } of tables.rows) {
    const copied = await pg.query(`COPY ${name} (${columns}) TO '/dev/blob'`);
    await write(out, `\nCOPY ${name} (${columns}) FROM stdin;\n`);
    // bytes as they come: a chunk may end inside a character
    if (copied.blob) for await (const chunk of copied.blob.stream()) await write(out, chunk);
    await write(out, "\\.\n");
  }
}

/** Each sequence's position, as pg_dump's "SEQUENCE SET" entries write it. */
async function writeSequences(out: WriteStream, pg: PGlite): Promise<void> {
  const sequences = await pg.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'S' AND ${USER_SCHEMAS} ORDER BY n.nspname, c.relname`,
  );
  await write(out, "\n--\n-- Sequences\n--\n\n");
  for (const { name } of sequences.rows) {
    const { rows } = await pg.query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text, is_called FROM ${name}`);
    const { last_value: value, is_called: called } = rows[0] ?? { last_value: "1", is_called: false };
    const literal = (await pg.query<{ literal: string }>("SELECT quote_literal($1::text) AS literal", [name])).rows[0]?.literal;
    await write(out, `SELECT pg_catalog.setval(${literal}, ${value}, ${called});\n`);
  }
}

/** One section of pg_dump's output (`pre-data`: the definitions; `post-data`: indexes, constraints, triggers), for PostgreSQL 15. */
async function schemaSection(pg: PGlite, section: "pre-data" | "post-data"): Promise<string> {
  const dump = await pgDump({ pg, args: [...PG_DUMP_ARGS, `--section=${section}`] });
  return forPostgres15(await dump.text());
}

/** The embedded database as SQL, in pg_dump's order: definitions, rows and sequences, the rest of the schema; then the blob files. */
async function writeDump(out: WriteStream, pg: PGlite, blobs: BlobFile[]): Promise<void> {
  await write(out, await schemaSection(pg, "pre-data"));
  await writeRows(out, pg);
  await writeSequences(out, pg);
  await writeBlobs(out, blobs);
  await write(out, await schemaSection(pg, "post-data"));
}

/**
 * Writes the embedded database in `dataDir` and its blob files to `target` as plain SQL. The SQL is
 * written to a temporary file beside `target` and renamed onto it once complete, so that a failed
 * dump never leaves a partial file under the name a restore will read.
 */
export async function dumpEmbedded(options: { dataDir: string; embeddedCacheMb: number }, target: string): Promise<{ blobs: number }> {
  const refusal = cannotDump(options.dataDir);
  if (refusal) throw new Error(refusal);
  const blobs = await blobFiles(path.join(options.dataDir, "blobs"));
  // no DATABASE_URL: openDatabase opens the embedded database, as the server would
  const db = await openDatabase({ dataDir: options.dataDir, embeddedCacheMb: options.embeddedCacheMb });
  const partial = `${target}.partial`;
  const out = createWriteStream(partial);
  try {
    if (!db.pglite) throw new Error("not an embedded database");
    await writeDump(out, db.pglite, blobs);
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    await rename(partial, target);
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  } finally {
    await db.close();
  }
  return { blobs: blobs.length };
}
