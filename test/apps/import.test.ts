import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import {
  appSource,
  appsBase,
  createApp,
  getMediaFile,
  getStatus,
  png,
  postImport,
  postMultimedia,
  uploadAndWait,
  zip,
  expectAppsError as expectError,
} from "../helpers/archives.ts";

/**
 * CONTRACT §4 "POST import_app/" and "Application source", §1 Permissions and Error bodies for the
 * Import App API: create 201, update in place 200 with version + 1, the order of the input checks,
 * accepted doc_types, every version's source kept, the multimedia map kept across updates.
 */

let app: TestApp;
let user: TestUser;
const DOMAIN = "demo";
const OTHER = "elsewhere";
const HEX32 = /^[0-9a-f]{32}$/;

beforeAll(async () => {
  app = await build();
  await createDomain(app, DOMAIN);
  await createDomain(app, OTHER);
  user = await createUser(app, { domain: DOMAIN, permissions: ["edit_apps"] });
});
afterAll(() => app?.close());

const importApp = (options: Parameters<typeof postImport>[3]) => postImport(app, user.authorization, DOMAIN, options);

describe("create: 201 {success: true, app_id} + warnings only when non-empty", () => {
  it("an app without multimedia references: 201, keys exactly success, app_id", async () => {
    const res = await importApp({ source: appSource(), appName: "Clinic" });
    expect(res.status).toBe(201);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(["success", "app_id"]);
    expect(res.body.success).toBe(true);
    expect(res.body.app_id).toMatch(HEX32);
    const stored = await app.db.prisma.app.findFirstOrThrow({ where: { id: res.body.app_id } });
    expect(stored).toMatchObject({ name: "Clinic", docType: "Application", version: 1, multimediaMap: {} });
  });

  it("an app with referenced multimedia not yet uploaded: warnings naming the missing count, after app_id", async () => {
    const source = appSource({
      paths: ["jr://file/commcare/image/a.png", "jr://file/commcare/audio/b.mp3"],
      mapPaths: ["jr://file/commcare/video/c.mp4", "jr://file/commcare/image/A.PNG"],
    });
    const res = await importApp({ source, appName: "With media" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(["success", "app_id", "warnings"]);
    expect(res.body.warnings).toHaveLength(1);
    // a.png and A.PNG are one path (case-insensitive): 3 missing
    expect(res.body.warnings[0]).toMatch(/missing multimedia file\(s\)/);
    expect(res.body.warnings[0]).toMatch(/\b3\b/);
  });

  it("unknown multipart fields (text and file parts) are ignored", async () => {
    const res = await postImport(app, user.authorization, DOMAIN, {
      source: appSource(),
      appName: "Extra fields",
      fields: { comment: "hello", app_version: "7", doc_type: "Nonsense" },
    }).attach("other_file", Buffer.from("not json"), "other.txt");
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(["success", "app_id"]);
    const stored = await app.db.prisma.app.findFirstOrThrow({ where: { id: res.body.app_id } });
    expect(stored).toMatchObject({ name: "Extra fields", docType: "Application" });
  });

  it("the path works without its trailing slash", async () => {
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/import_app`)
      .set("Authorization", user.authorization)
      .field("app_name", "No slash")
      .attach("app_file", Buffer.from(JSON.stringify(appSource())), "app.json");
    expect(res.status).toBe(201);
  });

  it("the source is kept as sent, as version 1", async () => {
    const source = appSource({ extra: { nested: { deep: [1, "two", null, { "k ey": true }] }, unicode: "ĥéllo ✓" } });
    const id = await createApp(app, user.authorization, DOMAIN, source, "Kept");
    const versions = await app.db.prisma.appVersion.findMany({ where: { appId: id }, orderBy: { version: "asc" } });
    expect(versions.map((v) => [v.version, v.name])).toEqual([[1, "Kept"]]);
    expect(versions[0].source).toEqual(source);
  });
});

describe("order of checks: app_file, then app_name, then Invalid JSON file", () => {
  it("app_file missing → 400 app_file is required (even with no app_name either)", async () => {
    expectError(await importApp({}), 400, "app_file is required");
    expectError(await importApp({ appName: "X" }), 400, "app_file is required");
  });

  it("app_file sent as a text field rather than a file → 400 app_file is required", async () => {
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/import_app/`)
      .set("Authorization", user.authorization)
      .field("app_file", JSON.stringify(appSource()))
      .field("app_name", "X");
    expectError(res, 400, "app_file is required");
  });

  it("a body that is not multipart → 400 app_file is required", async () => {
    const res = await app
      .http()
      .post(`${appsBase(DOMAIN)}/import_app/`)
      .set("Authorization", user.authorization)
      .send({ app_name: "X" });
    expectError(res, 400, "app_file is required");
  });

  it("no app_id and no app_name → 400 app_name is required, checked before the JSON", async () => {
    expectError(await importApp({ source: appSource() }), 400, "app_name is required");
    expectError(await importApp({ source: "not json at all" }), 400, "app_name is required");
    expectError(await importApp({ source: appSource(), appName: "" }), 400, "app_name is required");
  });

  it.each([
    ["not JSON", "{ nope"],
    ["empty file", Buffer.alloc(0)],
    ["a JSON array", "[1, 2]"],
    ["a JSON string", '"app"'],
    ["a JSON number", "42"],
    ["JSON null", "null"],
    ["binary bytes", png()],
  ])("app_file %s → 400 Invalid JSON file", async (_label, source) => {
    expectError(await importApp({ source, appName: "X" }), 400, "Invalid JSON file");
  });

  it("with app_id the JSON check still comes before the app lookup (unknown app + bad JSON → 400)", async () => {
    expectError(await importApp({ source: "[]", appId: "0".repeat(32) }), 400, "Invalid JSON file");
  });

  it("nothing is created by a refused import", async () => {
    const before = await app.db.prisma.app.count();
    await importApp({ source: "{", appName: "X" });
    await importApp({ source: appSource({ docType: "Form" }), appName: "X" });
    expect(await app.db.prisma.app.count()).toBe(before);
  });
});

describe("doc_type: absent means Application; Application, LinkedApplication, RemoteApp accepted; else 400", () => {
  it.each([
    [null, "Application"],
    ["Application", "Application"],
    ["LinkedApplication", "LinkedApplication"],
    ["RemoteApp", "RemoteApp"],
  ])("doc_type %s → 201, stored as %s", async (docType, stored) => {
    const res = await importApp({ source: appSource({ docType }), appName: "Typed" });
    expect(res.status).toBe(201);
    const row = await app.db.prisma.app.findFirstOrThrow({ where: { id: res.body.app_id } });
    expect(row.docType).toBe(stored);
  });

  it.each([["Form"], ["application"], [""], [5], [null as unknown as string]])("doc_type %j → 400", async (docType) => {
    const source = { ...appSource(), doc_type: docType };
    const res = await importApp({ source, appName: "Typed" });
    expectError(res, 400);
  });
});

describe("update with app_id: 200 {success, app_id, version}, in place", () => {
  it("version + 1 each time, same app id, keys exactly success, app_id, version", async () => {
    const id = await createApp(app, user.authorization, DOMAIN, appSource(), "First");
    for (const expected of [2, 3]) {
      const res = await importApp({ source: appSource({ extra: { v: expected } }), appId: id });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(["success", "app_id", "version"]);
      expect(res.body).toEqual({ success: true, app_id: id, version: expected });
    }
    expect(await app.db.prisma.app.count({ where: { id } })).toBe(1);
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id } })).version).toBe(3);
  });

  it("concurrent updates of one app each get their own version", async () => {
    const id = await createApp(app, user.authorization, DOMAIN, appSource(), "Busy");
    const results = await Promise.all([1, 2, 3].map((n) => importApp({ source: appSource({ extra: { n } }), appId: id })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.body.version).sort()).toEqual([2, 3, 4]);
    const versions = await app.db.prisma.appVersion.findMany({ where: { appId: id }, orderBy: { version: "asc" } });
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4]);
  });

  it("the name is kept unless app_name is given, then renamed", async () => {
    const id = await createApp(app, user.authorization, DOMAIN, appSource(), "Original");
    expect((await importApp({ source: appSource(), appId: id })).status).toBe(200);
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id } })).name).toBe("Original");
    expect((await importApp({ source: appSource(), appId: id, appName: "Renamed" })).status).toBe(200);
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id } })).name).toBe("Renamed");
  });

  it("every version's source is kept as sent", async () => {
    const v1 = appSource({ extra: { revision: "one" } });
    const v2 = appSource({ extra: { revision: "two" }, paths: ["jr://file/commcare/image/new.png"] });
    const v3 = { ...appSource({ docType: null }), revision: "three" };
    const id = await createApp(app, user.authorization, DOMAIN, v1, "Versions");
    await importApp({ source: v2, appId: id, appName: "Versions 2" });
    await importApp({ source: v3, appId: id });
    const versions = await app.db.prisma.appVersion.findMany({ where: { appId: id }, orderBy: { version: "asc" } });
    expect(versions.map((v) => [v.version, v.name])).toEqual([
      [1, "Versions"],
      [2, "Versions 2"],
      [3, "Versions 2"],
    ]);
    expect(versions.map((v) => v.source)).toEqual([v1, v2, v3]);
  });

  it("app_id unknown in the domain → 404, nothing created", async () => {
    const before = await app.db.prisma.app.count();
    expectError(await importApp({ source: appSource(), appId: "f".repeat(32) }), 404);
    expectError(await importApp({ source: appSource(), appId: "no such app" }), 404);
    expect(await app.db.prisma.app.count()).toBe(before);
  });

  it("another domain's app_id → 404, and that app is untouched", async () => {
    const other = await createUser(app, { domain: OTHER, permissions: ["edit_apps"] });
    const otherId = await createApp(app, other.authorization, OTHER, appSource(), "Theirs");
    expectError(await importApp({ source: appSource(), appId: otherId, appName: "Mine" }), 404);
    const row = await app.db.prisma.app.findFirstOrThrow({ where: { id: otherId } });
    expect(row).toMatchObject({ name: "Theirs", version: 1 });
  });

  it("a different doc_type from the existing app → 400 (incompatible type), version unchanged", async () => {
    const id = await createApp(app, user.authorization, DOMAIN, appSource({ docType: "LinkedApplication" }), "Linked");
    expectError(await importApp({ source: appSource({ docType: "Application" }), appId: id }), 400);
    expectError(await importApp({ source: appSource({ docType: null }), appId: id }), 400);
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id } })).version).toBe(1);
    const same = await importApp({ source: appSource({ docType: "LinkedApplication" }), appId: id });
    expect(same.body).toEqual({ success: true, app_id: id, version: 2 });
  });

  it("absent doc_type matches an existing Application", async () => {
    const id = await createApp(app, user.authorization, DOMAIN, appSource({ docType: "Application" }), "Plain");
    const res = await importApp({ source: appSource({ docType: null }), appId: id });
    expect(res.status).toBe(200);
    expect(res.body.version).toBe(2);
  });

  it("an update warns about the references still missing from the app's multimedia map, only when some are", async () => {
    const paths = ["jr://file/commcare/image/one.png", "jr://file/commcare/image/two.png"];
    const id = await createApp(app, user.authorization, DOMAIN, appSource({ paths }), "Warn");
    const done = await uploadAndWait(app, user.authorization, DOMAIN, id, await zip([{ name: "commcare/image/one.png", data: png(11) }]));
    expect(done.body.matched_count).toBe(1);
    const res = await importApp({ source: appSource({ paths }), appId: id });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["success", "app_id", "version", "warnings"]);
    expect(res.body.warnings).toHaveLength(1);
    expect(res.body.warnings[0]).toMatch(/\b1\b/);
    const fewer = await importApp({ source: appSource({ paths: [paths[0]] }), appId: id });
    expect(Object.keys(fewer.body)).toEqual(["success", "app_id", "version"]);
  });

  it("the multimedia map is kept across updates: an uploaded file stays downloadable", async () => {
    const path = "jr://file/commcare/image/logo.png";
    const id = await createApp(app, user.authorization, DOMAIN, appSource({ paths: [path] }), "Media");
    const bytes = png(42);
    const done = await uploadAndWait(app, user.authorization, DOMAIN, id, await zip([{ name: "commcare/image/logo.png", data: bytes }]));
    expect(done.body.matched_count).toBe(1);
    const before = await getMediaFile(app, user.authorization, DOMAIN, id, "commcare/image/logo.png");
    expect(before.status).toBe(200);
    expect(before.headers["content-type"]).toMatch(/^image\/png/);
    expect(Buffer.compare(before.body as Buffer, bytes)).toBe(0);
    const mapBefore = (await app.db.prisma.app.findFirstOrThrow({ where: { id } })).multimediaMap;

    // an update whose source no longer names the file still keeps the mapping
    const res = await importApp({ source: appSource(), appId: id, appName: "Media 2" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["success", "app_id", "version"]);
    const after = await getMediaFile(app, user.authorization, DOMAIN, id, "commcare/image/logo.png");
    expect(after.status).toBe(200);
    expect(Buffer.compare(after.body as Buffer, bytes)).toBe(0);
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id } })).multimediaMap).toEqual(mapBefore);
  });
});

