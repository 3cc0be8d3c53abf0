import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Request } from "express";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readMultipart, type Multipart } from "../../src/rest/multipart.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, appsBase, createApp, expectAppsError, zip, png } from "../helpers/archives.ts";
import { isEmbeddedDatabaseFile } from "../helpers/db.ts";
import { filePartHead, hangUpMidBody, openFds, openFilesUnder, spoolStarted, tempEntries, until } from "../helpers/uploads.ts";

/**
 * src/rest/multipart.ts, the REST multipart reader of the Import App API (import_app/ and
 * {app_id}/multimedia/): issue #12 F5 (a body cut off leaves nothing behind and the request
 * settles) and F11 (text fields bounded by BODY_LIMIT_BYTES; busboy's count and size limits are
 * refused with 413, never a silent drop).
 */

const DOMAIN = "demo";

describe("F5: the reader alone settles when the client hangs up", () => {
  let dir: string;
  let server: Server;
  let outcome: Promise<Multipart> | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "multipart-"));
    outcome = undefined;
    server = createServer((req, res) => {
      outcome = readMultipart(req as Request, { tempDir: dir, fileFields: ["file"], maxFileBytes: 1e9, maxFieldBytes: 1e6 });
      outcome.then(
        () => res.end("read"),
        () => res.end("refused"),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it("F5: a hang-up mid-file rejects the read (400 cut short), closes the file and removes its directory", async () => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const spooling = async () => (await readdir(dir)).length === 1 && (await readdir(path.join(dir, (await readdir(dir))[0]))).length === 1;
    await hangUpMidBody(base, {
      path: "/",
      authorization: "none",
      sent: Buffer.concat([filePartHead("file"), Buffer.alloc(200_000, 1)]),
      declaredLength: 10_000_000,
      before: () => until(spooling, "the file is being written"),
    });
    const unsettled = new Promise((resolve) => setTimeout(resolve, 5000, "still pending"));
    await expect(Promise.race([outcome, unsettled])).rejects.toMatchObject({
      status: 400,
      message: "The request body ended before it was complete.",
    });
    expect(await readdir(dir)).toEqual([]);
    expect(await openFilesUnder(dir)).toEqual([]);
  });
});

