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
 * file fields streamed to a temporary directory or handed as streams to their receivers (an object
 * store's upload), bounded by `maxFileBytes`, other files drained unread. Any limit passed is
 * refused (413), never a silent drop or truncation. A body that stops early (the client hangs up,
 * a stream fails) ends the read at once: the files are closed, what the receivers made dropped,
 * the directory removed and the promise rejected, so no descriptor, file or pending request is
 * left.
 */
interface UploadedFile {
  path: string;
  size: number;
  filename: string;
}

/** What a receiver made of a file part's bytes: dropped by `cleanup` unless the caller kept it. */
interface Received {
  drop(): Promise<void>;
}

/** A file part taken by its field's receiver, and the name the client gave it. */
interface ReceivedFile<R> {
  received: R;
  filename: string;
}

export interface Multipart<R extends Received = Received> {
  fields: Record<string, string>;
  files: Record<string, UploadedFile>;
  /** the parts of the `receivers`' fields */
  received: Record<string, ReceivedFile<R>>;
  cleanup(): Promise<void>;
}

export interface MultipartOptions<R extends Received = Received> {
  tempDir: string;
  fileFields: string[];
  /**
   * File fields whose bytes go to a receiver as they arrive rather than to a file; it resolves
   * once it has them all, and rejects when the stream fails (the body cut short, a limit passed).
   */
  receivers?: Record<string, (stream: Readable) => Promise<R>>;
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

export async function readMultipart<R extends Received = Received>(req: Request, options: MultipartOptions<R>): Promise<Multipart<R>> {
  const dir = await mkdtemp(path.join(options.tempDir, tempPrefix("upload")));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  if (!(req.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
    return { fields: {}, files: {}, received: {}, cleanup: removeDir };
  }
  try {
    const body = await parse(req, dir, options);
    const cleanup = async () => {
      await Promise.all(Object.values(body.received).map((file) => file.received.drop()));
      await removeDir();
    };
    return { ...body, cleanup };
  } catch (error) {
    await removeDir();
    throw error;
  }
}

/** Resolves once the stream has let go of its file descriptor. */
async function closed(stream: WriteStream): Promise<void> {
  if (!stream.closed) await once(stream, "close").catch(() => {});
}

function parse<R extends Received>(
  req: Request,
  dir: string,
  options: MultipartOptions<R>,
): Promise<Pick<Multipart<R>, "fields" | "files" | "received">> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: Record<string, UploadedFile> = {};
    const received: Record<string, ReceivedFile<R>> = {};
    const receivers = options.receivers ?? {};
    const incoming: Readable[] = [];
    const outputs: WriteStream[] = [];
    const written: Promise<void>[] = [];
    /** the receivers' work, settled before a failure is answered (what they made is dropped) */
    const receiving: Promise<unknown>[] = [];
    const receivedNames = new Set<string>();
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
      const receiversDone = Promise.allSettled(receiving).then(() => Promise.all(Object.values(received).map((file) => file.received.drop())));
      void Promise.all([...outputs.map(closed), receiversDone.catch(() => {})]).then(() => reject(error));
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
      if (!settled && Object.hasOwn(receivers, name) && !receivedNames.has(name)) return receive(name, stream, info.filename ?? "");
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
    const receive = (name: string, stream: Readable, filename: string) => {
      receivedNames.add(name);
      stream.on("limit", () => fail(tooLarge(`The uploaded file is larger than ${options.maxFileBytes} bytes.`)));
      const done = receivers[name]!(stream).then((made) => {
        received[name] = { received: made, filename };
      });
      receiving.push(done);
      // a receiver that gives up (the store refusing) ends the read at once: no one else reads its stream
      done.catch(fail);
      written.push(done);
    };
    parser.on("error", () => fail(malformed()));
    parser.on("close", () => {
      if (settled) return;
      Promise.all(written).then(
        () => {
          if (settled) return;
          settled = true;
          resolve({ fields, files, received });
        },
        (error: unknown) => fail(error),
      );
    });
    req.pipe(parser);
  });
}
