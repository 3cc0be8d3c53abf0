import { once } from "node:events";
import { readdir, readlink } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import type { TestApp } from "./app.ts";

/**
 * Uploads that never finish (a client hanging up mid-body, on a raw socket) and what the server
 * keeps after them: the entries of its temporary directory and its open file descriptors (the
 * tests run the server in process, so /proc/self/fd is the server's).
 */

export const BOUNDARY = "----cut-off-boundary";

/** The start of a multipart body: one file part's headers (its data follows). */
export function filePartHead(field: string, filename = "upload.bin"): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
}

/**
 * Sends a POST whose Content-Length promises `declaredLength` bytes, writes `sent` of them, waits
 * for `before()` (e.g. until the server has spooled some of it), then destroys the socket.
 */
export async function hangUpMidBody(
  base: string,
  options: { path: string; authorization: string; sent: Buffer; declaredLength: number; before?: () => Promise<void> },
): Promise<void> {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on("error", () => {}); // a reset from the server while writing is as good as a hang-up
  await once(socket, "connect");
  socket.write(
    [
      `POST ${options.path} HTTP/1.1`,
      `Host: ${url.host}`,
      `Authorization: ${options.authorization}`,
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
      `Content-Length: ${options.declaredLength}`,
      "",
      "",
    ].join("\r\n"),
  );
  socket.write(options.sent);
  try {
    await options.before?.();
  } finally {
    socket.destroy();
  }
}

export async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function tempEntries(app: TestApp): Promise<string[]> {
  return readdir(await app.services.blobs.tempDir());
}

/** Whether the server has begun writing an upload: some file under an entry of its temp dir. */
export async function spoolStarted(app: TestApp): Promise<boolean> {
  const dir = await app.services.blobs.tempDir();
  for (const entry of await readdir(dir)) {
    const inside = await readdir(path.join(dir, entry)).catch(() => []);
    if (inside.length > 0) return true;
  }
  return false;
}

export async function openFds(): Promise<string[]> {
  const fds = await readdir("/proc/self/fd");
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")));
  return targets.filter(Boolean);
}

/** The process's open files under `dir`. */
export async function openFilesUnder(dir: string): Promise<string[]> {
  return (await openFds()).filter((target) => target.startsWith(`${dir}${path.sep}`));
}
