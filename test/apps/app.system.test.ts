import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppSystem } from "../../src/apps/app.system.ts";
import { build, createDomain, type TestApp } from "../helpers/app.ts";

/**
 * The trusted apps calls the multimedia worker makes (app.system.ts), at the service tier: each
 * names the domain and reaches nothing outside it, whatever app id it is given.
 */

let app: TestApp;
let system: AppSystem;
const domains: Record<string, string> = {};
const OURS = "1".repeat(32);
const THEIRS = "2".repeat(32);
const source = (path: string) => ({ doc_type: "Application", media: path });

beforeAll(async () => {
  app = await build({ workers: 0 });
  for (const name of ["ours", "theirs"]) {
    await createDomain(app, name);
    domains[name] = (await app.db.prisma.domain.findUniqueOrThrow({ where: { name } })).id;
  }
  for (const [id, domain, path] of [
    [OURS, "ours", "jr://file/commcare/image/ours.png"],
    [THEIRS, "theirs", "jr://file/commcare/image/theirs.png"],
  ] as const) {
    await app.db.prisma.app.create({
      data: {
        id,
        domainId: domains[domain]!,
        name: id,
        docType: "Application",
        versions: { create: { version: 1, name: id, source: source(path) } },
      },
    });
  }
  system = new AppSystem(app.db.prisma);
});
afterAll(() => app?.close());

describe("references(domain, appId): the current version's references, within the domain only", () => {
  it("the domain's own app: its references", async () => {
    expect(await system.references({ id: domains.ours! }, OURS)).toEqual([{ path: "jr://file/commcare/image/ours.png", mediaType: "image" }]);
  });

  it("another domain's app id gives nothing", async () => {
    expect(await system.references({ id: domains.ours! }, THEIRS)).toEqual([]);
  });

  it("the latest version's references", async () => {
    await app.db.prisma.appVersion.create({
      data: { appId: OURS, domainId: domains.ours!, version: 2, name: "v2", source: source("jr://file/commcare/audio/v2.mp3") },
    });
    expect(await system.references({ id: domains.ours! }, OURS)).toEqual([{ path: "jr://file/commcare/audio/v2.mp3", mediaType: "audio" }]);
  });
});

describe("mapMedia(tx, domain, appId, …): writes the domain's app only", () => {
  it("another domain's app id is left as it is", async () => {
    const mapping = { path: "jr://file/commcare/image/theirs.png", fileId: "f", mediaType: "image", sha256: "0".repeat(64) };
    await app.db.prisma.$transaction((tx) => system.mapMedia(tx, { id: domains.ours! }, THEIRS, [mapping]));
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id: THEIRS } })).multimediaMap).toEqual({});
  });

  it("the domain's app maps the path, replacing one of another case", async () => {
    const first = { path: "jr://file/commcare/image/Ours.PNG", fileId: "f1", mediaType: "image", sha256: "1".repeat(64) };
    const second = { path: "jr://file/commcare/image/ours.png", fileId: "f2", mediaType: "image", sha256: "2".repeat(64) };
    await app.db.prisma.$transaction((tx) => system.mapMedia(tx, { id: domains.ours! }, OURS, [first]));
    await app.db.prisma.$transaction((tx) => system.mapMedia(tx, { id: domains.ours! }, OURS, [second]));
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id: OURS } })).multimediaMap).toEqual({
      "jr://file/commcare/image/ours.png": { fileId: "f2", mediaType: "image", sha256: "2".repeat(64) },
    });
  });
});
