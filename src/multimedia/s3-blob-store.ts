import { createReadStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { Readable, Transform } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { ObjectStoreConfig } from "../config.ts";
import { objectStoreUnavailable } from "../errors.ts";
import { log } from "../log.ts";
import { SourceReadError, type ByteSource } from "./archive/byte-source.ts";
import { safeKey, type BlobStore, type ByteRange, type StagedBlob } from "./blob-store.ts";

/**
 * Archives and media in an S3-compatible object store (CONTRACT §7.6, BLOB_STORE_URL): uploads
 * stream into it as multipart uploads, archives are read back by ranged GETs (the upload check and
 * the processor never make a local copy), downloads stream from it, and GraphQL hands out
 * pre-signed GET URLs. Credentials come from the AWS SDK's standard chain (AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, a profile, an instance role). Nothing of an archive or a media file is
 * kept in the database or on local disk: an upload holds at most UPLOAD_QUEUE_PARTS parts of
 * UPLOAD_PART_BYTES in memory, a large archive entry is spooled under DATA_DIR/tmp while it is
 * hashed (at most ZIP_MAX_ENTRY_BYTES, one entry at a time), then stored and removed.
 */

/** The smallest part S3 takes (the last one aside). */
const UPLOAD_PART_BYTES = 5 * 1024 * 1024;
/** Parts sent at once: an upload holds at most this many parts in memory. */
const UPLOAD_QUEUE_PARTS = 2;

/** The store refused or could not be reached: a 503 the client may retry, logged once here (never a 500 with a stack). */
function storeFailure(error: unknown, action: string): Error {
  const code = error instanceof S3ServiceException ? error.name : ((error as { code?: string }).code ?? (error as Error).name);
  log.error("object store request failed", { action, code, message: (error as Error).message });
  return objectStoreUnavailable(code);
}

/** Whether the store answered that the object does not exist. */
function isMissing(error: unknown): boolean {
  const name = (error as { name?: string }).name;
  return name === "NotFound" || name === "NoSuchKey" || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;
}

/** A stream that counts the bytes through it. */
function counter(): Transform & { bytes: number } {
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      counted.bytes += chunk.length;
      done(null, chunk);
    },
  });
  const counted = Object.assign(transform, { bytes: 0 });
  return counted;
}

export class S3BlobStore implements BlobStore {
  readonly spoolsLocally = false;
  readonly storesAtOnce = 4;
  private readonly client: S3Client;

  constructor(
    private readonly settings: ObjectStoreConfig,
    /** where a large archive entry is spooled while it is hashed */
    private readonly tempRoot: string,
  ) {
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      // checksums only where S3 requires them: every S3-compatible store accepts that
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  private objectKey(key: string): string {
    return this.settings.prefix + safeKey(key);
  }

  /** Runs one request; the store's refusal becomes a 503 (see storeFailure). */
  private async request<T>(action: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw storeFailure(error, action);
    }
  }

