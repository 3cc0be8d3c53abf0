import { randomFillSync } from "node:crypto";
import { createWriteStream, openAsBlob } from "node:fs";
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import yazl from "yazl";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";

/**
 * CONTRACT §4 "memory stays bounded (streaming)", measured on a real server process: an archive
 * of about 1 GB in 2,000 entries of random bytes (40 of them over the 1 MiB in-memory limit, so
 * they spool to disk) is uploaded and processed, and the server's peak RSS over that time stays
 * within a fixed allowance above its RSS when idle.
 *
 * Why above idle, not an absolute figure: the embedded database (PGlite) lives in the server
 * process and its size varies with the machine, so the peak is reset (/proc/<pid>/clear_refs) once
 * the server is idle and the growth from there is what is bounded. The server runs as npm start
 * runs it (scripts/start.sh): without its one malloc arena (glibc's arenas per thread kept what
 * they had held) the growth was 230-275 MB.
 * On PostgreSQL (TEST_DATABASE_URL) the same archive goes into the database's chunked blob store.
 */

/**
 * What the upload and the job may add to the idle server's RSS, whatever the archive's size.
 * Measured (2026-11-26, 2-core machine): +71 to +74 MB embedded (idle 330-340 MB, peak 400-410 MB);
 * +157 to +224 MB on PostgreSQL, where every byte also passes
 * through the blob store's chunk queries twice (the archive in and out, the matched media in) as
 * short-lived hex strings that V8 collects late. Bounded, not proportional to the 1 GB.
 */
const GROWTH_LIMIT_MB = usingPostgres() ? 300 : 200;
const ENTRIES = 2000;
const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
/** a PNG signature and IHDR chunk: every media entry sniffs as an image */
const PNG_HEAD = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010800000000", "hex");
const KiB = 1024;
const MiB = 1024 * KiB;

type Kind = "matched" | "unmatched" | "skipped";

interface PlannedEntry {
  name: string;
  size: number;
  kind: Kind;
}

/** Entry i: every 50th is large (1.5 to 6 MiB), the others 64 to 800 KiB; some unmatched or not media. */
function plan(): PlannedEntry[] {
  return Array.from({ length: ENTRIES }, (_, i) => {
    const size = i % 50 === 0 ? 1.5 * MiB + ((i / 50) % 10) * 0.5 * MiB : 64 * KiB + ((i * 7919) % 733) * KiB;
    if (i % 100 === 3) return { name: `notes/n${i}.txt`, size, kind: "skipped" };
    if (i % 20 === 7) return { name: `extra/u${i}.png`, size, kind: "unmatched" };
    return { name: `commcare/image/m${i}.png`, size, kind: "matched" };
  });
}

/** `size` bytes produced 64 KiB at a time: a header that fixes the entry's type, then random bytes. */
function entryContent(entry: PlannedEntry): Readable {
  const head = entry.kind === "skipped" ? Buffer.from("plain notes, not media\n") : PNG_HEAD;
  let left = entry.size;
  return new Readable({
    read() {
      if (left === 0) return void this.push(null);
      const chunk = randomFillSync(Buffer.allocUnsafe(Math.min(64 * KiB, left)));
      if (left === entry.size) head.copy(chunk);
      left -= chunk.length;
      this.push(chunk);
    },
  });
}

/** Streams the planned archive (stored entries) to `file`, holding one chunk at a time. */
async function writeArchive(file: string, entries: PlannedEntry[]): Promise<void> {
  const archive = new yazl.ZipFile();
  for (const entry of entries) {
    archive.addReadStreamLazy(entry.name, { compress: false, size: entry.size }, (done) => done(null, entryContent(entry)));
  }
  archive.end();
  await pipeline(archive.outputStream, createWriteStream(file));
}

async function call(url: string, pathname: string, init: RequestInit = {}) {
  const res = await fetch(`${url}${pathname}`, { ...init, headers: { Authorization: ADMIN, ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any };
}

/** A domain and an app referring to every matched entry; returns the app id. */
async function prepareApp(url: string, entries: PlannedEntry[]): Promise<string> {
  const domain = await call(url, "/graphql", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query: 'mutation { createDomain(name: "demo") { id } }' }),
  });
  expect(domain.body.errors).toBeUndefined();
  const icons = entries.filter((e) => e.kind === "matched").map((e) => ({ icon: `jr://file/${e.name}` }));
  const form = new FormData();
  form.append("app_file", new Blob([JSON.stringify({ doc_type: "Application", modules: icons })]), "app.json");
  form.append("app_name", "Large media");
  const res = await call(url, "/a/demo/apps/api/import_app/", { method: "POST", body: form });
  expect(res.status).toBe(201);
  return res.body.app_id;
}

