/**
 * Part 5, multimedia: a generated archive of many media entries (500 MB / 5,000 entries; quick:
 * 50 MB / 500) processed by the real ZIP processor, beside `unzip -t` on the same file in the same
 * run; throughput and peak RSS. The archive is built, and processed, each in a child process of its
 * own, so that the peak RSS is the processor's alone. Then the upload of that archive: the
 * response time of POST {app_id}/multimedia/ to our service (which checks every member before
 * answering), and the member check alone, in a child process of its own. Then the S3 store
 * (BLOB_STORE_URL on @20minutes/s3rver, loopback): the same archive uploaded and processed by our
 * service against the same bytes put by the AWS SDK alone, into the same s3rver, in the same run.
 *   modes (internal): --build FILE ENTRIES | --measure FILE ENTRIES | --check FILE
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, openAsBlob } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import yazl from "yazl";
import type { Reference } from "../src/apps/references.ts";
import { checkArchive } from "../src/multimedia/archive/zip-check.ts";
import { processArchive } from "../src/multimedia/archive/zip-processor.ts";
import type { TestObjectStore } from "../test/helpers/object-store.ts";
import { log, startService, table, type PartResult, type Service } from "./lib/harness.ts";
import { clock, median, ratio } from "./lib/stats.ts";

const ENTRY_BYTES = 100 * 1024;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

async function buildArchive(file: string, entries: number): Promise<void> {
  const zip = new yazl.ZipFile();
  const noise = randomBytes(ENTRY_BYTES);
  for (let i = 0; i < entries; i++) {
    // Mostly incompressible content, made unique per entry; every tenth entry deflated.
    const body = Buffer.concat([PNG, Buffer.from(String(i).padStart(8, "0")), noise.subarray(0, ENTRY_BYTES - 24)]);
    zip.addBuffer(body, `commcare/image/f${i}.png`, { compress: i % 10 === 0 });
  }
  zip.end();
  await new Promise<void>((resolve, reject) => {
    zip.outputStream.pipe(createWriteStream(file)).on("finish", resolve).on("error", reject);
  });
}

/** The processor on the archive, progress and storage stubbed: elapsed ms and peak RSS. */
async function measure(file: string, entries: number): Promise<void> {
  const dir = path.dirname(file);
  const references: Reference[] = Array.from({ length: entries }, (_, i) => ({ path: `jr://file/commcare/image/f${i}.png`, mediaType: "image" }));
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  let stored = 0;
  const start = clock();
  const { result } = await processArchive(
    file,
    references,
    { maxEntryBytes: 2 ** 30, maxTotalBytes: 2 ** 40, maxRatio: 1000, ratioFloorBytes: 2 ** 40 },
    dir,
    {
      progress: async () => {},
      store: async () => `file-${stored++}`,
      stopping: () => false,
    },
  );
  const ms = clock() - start;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  process.stdout.write(JSON.stringify({ ms, peakRss, matched: result.matched_count }));
}

/** The upload-time member check (zip-check.ts) on the archive, the processor's limits: elapsed ms and peak RSS. */
async function measureCheck(file: string): Promise<void> {
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const start = clock();
  const check = await checkArchive(file, { maxEntryBytes: 2 ** 30, maxTotalBytes: 2 ** 40, maxRatio: 1000, ratioFloorBytes: 2 ** 40 });
  const ms = clock() - start;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  process.stdout.write(JSON.stringify({ ms, peakRss, state: check.state }));
}

/**
 * The archive uploaded to our service (PGlite, no worker: the job stays queued) as a client sends
 * it: ms from the request's start to the 200 with its processing id. The service receives the
 * body to a file, checks every member, stores the archive and queues the job before answering.
 */
async function measureUpload(file: string): Promise<number> {
  const service = await startService("pglite");
  try {
    return (await importAndUpload(service, "bench", { doc_type: "Application" }, file)).uploadMs;
  } finally {
    await service.stop();
  }
}

/**
 * An app imported from `app` into the service, then `file` uploaded as its multimedia: ms from
 * the upload's start to its 200, and the 200's body.
 */
