import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.ts";
import { cannotDump, dumpEmbedded, forPostgres15, POSTGRES_15_RULES } from "../../src/db/dump.ts";

/**
 * CONTRACT §7.5, `npm run db:dump`: the rewrite of PostgreSQL 18's pg_dump output for PostgreSQL
 * 15, the refusal while a server holds the data directory, and the media files as rows of the
 * PostgreSQL blob store. The restore into PostgreSQL 15 itself is test/process/dump.test.ts.
 */

/** The shape of the head and tail PostgreSQL 18's pg_dump writes, with a row between. */
const DUMP = [
  "\\restrict 5Yx3d",
  "--",
  "-- PostgreSQL database dump",
  "--",
  "SET statement_timeout = 0;",
  "SET lock_timeout = 0;",
  "SET idle_in_transaction_session_timeout = 0;",
  "SET transaction_timeout = 0;",
  "SET client_encoding = 'UTF8';",
  "--",
  "-- Name: cases; Type: TABLE; Schema: public; Owner: -",
  "--",
  "CREATE TABLE public.cases (id text, note text);",
  // a text value over three lines: its middle line must stay as it is
  "INSERT INTO public.cases VALUES ('a', 'first line",
  "SET transaction_timeout = 0;",
  "\\unrestrict 5Yx3d');",
  "--",
  "-- PostgreSQL database dump complete",
  "--",
  "\\unrestrict 5Yx3d",
  "",
].join("\n");

describe("§7.5 db:dump's rewrite for PostgreSQL 15", () => {
  it("§7.5: drops what PostgreSQL 15 refuses from the head and tail, and nothing else", () => {
    const out = forPostgres15(DUMP).split("\n");
    expect(out).not.toContain("\\restrict 5Yx3d");
    expect(out.at(-2)).toBe("--");
    expect(out.slice(0, 8)).toEqual([
      "--",
      "-- PostgreSQL database dump",
      "--",
      "SET statement_timeout = 0;",
      "SET lock_timeout = 0;",
      "SET idle_in_transaction_session_timeout = 0;",
      "SET client_encoding = 'UTF8';",
      "--",
    ]);
    // the row is kept whole
    expect(forPostgres15(DUMP)).toContain("'first line\nSET transaction_timeout = 0;\n\\unrestrict 5Yx3d');");
    expect(DUMP.split("\n").length - out.length).toBe(3);
  });

  it("§7.5: every rule says why PostgreSQL 15 needs it", () => {
    for (const rule of POSTGRES_15_RULES) expect(rule.why.length).toBeGreaterThan(10);
  });
});

describe("§7.5 db:dump of an embedded database", () => {
  let dataDir: string;
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("§7.5: refuses a DATA_DIR without an embedded database, and one a server holds, saying why", async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-dump-"));
    expect(cannotDump(dataDir)).toBe(`no embedded database in ${path.join(dataDir, "pgdata")} (DATA_DIR=${dataDir})`);
    await mkdir(path.join(dataDir, "pgdata"));
    await writeFile(path.join(dataDir, "pgdata", "PG_VERSION"), "18\n");
    expect(cannotDump(dataDir)).toBeUndefined();
    await writeFile(path.join(dataDir, "pgdata", "postmaster.pid"), "-42\n");
    expect(cannotDump(dataDir)).toMatch(/a server is running on DATA_DIR=.*stop the server, then run db:dump again/);
    await expect(dumpEmbedded({ dataDir, embeddedCacheMb: 16 }, path.join(dataDir, "out.sql"))).rejects.toThrow("is in use");
  });

  it("§7.5: writes the schema, the rows untouched, each sequence's position, and the blob files as blobs and blob_chunks rows in 1 MiB chunks", {
    timeout: 60_000,
  }, async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-dump-"));
    // a table of its own rather than the migrations (test/process/dump.test.ts restores those): a
    // row over several lines, one of which looks like a line the rewrite drops from the head
    const db = await openDatabase({ dataDir, embeddedCacheMb: 16 });
    await db.pglite?.exec("CREATE TABLE notes (id serial PRIMARY KEY, body text)");
    await db.pglite?.query("INSERT INTO notes (body) VALUES ($1), ('two'), ('three')", ["first\nSET transaction_timeout = 0;\n\\restrict x"]);
    await db.close();
    const big = Buffer.alloc(2.5 * 1024 * 1024, 7);
    big.write("start", 0);
    await mkdir(path.join(dataDir, "blobs", "media", "app"), { recursive: true });
    await writeFile(path.join(dataDir, "blobs", "media", "app", "logo.png"), big);
    await writeFile(path.join(dataDir, "blobs", "empty"), "");
    await writeFile(path.join(dataDir, "blobs", "empty.123.456.tmp"), "half-written");

    const file = path.join(dataDir, "out.sql");
    expect(await dumpEmbedded({ dataDir, embeddedCacheMb: 16 }, file)).toEqual({ blobs: 2 });
    const sql = await readFile(file, "utf8");
    expect(sql.split("\n-- Name: ")[0]).toContain("SET lock_timeout = 0;");
    expect(sql.split("\n-- Name: ")[0]).not.toContain("transaction_timeout");
    expect(sql).not.toMatch(/OWNER TO|^GRANT /m);
    expect(sql).toContain("CREATE TABLE public.notes");
    expect(sql).toContain(
      "COPY public.notes (id, body) FROM stdin;\n1\tfirst\\nSET transaction_timeout = 0;\\n\\\\restrict x\n2\ttwo\n3\tthree\n\\.\n",
    );
    expect(sql).toContain("SELECT pg_catalog.setval('public.notes_id_seq', 3, true);");
    // the embedded database is closed again: a server may start on it
    expect(cannotDump(dataDir)).toBeUndefined();

    // the last COPY of each: the blob files (the database's own tables are empty on the embedded database)
    const copy = (table: string) => sql.split(`COPY public.${table} `).at(-1)!.split("\n\\.\n")[0]!.split("\n").slice(1);
    expect(copy("blobs").map((row) => row.split("\t").slice(0, 2))).toEqual([
      ["empty", "0"],
      ["media/app/logo.png", String(big.length)],
    ]);
    const chunks = copy("blob_chunks").map((row) => row.split("\t"));
    expect(chunks.map(([key, seq, data]) => [key, seq, data!.slice(0, 3)])).toEqual([
      ["empty", "0", "\\\\x"],
      ["media/app/logo.png", "0", "\\\\x"],
      ["media/app/logo.png", "1", "\\\\x"],
      ["media/app/logo.png", "2", "\\\\x"],
    ]);
    const bytes = Buffer.concat(chunks.slice(1).map(([, , data]) => Buffer.from(data!.slice(3), "hex")));
    expect(bytes.equals(big)).toBe(true);
    expect(chunks[1]![2]!.length).toBe(3 + 2 * 1024 * 1024);
  });
});
