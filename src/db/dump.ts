/**
 * `npm run db:dump -- FILE`: the embedded database (the PGlite in DATA_DIR) as plain SQL that
 * `psql -v ON_ERROR_STOP=1` restores into an empty PostgreSQL 15 database, the way from the
 * embedded default to a PostgreSQL server (CONTRACT §7.5).
 *
 * The schema and rows come from PGlite's own pg_dump (`@electric-sql/pglite-tools`, PostgreSQL 18's
 * pg_dump built to WebAssembly, speaking to the engine in this process), rewritten by
 * `forPostgres15` where PostgreSQL 15 refuses what 18 writes. Everything in the database is in it:
 * `_prisma_migrations` (so the restored database is current for MIGRATE_ON_START and
 * `db:migrate`), the `pgboss` schema with its queued jobs, and each sequence's position.
 *
 * The embedded database keeps uploaded archives and media files as files under DATA_DIR/blobs (the
 * FileBlobStore); on PostgreSQL the server reads them from the `blobs` and `blob_chunks` tables
 * (the DatabaseBlobStore). So the files are appended to the dump as rows of those tables, in the
 * chunk size the DatabaseBlobStore writes, read and written one chunk at a time.
 */
import { createReadStream, createWriteStream, existsSync, type WriteStream } from "node:fs";
import { readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pgDump } from "@electric-sql/pglite-tools/pg_dump";
import { openDatabase } from "./client.ts";

/**
 * pg_dump's options: no `ALTER … OWNER TO` and no `GRANT`/`REVOKE`, so the objects belong to
 * whichever role restores them (PGlite's only role is `postgres`, which the target need not have);
 * no statistics (PostgreSQL 18's pg_dump can write `pg_restore_relation_stats` calls, which 15 lacks).
 * pglite-tools adds `--inserts` (rows as INSERT statements) itself.
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

function write(out: WriteStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => (out.write(text) ? resolve() : out.once("drain", resolve).once("error", reject)));
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

/**
 * Writes the embedded database in `dataDir` and its blob files to `target` as plain SQL. The SQL is
 * written to a temporary file beside `target` and renamed onto it once complete, so that a failed
 * dump never leaves a partial file under the name a restore will read.
 */
export async function dumpEmbedded(options: { dataDir: string; embeddedCacheMb: number }, target: string): Promise<{ blobs: number }> {
  const refusal = cannotDump(options.dataDir);
  if (refusal) throw new Error(refusal);
  // no DATABASE_URL: openDatabase opens the embedded database, as the server would
  const db = await openDatabase({ dataDir: options.dataDir, embeddedCacheMb: options.embeddedCacheMb });
  let sql: string;
  try {
    if (!db.pglite) throw new Error("not an embedded database");
    sql = forPostgres15(await (await pgDump({ pg: db.pglite, args: PG_DUMP_ARGS })).text());
  } finally {
    await db.close();
  }
  const files = await blobFiles(path.join(options.dataDir, "blobs"));
  const partial = `${target}.partial`;
  const out = createWriteStream(partial);
  try {
    await write(out, sql);
    await writeBlobs(out, files);
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    await rename(partial, target);
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  return { blobs: files.length };
}
