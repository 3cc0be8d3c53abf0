import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { Request } from "express";
import busboy from "busboy";
import { DomainError, badInput } from "../errors.ts";
import { tempPrefix } from "../util/temp-entries.ts";

/**
 * A multipart/form-data body read with busboy: text fields in memory (bounded in total), the named
 * file fields streamed to a temporary directory (bounded by `maxFileBytes`), other files drained
 * unread. Any limit passed is refused (413), never a silent drop or truncation. A body that stops
 * early (the client hangs up, a stream fails) ends the read at once: the files are closed, the
 * directory removed and the promise rejected, so no descriptor, file or pending request is left.
 */
interface UploadedFile {
  path: string;
  size: number;
  filename: string;
}

export interface Multipart {
  fields: Record<string, string>;
  files: Record<string, UploadedFile>;
  cleanup(): Promise<void>;
}

export interface MultipartOptions {
  tempDir: string;
  fileFields: string[];
  maxFileBytes: number;
  /** the text fields' names and values together (BODY_LIMIT_BYTES: "largest JSON or form body") */
  maxFieldBytes: number;
}

/** Far above what any form of the API sends, low enough to bound what one body costs. */
const MULTIPART_MAX_FIELDS = 100;
const MULTIPART_MAX_FILES = 20;

const malformed = () => badInput("Malformed multipart body.");
const tooLarge = (message: string) => new DomainError("PAYLOAD_TOO_LARGE", message);
const cutShort = () => badInput("The request body ended before it was complete.");

export async function readMultipart(req: Request, options: MultipartOptions): Promise<Multipart> {
  const dir = await mkdtemp(path.join(options.tempDir, tempPrefix("upload")));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  if (!(req.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
    return { fields: {}, files: {}, cleanup };
  }
  try {
    return { ...(await parse(req, dir, options)), cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** Resolves once the stream has let go of its file descriptor. */
async function closed(stream: WriteStream): Promise<void> {
  if (!stream.closed) await once(stream, "close").catch(() => {});
}

function parse(req: Request, dir: string, options: MultipartOptions): Promise<Pick<Multipart, "fields" | "files">> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: Record<string, UploadedFile> = {};
    const incoming: Readable[] = [];
    const outputs: WriteStream[] = [];
    const written: Promise<void>[] = [];
    let fieldBytes = 0;
    let settled = false;
    let parser: busboy.Busboy | undefined;

    /** Stops reading, closes every file (awaited, so that the directory can go), then rejects. */
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      if (parser) req.unpipe(parser);
      // what the client still sends is read and dropped, so that it can read the answer
      if (!req.destroyed) req.resume();
      for (const stream of incoming) stream.destroy();
      for (const out of outputs) out.destroy();
      parser?.destroy();
      void Promise.all(outputs.map(closed)).then(() => reject(error));
    };

    // the client hung up before the body ended (a request already gone never starts)
    if (req.destroyed) return fail(cutShort());
    req.once("close", () => !req.complete && fail(cutShort()));
    req.once("error", () => fail(cutShort()));

    try {
      parser = busboy({
        headers: req.headers,
        limits: {
          fileSize: options.maxFileBytes,
          fieldSize: options.maxFieldBytes,
          fields: MULTIPART_MAX_FIELDS,
          // the parts are bounded by these two
          files: MULTIPART_MAX_FILES,
        },
      });
    } catch {
      return fail(malformed());
    }
    const fieldsTooLarge = () => tooLarge(`The form's text fields are larger than ${options.maxFieldBytes} bytes.`);
    parser.on("field", (name, value, info) => {
      fieldBytes += Buffer.byteLength(name) + Buffer.byteLength(value);
      if (info.valueTruncated || fieldBytes > options.maxFieldBytes) return fail(fieldsTooLarge());
      fields[name] = value;
    });
    parser.on("fieldsLimit", () => fail(tooLarge(`The form has more than ${MULTIPART_MAX_FIELDS} text fields.`)));
    parser.on("filesLimit", () => fail(tooLarge(`The form has more than ${MULTIPART_MAX_FILES} files.`)));
    parser.on("file", (name, stream, info) => {
      incoming.push(stream);
      // A body cut off inside a file part fails that file's stream too ("Unexpected end of
      // form"): without a listener that error would be uncaught and end the process.
      stream.on("error", () => fail(malformed()));
      if (settled || !options.fileFields.includes(name) || files[name]) return void stream.resume();
      const file = path.join(dir, `${Object.keys(files).length}-${name}`);
      const entry: UploadedFile = { path: file, size: 0, filename: info.filename ?? "" };
      files[name] = entry;
      const out = createWriteStream(file);
      outputs.push(out);
      stream.on("data", (chunk: Buffer) => (entry.size += chunk.length));
      stream.on("limit", () => fail(tooLarge(`The uploaded file is larger than ${options.maxFileBytes} bytes.`)));
      const finished = new Promise<void>((done, failed) => {
        out.on("finish", done);
        out.on("error", failed);
      });
      // awaited once busboy is done; an error after fail() (a write cut by destroy) has no one else to hear it
      finished.catch(() => {});
      written.push(finished);
      stream.pipe(out);
    });
    parser.on("error", () => fail(malformed()));
    parser.on("close", () => {
      if (settled) return;
      Promise.all(written).then(
        () => {
          if (settled) return;
          settled = true;
          resolve({ fields, files });
        },
        (error: unknown) => fail(error),
      );
    });
    req.pipe(parser);
  });
}
