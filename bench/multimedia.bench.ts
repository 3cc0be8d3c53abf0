/**
 * Part 5, multimedia: a generated archive of many media entries (500 MB / 5,000 entries; quick:
 * 50 MB / 500) processed by the real ZIP processor, beside `unzip -t` on the same file in the same
 * run; throughput and peak RSS. The archive is built, and processed, each in a child process of its
 * own, so that the peak RSS is the processor's alone.
 *   modes (internal): --build FILE ENTRIES | --measure FILE ENTRIES
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import yazl from "yazl";
import type { Reference } from "../src/apps/references.ts";
import { processArchive } from "../src/multimedia/zip-processor.ts";
import { log, table, type PartResult } from "./lib/harness.ts";
import { clock, ratio } from "./lib/stats.ts";

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
  const { result } = await processArchive(file, references, { maxEntryBytes: 2 ** 30, maxTotalBytes: 2 ** 40, maxRatio: 1000 }, dir, {
    progress: async () => {},
    store: async () => `file-${stored++}`,
    stopping: () => false,
  });
  const ms = clock() - start;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  process.stdout.write(JSON.stringify({ ms, peakRss, matched: result.matched_count }));
}

const child = (...args: string[]) =>
  execFileSync(process.execPath, ["--import", "tsx", import.meta.filename, ...args], { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20 }).toString();

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

    const markdown = [
      `### Multimedia archive: ${mb.toFixed(0)} MB, ${entries.toLocaleString("en")} entries (one in ten deflated)`,
      "",
      table(["Measure", "Ours", "`unzip -t`", "Ours ÷ unzip (throughput)"], [
        ["Throughput (MB/s)", (mb / (ours.ms / 1000)).toFixed(0), (mb / (unzipMs / 1000)).toFixed(0), ratio(unzipMs / ours.ms)],
        ["Peak RSS (MB)", (ours.peakRss / 2 ** 20).toFixed(0), "—", "—"],
      ]),
      "",
      "Ours: the job's processor in a process of its own (stream each entry, hash sha256 and md5, sniff the content, match), progress and storage stubbed.",
    ].join("\n");
    return { markdown, figures: { throughputRatio: unzipMs / ours.ms, peakRssMb: ours.peakRss / 2 ** 20 } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const mode = process.argv[2];
if (process.argv[1] === import.meta.filename && (mode === "--build" || mode === "--measure")) {
  const [file, entries] = [process.argv[3], Number(process.argv[4])];
  if (mode === "--build") await buildArchive(file, entries);
  else await measure(file, entries);
}
