import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { log } from "../../src/log.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, createApp, getMediaFile, png, uploadAndWait, zip } from "../helpers/archives.ts";

/**
 * CONTRACT §4 "GET {app_id}/multimedia/file/{path}" when the stored bytes fail to read: that one
 * response ends (the family's error body before any byte, a cut-short body after), the failure is
 * logged, and the server goes on answering.
 */

let app: TestApp;
let user: TestUser;
const DOMAIN = "demo";

beforeAll(async () => {
  app = await build();
  await createDomain(app, DOMAIN);
  user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
});
afterAll(() => app?.close());
afterEach(() => vi.restoreAllMocks());

/** An app with one stored image at `name`, and its bytes. */
async function storedImage(name: string, seed: number): Promise<{ appId: string; bytes: Buffer }> {
  const appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: [`jr://file/${name}`] }), "Media app");
  const bytes = Buffer.concat([png(seed), Buffer.alloc(256 * 1024, seed)]);
  const res = await uploadAndWait(app, user.authorization, DOMAIN, appId, await zip([{ name, data: bytes }]));
  expect(res.body.matched_count).toBe(1);
  return { appId, bytes };
}

/** The next request is answered as ever: the process is still up. */
async function stillServes(appId: string, name: string, bytes: Buffer) {
  const res = await getMediaFile(app, user.authorization, DOMAIN, appId, name);
  expect(res.status).toBe(200);
  expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
}

describe("F3: a media file whose stream fails ends that response only; the server answers the next request", () => {
  it("a stream failing before its first byte → 500 {success: false, error} in the family's shape, logged", async () => {
    const { appId, bytes } = await storedImage("first.png", 201);
    const logged = vi.spyOn(log, "error");
    vi.spyOn(app.services.blobs, "stream").mockResolvedValueOnce(
      new Readable({
        read() {
          this.destroy(Object.assign(new Error("read failed"), { code: "EIO", syscall: "read" }));
        },
      }),
    );
    const res = await app.http().get(`/a/${DOMAIN}/apps/api/${appId}/multimedia/file/first.png`).set("Authorization", user.authorization);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, error: "Internal server error" });
    expect(logged).toHaveBeenCalled();
    await stillServes(appId, "first.png", bytes);
  });

  it("a stream failing after the headers went out → the response is cut short (never completed), logged", async () => {
    const { appId, bytes } = await storedImage("middle.png", 202);
    const logged = vi.spyOn(log, "error");
    let reads = 0;
    vi.spyOn(app.services.blobs, "stream").mockResolvedValueOnce(
      new Readable({
        read() {
          if (reads++ === 0) this.push(bytes.subarray(0, 1024));
          else setImmediate(() => this.destroy(Object.assign(new Error("connection lost"), { code: "ECONNRESET" })));
        },
      }),
    );
    const outcome = await getMediaFile(app, user.authorization, DOMAIN, appId, "middle.png").then(
      (res) => ({ complete: (res.body as Buffer).length === bytes.length }),
      () => ({ complete: false }),
    );
    expect(outcome.complete).toBe(false);
    expect(logged).toHaveBeenCalledWith("multimedia file download failed", expect.objectContaining({ path: "middle.png" }));
    await stillServes(appId, "middle.png", bytes);
  });

  it("a stored file that no longer opens (embedded file store) → 500 in the family's shape", async (context) => {
    if (app.db.url) return context.skip(); // the file store of the embedded database only
    const { appId, bytes } = await storedImage("gone.png", 203);
    const stored = await app.db.prisma.multimediaFile.findFirstOrThrow({ where: { sha256: createHash("sha256").update(bytes).digest("hex") } });
    // the file found by the lookup, then gone when the stream opens it
    vi.spyOn(app.services.blobs, "has").mockResolvedValueOnce(true);
    await rm(path.join(app.services.config.dataDir, "blobs", stored.blobKey));
    const res = await app.http().get(`/a/${DOMAIN}/apps/api/${appId}/multimedia/file/gone.png`).set("Authorization", user.authorization);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, error: "Internal server error" });
    const other = await storedImage("other.png", 204);
    await stillServes(other.appId, "other.png", other.bytes);
  });
});

describe("#24 G8: what a browser makes of a stored file", () => {
  it("G8: media is served with its type as stored, X-Content-Type-Options: nosniff and a sandboxing policy (an SVG with a script, HTML named .png)", async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>window.__xss = 1</script></svg>');
    const html = Buffer.from("<!doctype html><html><body><script>window.__xss = 1</script></body></html>");
    const names = ["commcare/image/logo.svg", "commcare/image/clinic.png"];
    const appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: names.map((n) => `jr://file/${n}`) }), "Hostile media");
    const res = await uploadAndWait(
      app,
      user.authorization,
      DOMAIN,
      appId,
      await zip([
        { name: names[0], data: svg },
        { name: names[1], data: html },
      ]),
    );
    expect(res.body.matched_count).toBe(2);
    for (const [name, type] of [
      [names[0], "image/svg+xml"],
      [names[1], "image/png"],
    ]) {
      const file = await getMediaFile(app, user.authorization, DOMAIN, appId, name);
      expect(file.status).toBe(200);
      expect(file.headers["content-type"]).toBe(type);
      expect(file.headers["x-content-type-options"]).toBe("nosniff");
      expect(file.headers["content-security-policy"]).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    }
  });
});
