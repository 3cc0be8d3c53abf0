/**
 * npm run blobs:migrate [-- --delete-source]   copies every stored archive and media file from
 * today's storage (DATA_DIR/blobs for the embedded database, the `blobs` tables on PostgreSQL
 * with DATABASE_URL) into the object store BLOB_STORE_URL names (CONTRACT §7.6). Idempotent and
 * resumable: what the store already holds is skipped. With --delete-source each blob is removed
 * from the old storage once the store holds it.
 */
import path from "node:path";
import { loadConfig } from "../src/config.ts";
import { DatabaseBlobStore, FileBlobStore, type BlobStore } from "../src/multimedia/blob-store.ts";
import { moveBlobs } from "../src/multimedia/blob-move.ts";
import { S3BlobStore } from "../src/multimedia/s3-blob-store.ts";

const USAGE = "usage: npm run blobs:migrate [-- --delete-source]";

let source: BlobStore | undefined;
let target: S3BlobStore | undefined;
try {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== "--delete-source");
  if (unknown.length) throw new Error(`unknown argument ${unknown[0]}; ${USAGE}`);
  const config = loadConfig();
  if (!config.objectStore) throw new Error("BLOB_STORE_URL is not set: it names the object store to move the files into");
  const tempRoot = path.join(config.dataDir, "tmp");
  source = config.databaseUrl ? new DatabaseBlobStore(config.databaseUrl, tempRoot) : new FileBlobStore(config.dataDir);
  target = new S3BlobStore(config.objectStore, tempRoot);
  const from = config.databaseUrl ? "the database's blobs tables" : `${config.dataDir}/blobs`;
  const counts = await moveBlobs(source, target, { deleteSource: args.includes("--delete-source") });
  const deleted = counts.deleted ? `, ${counts.deleted} removed from the source` : "";
  console.log(`blobs:migrate: from ${from}: ${counts.copied} copied, ${counts.present} already in the store${deleted}`);
  process.exitCode = 0;
} catch (error) {
  console.error(`blobs:migrate: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
} finally {
  await source?.close();
  await target?.close();
}