describe("no input, however malformed, produces a 500 (§1 Error bodies)", () => {
  it.each([
    ["a NUL character in a string", '{"name": "a\\u0000b"}'],
    ["a NUL character in a key", '{"a\\u0000b": 1}'],
    ["an unpaired surrogate", '{"name": "\\ud800"}'],
    ["nesting 5000 levels deep", `{"a": ${"[".repeat(5000)}${"]".repeat(5000)}}`],
  ])("a source with %s → 400, nothing stored", async (_label, source) => {
    const before = await app.db.prisma.app.count();
    expectError(await importApp({ source, appName: "Odd" }), 400);
    expect(await app.db.prisma.app.count()).toBe(before);
  });

  it("a source nested a few hundred levels deep is accepted, and a reference deep inside is found", async () => {
    const depth = 400;
    const deep = JSON.parse(`${"[".repeat(depth)}"jr://file/commcare/image/deep.png"${"]".repeat(depth)}`);
    const res = await importApp({ source: { doc_type: "Application", deep }, appName: "Deep" });
    expect(res.status).toBe(201);
    expect(res.body.warnings).toEqual([expect.stringMatching(/\b1\b/)]);
  });

  it("an app_name with a NUL character → 400", async () => {
    expectError(await importApp({ source: appSource(), appName: "a\u0000b" }), 400);
  });

  it("an app_id with a NUL character names no app → 404", async () => {
    expectError(await importApp({ source: appSource(), appId: "a\u0000b" }), 404);
  });

  it("a domain name with a NUL character: 403 for a member of other domains, 404 for a superuser", async () => {
    expectError(await postImport(app, user.authorization, "a%00b", { source: appSource(), appName: "X" }), 403);
    const admin = await createUser(app, { superuser: true });
    expectError(await postImport(app, admin.authorization, "a%00b", { source: appSource(), appName: "X" }), 404);
  });
});