/** Uploads the archive from disk (the request body streams from the file). */
async function uploadArchive(url: string, appId: string, file: string): Promise<string> {
  const form = new FormData();
  form.append("bulk_upload_file", await openAsBlob(file, { type: "application/zip" }), "media.zip");
  const res = await call(url, `/a/demo/apps/api/${appId}/multimedia/`, { method: "POST", body: form });
  expect(res.status).toBe(200);
  return res.body.processing_id;
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A process's resident set now (VmRSS) and its peak since start or the last reset (VmHWM), in MB. */
async function rssMb(pid: number): Promise<{ now: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status)?.[1]) / 1024;
  return { now: field("VmRSS"), peak: field("VmHWM") };
}

/** Makes the process's peak RSS start again from its current RSS (Linux: clear_refs 5). */
async function resetPeakRss(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, "5");
}

describe("a 1 GB archive on a real server process", () => {
  let dir: string;
  let server: ServerProcess | undefined;
  let db: Database | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gateway-large-"));
    if (usingPostgres()) db = await freshDatabase();
  });
  afterAll(async () => {
    await server?.stop("SIGKILL");
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(`is processed completely while the server grows by less than ${GROWTH_LIMIT_MB} MB`, { timeout: 240_000 }, async () => {
    const entries = plan();
    const archive = path.join(dir, "large.zip");
    await writeArchive(archive, entries);
    expect((await stat(archive)).size).toBeGreaterThan(950_000_000);

    const dataDir = path.join(dir, "data");
    server = await startServer({
      DATA_DIR: dataDir,
      ...(db?.url ? { DATABASE_URL: db.url } : {}),
      BOOTSTRAP_ADMIN: "admin:admin-pass",
      UPLOAD_LIMIT_BYTES: String(2 * 1024 * MiB),
    });
    const pid = server.child.pid!;
    const appId = await prepareApp(server.url, entries);
    await resetPeakRss(pid);
    const idle = (await rssMb(pid)).now;

    const id = await uploadArchive(server.url, appId, archive);
    await rm(archive);
    const done = await until(
      async () => {
        const status = await call(server!.url, `/a/demo/apps/api/${appId}/multimedia/status/${id}/`);
        if (status.status !== 200) throw new Error(`status answered ${status.status}: ${JSON.stringify(status.body)}`);
        return status.body.complete ? status.body : undefined;
      },
      180_000,
      "the job to complete",
    );
    const { peak } = await rssMb(pid);

    const count = (kind: Kind) => entries.filter((e) => e.kind === kind).length;
    expect(done).toMatchObject({
      progress: { percent: 100, current: ENTRIES, total: ENTRIES },
      matched_count: count("matched"),
      unmatched_count: count("unmatched"),
      total_files: ENTRIES,
      processed_files: ENTRIES,
      image_count: count("matched"),
      audio_count: 0,
      video_count: 0,
    });
    expect(done.skipped_files).toHaveLength(count("skipped"));
    const large = entries.filter((e) => e.kind === "matched" && e.size > MiB);
    expect(large.length).toBeGreaterThan(20);
    const sizes = new Map(done.matched_files.AppImage.map((f: { original_path: string; size: number }) => [f.original_path, f.size]));
    for (const e of large) expect(sizes.get(e.name)).toBe(e.size);

    console.info(`1 GB archive: server RSS idle ${idle.toFixed(0)} MB, peak during upload and job ${peak.toFixed(0)} MB`);
    expect(peak - idle).toBeLessThan(GROWTH_LIMIT_MB);
    // no upload or spooled entry is left behind once the job is done (the embedded store's temporary files are all there)
    const leftovers = () => readdir(path.join(dataDir, "tmp"));
    await until(async () => ((await leftovers()).length === 0 ? true : undefined), 10_000, "the server's temporary files to go").catch(() => {});
    expect(await leftovers()).toEqual([]);
  });
});