describe("through the Import App API", () => {
  let app: TestApp;
  let user: TestUser;
  let appId: string;
  let base: string;

  const start = async (overrides = {}) => {
    app = await build({ workers: 0, rateLimitRequests: 0, ...overrides });
    await createDomain(app, DOMAIN);
    user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
    appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/commcare/image/a.png"] }));
    base = await app.server.listen(0, "127.0.0.1");
  };
  afterEach(() => app?.close());

  describe("F5: an aborted upload leaves no file descriptor, no temp dir and no pending request", () => {
    beforeEach(() => start());

    const endpoints = () => [
      { path: `${appsBase(DOMAIN)}/${appId}/multimedia/`, field: "bulk_upload_file" },
      { path: `${appsBase(DOMAIN)}/import_app/`, field: "app_file" },
    ];

    // Database pools open sockets of their own as they please (PostgreSQL), and the embedded
    // database its relation files: the sockets of the aborted requests are counted by the server's
    // connections, every other descriptor directly.
    const files = async () => (await openFds()).filter((target) => !target.startsWith("socket:") && !isEmbeddedDatabaseFile(target));
    const connections = () => new Promise<number>((resolve, reject) => app.server.httpServer.getConnections((e, n) => (e ? reject(e) : resolve(n))));

    it("F5: raw sockets cut off inside the file of both endpoints: DATA_DIR/tmp empties and the open fds return to their level", async () => {
      const tmp = await app.services.blobs.tempDir();
      const filesBefore = (await files()).length;
      for (let round = 0; round < 3; round++) {
        for (const { path: target, field } of endpoints()) {
          await hangUpMidBody(base, {
            path: target,
            authorization: user.authorization,
            sent: Buffer.concat([filePartHead(field), Buffer.alloc(200_000, 1)]),
            declaredLength: 10_000_000,
            // the server has made its temp dir and is writing the file: the case that leaked
            before: () => until(() => spoolStarted(app), "the upload is being spooled"),
          });
        }
      }
      await until(async () => (await tempEntries(app)).length === 0, "DATA_DIR/tmp is empty");
      await until(async () => (await files()).length <= filesBefore, "the open files are back to their level");
      await until(async () => (await connections()) === 0, "the server holds no connection");
      expect(await tempEntries(app)).toEqual([]);
      expect(await openFilesUnder(tmp)).toEqual([]);
      // nothing was created by the cut-off requests
      expect(await app.db.prisma.multimediaJob.count()).toBe(0);
      expect(await app.db.prisma.app.count()).toBe(1);
    });

    it("F5: a hang-up between the parts (a text field sent, no file yet) leaves nothing either", async () => {
      for (const { path: target } of endpoints()) {
        const field = Buffer.from(`------cut-off-boundary\r\nContent-Disposition: form-data; name="app_name"\r\n\r\nClinic\r\n`);
        await hangUpMidBody(base, {
          path: target,
          authorization: user.authorization,
          sent: field,
          declaredLength: 1_000_000,
          before: () => until(async () => (await tempEntries(app)).length > 0, "the request reached the reader"),
        });
      }
      await until(async () => (await tempEntries(app)).length === 0, "DATA_DIR/tmp is empty");
    });
  });

  describe("F11: text fields are bounded by BODY_LIMIT_BYTES; busboy's limits answer 413, never a silent drop", () => {
    const LIMIT = 4096;
    beforeEach(() => start({ bodyLimitBytes: LIMIT }));

    const importWith = (fields: [string, string][], files = 1) => {
      let req = app
        .http()
        .post(`${appsBase(DOMAIN)}/import_app/`)
        .set("Authorization", user.authorization);
      for (const [name, value] of fields) req = req.field(name, value);
      for (let i = 0; i < files; i++) req = req.attach(i === 0 ? "app_file" : `extra${i}`, Buffer.from(JSON.stringify(appSource())), "app.json");
      return req;
    };

    it("F11: import_app text fields over BODY_LIMIT_BYTES in total → 413 {success: false, error}, no app created", async () => {
      const res = await importWith([
        ["pad", "x".repeat(LIMIT - 100)],
        ["app_name", "y".repeat(200)],
      ]);
      expectAppsError(res, 413, `The form's text fields are larger than ${LIMIT} bytes.`);
      expect(await app.db.prisma.app.count()).toBe(1);
    });

    it("F11: one text field over BODY_LIMIT_BYTES (busboy's field size) → 413, not truncated", async () => {
      const res = await importWith([["app_name", "y".repeat(LIMIT + 1)]]);
      expectAppsError(res, 413, `The form's text fields are larger than ${LIMIT} bytes.`);
      expect(await app.db.prisma.app.count()).toBe(1);
    });

    it("F11: text fields just within BODY_LIMIT_BYTES are read whole", async () => {
      const name = "n".repeat(LIMIT - "app_name".length - "pad".length - 10);
      const res = await importWith([
        ["pad", "x".repeat(10)],
        ["app_name", name],
      ]);
      expect(res.status).toBe(201);
      expect((await app.db.prisma.app.findFirstOrThrow({ where: { id: res.body.app_id } })).name).toBe(name);
    });

    it("F11: a 101st text field → 413 'The form has more than 100 text fields.', not a misleading 'app_name is required'", async () => {
      const fields: [string, string][] = Array.from({ length: 100 }, (_, i) => [`f${i}`, "x"]);
      const res = await importWith([...fields, ["app_name", "Clinic"]]);
      expectAppsError(res, 413, "The form has more than 100 text fields.");
      expect(await app.db.prisma.app.count()).toBe(1);
      // exactly 100 fields is within the limit
      expect((await importWith([...fields.slice(1), ["app_name", "Clinic"]])).status).toBe(201);
    });

    it("F11: a 21st file → 413 'The form has more than 20 files.'", async () => {
      const res = await importWith([["app_name", "Clinic"]], 21);
      expectAppsError(res, 413, "The form has more than 20 files.");
      expect(await app.db.prisma.app.count()).toBe(1);
    });

    it("F11: the multimedia upload bounds its text fields the same way, and leaves no temp entry", async () => {
      const res = await app
        .http()
        .post(`${appsBase(DOMAIN)}/${appId}/multimedia/`)
        .set("Authorization", user.authorization)
        .field("note", "x".repeat(LIMIT + 1))
        .attach("bulk_upload_file", await zip([{ name: "commcare/image/a.png", data: png(1) }]), "media.zip");
      expectAppsError(res, 413, `The form's text fields are larger than ${LIMIT} bytes.`);
      expect(await app.db.prisma.multimediaJob.count()).toBe(0);
      expect(await tempEntries(app)).toEqual([]);
    });
  });
});
