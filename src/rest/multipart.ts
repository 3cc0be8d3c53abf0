import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import type { Request } from "express";
import busboy from "busboy";
import { DomainError, badInput } from "../errors.ts";

/**
 * A multipart/form-data body read with busboy: text fields in memory, the named file fields
 * streamed to a temporary directory (bounded by `maxFileBytes`), other files drained unread.
 */
export interface UploadedFile {
  path: string;
  size: number;
  filename: string;
}

export interface Multipart {
  fields: Record<string, string>;
  files: Record<string, UploadedFile>;
  cleanup(): Promise<void>;
}

export async function readMultipart(req: Request, options: { tempDir: string; fileFields: string[]; maxFileBytes: number }): Promise<Multipart> {
  const dir = await mkdtemp(path.join(options.tempDir, "upload-"));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  if (!(req.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
    return { fields: {}, files: {}, cleanup };
  }
  try {
    return await new Promise<Multipart>((resolve, reject) => {
      const fields: Record<string, string> = {};
      const files: Record<string, UploadedFile> = {};
      const writes: Promise<void>[] = [];
      let parser: busboy.Busboy;
      try {
        parser = busboy({ headers: req.headers, limits: { fileSize: options.maxFileBytes, fieldSize: 1024 * 1024, fields: 100, files: 20 } });
      } catch {
        return reject(badInput("Malformed multipart body."));
      }
      parser.on("field", (name, value) => (fields[name] = value));
      parser.on("file", (name, stream, info) => {
        // A body cut off inside a file part fails that file's stream too ("Unexpected end of
        // form"): without a listener that error would be uncaught and end the process.
        stream.on("error", () => reject(badInput("Malformed multipart body.")));
        if (!options.fileFields.includes(name) || files[name]) return void stream.resume();
        const file = path.join(dir, `${Object.keys(files).length}-${name}`);
        const entry: UploadedFile = { path: file, size: 0, filename: info.filename ?? "" };
        files[name] = entry;
        const out = createWriteStream(file);
        stream.on("error", () => out.destroy());
        stream.on("data", (chunk: Buffer) => (entry.size += chunk.length));
        stream.on("limit", () => reject(new DomainError("PAYLOAD_TOO_LARGE", `The uploaded file is larger than ${options.maxFileBytes} bytes.`)));
        writes.push(
          new Promise((done, fail) => {
            out.on("finish", done);
            out.on("error", fail);
          }),
        );
        stream.pipe(out);
      });
      parser.on("error", () => reject(badInput("Malformed multipart body.")));
      parser.on("close", () => void Promise.all(writes).then(() => resolve({ fields, files, cleanup }), reject));
      req.pipe(parser);
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
}