describe("permissions and error bodies (§1): edit_apps alone suffices; 403/401 otherwise", () => {
  let appId: string;
  let processingId: string;
  beforeAll(async () => {
    appId = await createApp(app, user.authorization, DOMAIN, appSource({ paths: ["jr://file/a.png"] }), "Perm");
    const upload = await postMultimedia(app, user.authorization, DOMAIN, appId, await zip([{ name: "a.png", data: png(3) }]));
    expect(upload.status).toBe(200);
    processingId = upload.body.processing_id;
  });

  const calls = (authorization: string | undefined, domain = DOMAIN) => ({
    import: () => postImport(app, authorization, domain, { source: appSource(), appName: "P" }),
    update: () => postImport(app, authorization, domain, { source: appSource(), appId }),
    upload: async () => postMultimedia(app, authorization, domain, appId, await zip([{ name: "a.png", data: png(4) }])),
    status: () => getStatus(app, authorization, domain, appId, processingId),
  });

  it("a user with only edit_apps (no access_api) may use all three endpoints", async () => {
    const c = calls(user.authorization);
    expect((await c.import()).status).toBe(201);
    expect((await c.update()).status).toBe(200);
    expect((await c.upload()).status).toBe(200);
    expect((await c.status()).status).toBe(200);
  });

  it("a member without edit_apps (even with every other permission) → 403 {success: false, error} on all three", async () => {
    const other = await createUser(app, {
      domain: DOMAIN,
      permissions: ["access_api", "view_data", "edit_data", "view_locations", "edit_locations"],
    });
    const versionBefore = (await app.db.prisma.app.findFirstOrThrow({ where: { id: appId } })).version;
    const jobsBefore = await app.db.prisma.multimediaJob.count();
    for (const call of Object.values(calls(other.authorization))) expectError(await call(), 403);
    expect((await app.db.prisma.app.findFirstOrThrow({ where: { id: appId } })).version).toBe(versionBefore);
    expect(await app.db.prisma.multimediaJob.count()).toBe(jobsBefore);
  });

  it("a user with edit_apps in another domain only → 403 on all three", async () => {
    const outsider = await createUser(app, { domain: OTHER, permissions: ["edit_apps", "access_api"] });
    for (const call of Object.values(calls(outsider.authorization))) expectError(await call(), 403);
  });

  it("an unknown domain: 403 for a non-superuser (domains are not revealed)", async () => {
    for (const call of Object.values(calls(user.authorization, "no-such-domain"))) expectError(await call(), 403);
  });

  it("no credentials → 401 with a JSON error and WWW-Authenticate challenges", async () => {
    for (const call of Object.values(calls(undefined))) {
      const res = await call();
      expect(res.status).toBe(401);
      expect(typeof res.body.error).toBe("string");
      expect(res.headers["www-authenticate"]).toBeDefined();
    }
  });

  it("wrong credentials → 401", async () => {
    for (const call of Object.values(calls(`ApiKey ${user.username}:wrong`))) expect((await call()).status).toBe(401);
  });

  it("a superuser may import in any domain; an unknown domain is 404 for them", async () => {
    const admin = await createUser(app, { superuser: true });
    expect((await calls(admin.authorization, OTHER).import()).status).toBe(201);
    expectError(await calls(admin.authorization, "no-such-domain").import(), 404);
  });

  it("wrong method → 405 with Allow and a JSON error body", async () => {
    const res = await app
      .http()
      .get(`${appsBase(DOMAIN)}/import_app/`)
      .set("Authorization", user.authorization);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("POST");
    expect(res.body.success).toBe(false);
    const upload = await app
      .http()
      .put(`${appsBase(DOMAIN)}/${appId}/multimedia/`)
      .set("Authorization", user.authorization);
    expect(upload.status).toBe(405);
    expect(upload.headers.allow).toBe("POST");
  });
});

