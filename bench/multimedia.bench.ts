/**
 * Multimedia benchmark (npm run bench:multimedia [-- --quick]): processes a generated archive of
 * many media entries (500 MB / 5,000 entries; quick: 50 MB / 500) through the real ZIP processor,
 * beside `unzip -t` on the same file in the same run, and records throughput and peak RSS.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { appendFile, mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import yazl from "yazl";
import type { Reference } from "../src/apps/references.ts";
import { processArchive } from "../src/multimedia/zip-processor.ts";

const QUICK = process.argv.includes("--quick");
const ENTRIES = QUICK ? 500 : 5000;
const ENTRY_BYTES = 100 * 1024;
const ROOT = path.resolve(import.meta.dirname, "..");
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

async function buildArchive(file: string): Promise<void> {
  const zip = new yazl.ZipFile();
  const noise = randomBytes(ENTRY_BYTES);
  for (let i = 0; i < ENTRIES; i++) {
    // Mostly incompressible content, made unique per entry; every tenth entry deflated.
    const body = Buffer.concat([PNG, Buffer.from(String(i).padStart(8, "0")), noise.subarray(0, ENTRY_BYTES - 24)]);
    zip.addBuffer(body, `commcare/image/f${i}.png`, { compress: i % 10 === 0 });
  }
  zip.end();
  await new Promise<void>((resolve, reject) => {
    zip.outputStream.pipe(createWriteStream(file)).on("finish", resolve).on("error", reject);
  });
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-media-"));
  const file = path.join(dir, "media.zip");
  // Built in a child process: yazl holds every buffer until written, which would count in this
  // process's RSS and slow its collector.
  execFileSync(process.execPath, ["--import", "tsx", import.meta.filename, "--build", file, ...(QUICK ? ["--quick"] : [])], { stdio: "inherit" });
  const { size } = await stat(file);
  const mb = size / 2 ** 20;

  const unzipStart = performance.now();
  execFileSync("unzip", ["-tqq", file]);
  const unzipMs = performance.now() - unzipStart;

  const references: Reference[] = Array.from({ length: ENTRIES }, (_, i) => ({ path: `jr://file/commcare/image/f${i}.png`, mediaType: "image" }));
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  let stored = 0;
  const start = performance.now();
  const { result } = await processArchive(file, references, { maxEntryBytes: 2 ** 30, maxTotalBytes: 2 ** 40, maxRatio: 1000 }, dir, {
    progress: async () => {},
    store: async () => `file-${stored++}`,
    stopping: () => false,
  });
  const ms = performance.now() - start;
  clearInterval(sampler);
  if (result.matched_count !== ENTRIES) throw new Error(`matched ${result.matched_count} of ${ENTRIES}`);
  await rm(dir, { recursive: true, force: true });

  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  const lines = [
    `## Multimedia archive${QUICK ? " (quick)" : ""}`,
    "",
    `${new Date().toISOString().slice(0, 10)}, ${cpu}, ${os.cpus().length} cores, Node ${process.version}. Archive: ${mb.toFixed(0)} MB, ${ENTRIES.toLocaleString("en")} entries (one in ten deflated).`,
    "",
    "| Measure | Ours | `unzip -t` | Ours ÷ unzip (throughput) |",
    "|---|---|---|---|",
    `| Throughput (MB/s) | ${(mb / (ms / 1000)).toFixed(0)} | ${(mb / (unzipMs / 1000)).toFixed(0)} | ${(unzipMs / ms).toFixed(2)} |`,
    `| Peak RSS (MB) | ${(peakRss / 2 ** 20).toFixed(0)} | — | — |`,
    "",
    "Ours: the job's processor (stream each entry, hash sha256 and md5, sniff content, match), progress and storage stubbed.",
    "",
  ];
  console.log(lines.join("\n"));
  await appendFile(path.join(ROOT, "bench", "RESULTS.md"), `${lines.join("\n")}\n`);
}

const buildTarget = process.argv.indexOf("--build");
if (buildTarget >= 0) await buildArchive(process.argv[buildTarget + 1]);
else await main();