  /** Uploads `body` under `key` as a multipart upload (a single PUT when it is small): its size. */
  async putStream(key: string, body: Readable): Promise<number> {
    const counted = counter();
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: this.objectKey(key), Body: body.pipe(counted) },
      partSize: UPLOAD_PART_BYTES,
      queueSize: UPLOAD_QUEUE_PARTS,
      // a failed upload aborts its multipart upload: no parts left behind to pay for
      leavePartsOnError: false,
    });
    // the source failing (a client hanging up) fails the upload too
    body.once("error", (error) => counted.destroy(error));
    body.once("close", () => !body.readableEnded && counted.destroy(new Error("the upload ended before it was complete")));
    try {
      await upload.done();
    } catch (error) {
      if (body.destroyed && !body.readableEnded) throw error instanceof Error ? error : new Error(String(error));
      throw storeFailure(error, "upload");
    }
    return counted.bytes;
  }

  /** The upload goes straight to its key; dropping it deletes the object. */
  async stage(key: string, source: Readable): Promise<StagedBlob> {
    const size = await this.putStream(key, source);
    let kept = false;
    return {
      key,
      size,
      open: async () => this.source(key, size),
      keep: async () => {
        kept = true;
      },
      drop: async () => {
        if (!kept) await this.delete(key);
      },
    };
  }

  async putFile(key: string, file: string): Promise<void> {
    await this.putStream(key, createReadStream(file));
    await rm(file, { force: true });
  }

  async putBuffer(key: string, data: Buffer): Promise<void> {
    await this.request("put", () => this.client.send(new PutObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key), Body: data })));
  }

  /** The object's size, or null when there is none. */
  async size(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isMissing(error)) return null;
      throw storeFailure(error, "head");
    }
  }

  async open(key: string): Promise<ByteSource | null> {
    const size = await this.size(key);
    return size === null ? null : this.source(key, size);
  }

  /** An object of `size` bytes read by ranged GETs. */
  private source(key: string, size: number): ByteSource {
    const get = (start: number, end: number, signal?: AbortSignal) =>
      this.client
        .send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key), Range: `bytes=${start}-${end - 1}` }), {
          abortSignal: signal,
        })
        .then((answer) => answer.Body as Readable)
        .catch((error: unknown) => {
          storeFailure(error, "ranged read");
          throw new SourceReadError(`the object store did not return bytes ${start}-${end - 1} of ${key}`, { cause: error });
        });
    return {
      size,
      sizeNow: () => size,
      async read(buffer, offset, length, position) {
        const end = Math.min(size, position + length);
        if (end <= position) return 0;
        let filled = 0;
        for await (const chunk of await get(position, end)) {
          filled += (chunk as Buffer).copy(buffer, offset + filled);
        }
        return filled;
      },
      stream(start, end) {
        const abort = new AbortController();
        async function* range() {
          if (end <= start) return;
          const body = await get(start, end, abort.signal);
          try {
            yield* body;
          } finally {
            body.destroy();
          }
        }
        const stream = Readable.from(range(), { objectMode: false });
        // a reader letting go early (an entry refused half-way) ends the request too
        stream.once("close", () => abort.abort());
        return stream;
      },
      close: async () => {},
    };
  }

  async stream(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.settings.bucket,
          Key: this.objectKey(key),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      return answer.Body as Readable;
    } catch (error) {
      if (isMissing(error)) return null;
      throw storeFailure(error, "get");
    }
  }

  async has(key: string): Promise<boolean> {
    return (await this.size(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    await this.request("delete", () => this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) })));
  }

  async *keys(): AsyncIterable<string> {
    const { bucket, prefix } = this.settings;
    for (let token: string | undefined; ; ) {
      const page = await this.request("list", () =>
        this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix || undefined, ContinuationToken: token })),
      );
      for (const object of page.Contents ?? []) if (object.Key) yield object.Key.slice(prefix.length);
      if (!page.IsTruncated || !page.NextContinuationToken) return;
      token = page.NextContinuationToken;
    }
  }

  /**
   * A pre-signed GET valid for S3_PRESIGN_SECONDS. The store serves it with the file's type and as
   * an attachment: a stored file is whatever a member uploaded, and a browser opening the URL
   * should save it rather than render it (an image or a video element still plays it).
   */
  async downloadUrl(key: string, contentType: string): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.settings.bucket,
      Key: this.objectKey(key),
      ResponseContentType: contentType,
      ResponseContentDisposition: "attachment",
    });
    return getSignedUrl(this.client, command, { expiresIn: this.settings.presignSeconds });
  }

  /**
   * Readiness: the store answers, with these credentials, for this bucket. A HEAD of a key that is
   * never written: "not found" proves both (a wrong secret or an unknown bucket is refused first).
   */
  async check(): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: `${this.settings.prefix}.readiness` }));
      return true;
    } catch (error) {
      return isMissing(error) && (error as { name?: string }).name !== "NoSuchBucket";
    }
  }

  async tempDir(): Promise<string> {
    await mkdir(this.tempRoot, { recursive: true });
    return this.tempRoot;
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