describe("size limits (§1: a body over the size limit is 413)", () => {
  let small: TestApp;
  let smallUser: TestUser;
  beforeAll(async () => {
    small = await build({ uploadLimitBytes: 4096, appSourceLimitBytes: 2048, workers: 0 });
    await createDomain(small, DOMAIN);
    smallUser = await createUser(small, { domain: DOMAIN, permissions: ["edit_apps"] });
  });
  afterAll(() => small?.close());

  it("an app_file over the application source limit → 413 {success: false, error}, nothing stored", async () => {
    const res = await postImport(small, smallUser.authorization, DOMAIN, {
      source: { doc_type: "Application", pad: "x".repeat(3000) },
      appName: "Big",
    });
    expectError(res, 413);
    expect(await small.db.prisma.app.count()).toBe(0);
    const ok = await postImport(small, smallUser.authorization, DOMAIN, {
      source: { doc_type: "Application", pad: "x".repeat(1000) },
      appName: "Fits",
    });
    expect(ok.status).toBe(201);
  });

  it("a multimedia archive over the upload limit → 413, no job", async () => {
    const appId = await createApp(small, smallUser.authorization, DOMAIN, appSource());
    const res = await postMultimedia(small, smallUser.authorization, DOMAIN, appId, Buffer.alloc(20_000, 1));
    expectError(res, 413);
    expect(await small.db.prisma.multimediaJob.count()).toBe(0);
  });
});
