import type { BlobStore } from "./blob-store.ts";
import type { S3BlobStore } from "./s3-blob-store.ts";

/**
 * The move of stored archives and media from today's storage (DATA_DIR/blobs, or the `blobs` and
 * `blob_chunks` tables) into an object store (CONTRACT §7.6), for `npm run blobs:migrate`. Each
 * blob is one upload: it is in the store whole or not at all. A blob the store already holds with
 * the same size is left as it is, so the move can be run again after an interruption, or once
 * more after the server is stopped, and only copies what is missing.
 */

export interface MoveCounts {
  /** blobs uploaded to the store */
  copied: number;
  /** blobs the store already held (with the same size) */
  present: number;
  /** blobs removed from the source once the store held them (`deleteSource`) */
  deleted: number;
}

export interface MoveOptions {
  /** remove each blob from the source once the store holds it */
  deleteSource: boolean;
  /** told of every blob as it is done */
  onBlob?: (key: string, outcome: "copied" | "present") => void;
}

export async function moveBlobs(source: BlobStore, target: S3BlobStore, options: MoveOptions): Promise<MoveCounts> {
  const counts: MoveCounts = { copied: 0, present: 0, deleted: 0 };
  // keys are listed first: deleting while a listing pages through the same table would skip some
  const keys: string[] = [];
  for await (const key of source.keys()) keys.push(key);
  for (const key of keys) {
    const size = await source.size(key);
    if (size === null) continue; // gone since it was listed
    const outcome = (await target.size(key)) === size ? "present" : await copy(source, target, key, size);
    counts[outcome] += 1;
    options.onBlob?.(key, outcome);
    if (options.deleteSource) {
      await source.delete(key);
      counts.deleted += 1;
    }
  }
  return counts;
}

async function copy(source: BlobStore, target: S3BlobStore, key: string, size: number): Promise<"copied"> {
  const stream = await source.stream(key);
  if (!stream) throw new Error(`blob ${key} vanished while it was copied`);
  const written = await target.putStream(key, stream);
  if (written !== size) throw new Error(`blob ${key}: ${written} bytes reached the store, the source holds ${size}`);
  return "copied";
}
