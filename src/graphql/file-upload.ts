import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FileUpload } from "graphql-upload-ts";
import { tempPrefix } from "../util/temp-entries.ts";

/**
 * A GraphQL multipart upload (the request spec's `Upload` scalar) saved to a temporary file for a
 * service that reads files, as the REST multipart reader does; the file is removed afterwards.
 */
export async function withUpload<T>(
  tempDir: string,
  upload: Promise<FileUpload>,
  run: (file: { path: string; size: number; filename: string }) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(tempDir, tempPrefix("gql-upload")));
  try {
    const file = path.join(dir, "upload");
    const received = await upload;
    await pipeline(received.createReadStream(), createWriteStream(file));
    return await run({ path: file, size: (await stat(file)).size, filename: received.filename });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A GraphQL multipart upload handed as a stream to `receive` (an object store's upload, say), and
 * what it made of it to `run`; dropped afterwards unless `run` kept it.
 */
export async function withReceivedUpload<R extends { drop(): Promise<void> }, T>(
  upload: Promise<FileUpload>,
  receive: (stream: Readable) => Promise<R>,
  run: (received: R, filename: string) => Promise<T>,
): Promise<T> {
  const file = await upload;
  const received = await receive(file.createReadStream());
  try {
    return await run(received, file.filename);
  } finally {
    await received.drop();
  }
}