async function importAndUpload(service: Service, name: string, app: object, file: string) {
  const { base, authorization, domain } = service.ready;
  const api = `${base}/a/${domain}/apps/api`;
  const source = new FormData();
  source.append("app_name", name);
  source.append("app_file", new Blob([JSON.stringify(app)]), "app.json");
  const imported = await fetch(`${api}/import_app/`, { method: "POST", headers: { Authorization: authorization }, body: source });
  if (imported.status !== 201) throw new Error(`import_app: ${imported.status} ${await imported.text()}`);
  const { app_id: appId } = (await imported.json()) as { app_id: string };
  const form = new FormData();
  form.append("bulk_upload_file", await openAsBlob(file, { type: "application/zip" }), "media.zip");
  const start = clock();
  const res = await fetch(`${api}/${appId}/multimedia/`, { method: "POST", headers: { Authorization: authorization }, body: form });
  const body = await res.text();
  const uploadMs = clock() - start;
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${body}`);
  return { api, appId, start, uploadMs, body };
}

/** Our service on the S3 store (PGlite, the multimedia worker on), given the store's settings. */
async function startS3Service(store: TestObjectStore) {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...config } = store.env();
  return startService("pglite", undefined, { config, workers: true });
}

/**
 * The archive uploaded to our service on the S3 store and processed there: ms from the request's
 * start to the 200, and to the job's completion (its status polled every 50 ms). Every entry is
 * referred to by the app, so every one is stored as an object of its own.
 */
async function measureS3UploadAndProcessing(store: TestObjectStore, file: string, entries: number): Promise<{ uploadMs: number; totalMs: number }> {
  const service = await startS3Service(store);
  try {
    const { authorization } = service.ready;
    const icons = Array.from({ length: entries }, (_, i) => ({ icon: `jr://file/commcare/image/f${i}.png` }));
    const { api, appId, start, uploadMs, body } = await importAndUpload(service, "bench-s3", { doc_type: "Application", modules: icons }, file);
    const { processing_id: id } = JSON.parse(body) as { processing_id: string };
    for (;;) {
      const status = await fetch(`${api}/${appId}/multimedia/status/${id}/`, { headers: { Authorization: authorization } });
      const job = (await status.json()) as { complete?: boolean; matched_count?: number };
      if (job.complete) {
        const totalMs = clock() - start;
        if (job.matched_count !== entries) throw new Error(`S3: the job ended ${JSON.stringify(job).slice(0, 300)}`);
        return { uploadMs, totalMs };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await service.stop();
  }
}

/** The same bytes put by the AWS SDK alone: the archive as one Upload (multipart, SDK defaults) under `key`. */
async function sdkPutArchive(client: S3Client, store: TestObjectStore, file: string, key: string): Promise<number> {
  const { Upload } = await import("@aws-sdk/lib-storage");
  const start = clock();
  await new Upload({ client, params: { Bucket: store.bucket, Key: key, Body: createReadStream(file) }, partSize: 5 * 2 ** 20 }).done();
  return clock() - start;
}

/**
 * What any design that keeps each media file as an object of its own puts at least: the archive,
 * then one PutObject per member (the members' count and size, fresh bytes), four at a time.
 */
async function sdkPutArchiveAndMembers(client: S3Client, store: TestObjectStore, file: string, entries: number): Promise<number> {
  const { PutObjectCommand } = await import("@aws-sdk/client-s3");
  const member = randomBytes(ENTRY_BYTES);
  const start = clock();
  await sdkPutArchive(client, store, file, "sdk/with-members.zip");
  let next = 0;
  const putter = async () => {
    for (let i = next++; i < entries; i = next++) {
      const body = Buffer.from(member);
      body.writeUInt32LE(i, 0);
      await client.send(new PutObjectCommand({ Bucket: store.bucket, Key: `sdk/members/f${i}.png`, Body: body }));
    }
  };
  await Promise.all([putter(), putter(), putter(), putter()]);
  return clock() - start;
}

/** The S3 comparison: SDK alone, ours, SDK alone again, then SDK with one object per member. */
async function s3Comparison(file: string, entries: number, mb: number): Promise<{ markdown: string; figures: Record<string, number> }> {
  // loaded here: the child processes that measure peak RSS must not carry the SDK or s3rver
  const { S3RVER_CREDENTIALS, startObjectStore } = await import("../test/helpers/object-store.ts");
  const { S3Client } = await import("@aws-sdk/client-s3");
  const store = await startObjectStore("media");
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  // the service's SDK takes its credentials from the standard chain, i.e. this environment
  Object.assign(process.env, S3RVER_CREDENTIALS);
  const client = new S3Client({
    region: "us-east-1",
    endpoint: store.endpoint,
    forcePathStyle: true,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  try {
    const sdk = [await sdkPutArchive(client, store, file, "sdk/first.zip")];
    const ours = await measureS3UploadAndProcessing(store, file, entries);
    sdk.push(await sdkPutArchive(client, store, file, "sdk/second.zip"));
    const sdkMembers = await sdkPutArchiveAndMembers(client, store, file, entries);
    const sdkMs = median(sdk);
    const markdown = [
      `### Multimedia on the S3 store (@20minutes/s3rver on loopback), the same archive`,
      "",
      table(
        ["Measure", "Time (ms)", "Throughput (MB/s)", "Ours ÷ SDK (time)"],
        [
          [
            "SDK alone: the archive as one multipart `Upload` (median of one before ours and one after)",
            sdkMs.toFixed(0),
            (mb / (sdkMs / 1000)).toFixed(0),
            "—",
          ],
          [
            "Ours: `POST {app_id}/multimedia/` answered (body streamed into the store, every member checked by ranged reads)",
            ours.uploadMs.toFixed(0),
            (mb / (ours.uploadMs / 1000)).toFixed(0),
            ratio(ours.uploadMs / sdkMs),
          ],
          [
            `Ours: upload + processing (every one of the ${entries.toLocaleString("en")} entries matched and stored as an object of its own)`,
            ours.totalMs.toFixed(0),
            (mb / (ours.totalMs / 1000)).toFixed(0),
            ratio(ours.totalMs / sdkMs),
          ],
          [
            `SDK alone: the archive, then ${entries.toLocaleString("en")} \`PutObject\`s of the members' size (4 at a time)`,
            sdkMembers.toFixed(0),
            (mb / (sdkMembers / 1000)).toFixed(0),
            `${ratio(ours.totalMs / sdkMembers)} (ours ÷ this)`,
          ],
        ],
      ),
      "",
      "s3rver runs in the benchmark's process; our service (PGlite, the worker on) in its own. Target: upload + processing within 1.5× of the SDK alone putting the archive.",
    ].join("\n");
    return {
      markdown,
      figures: { s3Ratio: ours.totalMs / sdkMs, s3UploadRatio: ours.uploadMs / sdkMs, s3MembersRatio: ours.totalMs / sdkMembers },
    };
  } finally {
    client.destroy();
    await store.close();
    for (const [name, value] of [
      ["AWS_ACCESS_KEY_ID", saved.id],
      ["AWS_SECRET_ACCESS_KEY", saved.secret],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

const child = (...args: string[]) =>
  execFileSync(process.execPath, ["--import", "tsx", import.meta.filename, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20,
  }).toString();

export async function multimedia(quick: boolean): Promise<PartResult> {
  const entries = quick ? 500 : 5000;
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-media-"));
  try {
    const file = path.join(dir, "media.zip");
    log(`  multimedia: building a ${entries.toLocaleString("en")}-entry archive`);
    child("--build", file, String(entries));
    const { size } = await stat(file);
    const mb = size / 2 ** 20;

    log("  multimedia: unzip -t, then our processor");
    // the file is in the page cache for both (it was just written); unzip -t reads it first
    const unzipStart = clock();
    execFileSync("unzip", ["-tqq", file]);
    const unzipMs = clock() - unzipStart;
    const ours = JSON.parse(child("--measure", file, String(entries))) as { ms: number; peakRss: number; matched: number };
    if (ours.matched !== entries) throw new Error(`matched ${ours.matched} of ${entries}`);

    log("  multimedia: the upload (POST {app_id}/multimedia/), then its member check alone");
    const uploadMs = await measureUpload(file);
    const check = JSON.parse(child("--check", file)) as { ms: number; peakRss: number; state: string };
    if (check.state !== "ok") throw new Error(`the upload check says ${check.state}`);

    log("  multimedia: the S3 store (s3rver): the SDK alone, then upload + processing, then the SDK again");
    const s3 = await s3Comparison(file, entries, mb);

    const markdown = [
      `### Multimedia archive: ${mb.toFixed(0)} MB, ${entries.toLocaleString("en")} entries (one in ten deflated)`,
      "",
      table(
        ["Measure", "Ours", "`unzip -t`", "Ours ÷ unzip (throughput)"],
        [
          ["Throughput (MB/s)", (mb / (ours.ms / 1000)).toFixed(0), (mb / (unzipMs / 1000)).toFixed(0), ratio(unzipMs / ours.ms)],
          ["Peak RSS (MB)", (ours.peakRss / 2 ** 20).toFixed(0), "—", "—"],
        ],
      ),
      "",
      "Ours: the job's processor in a process of its own (stream each entry, hash sha256 and md5, sniff the content, match), progress and storage stubbed.",
      "",
      table(
        ["Upload of the same archive", "Time (ms)", "Throughput (MB/s)", "Peak RSS (MB)"],
        [
          ["Response time of `POST {app_id}/multimedia/` (loopback, PGlite)", uploadMs.toFixed(0), (mb / (uploadMs / 1000)).toFixed(0), "—"],
          [
            "of which the member check (inflate + CRC-32 of every member), alone",
            check.ms.toFixed(0),
            (mb / (check.ms / 1000)).toFixed(0),
            (check.peakRss / 2 ** 20).toFixed(0),
          ],
        ],
      ),
      "",
      "The upload answers once the body is on disk and every member's data is checked (CONTRACT §4: a corrupt ZIP is 400); " +
        `the check alone runs at ${ratio(unzipMs / check.ms)} of \`unzip -t\`'s throughput.`,
      "",
      s3.markdown,
    ].join("\n");
    return {
      markdown,
      figures: { throughputRatio: unzipMs / ours.ms, peakRssMb: ours.peakRss / 2 ** 20, uploadMs, uploadCheckMs: check.ms, ...s3.figures },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const mode = process.argv[2];
if (process.argv[1] === import.meta.filename && (mode === "--build" || mode === "--measure" || mode === "--check")) {
  const [file, entries] = [process.argv[3], Number(process.argv[4])];
  if (mode === "--build") await buildArchive(file, entries);
  else if (mode === "--check") await measureCheck(file);
  else await measure(file, entries);
}
