import type { Test } from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CROSS_SITE_REFUSED } from "../../src/rest/cross-site.ts";
import { basic, build, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, appsBase, createApp, expectAppsError, png, zip } from "../helpers/archives.ts";
import { CASES } from "../helpers/cases.ts";
import { LOCATIONS, seedLocationDomain } from "../helpers/locations.ts";

/**
 * F12 (issue #12): a page on another site must not write through REST with the Basic/Digest
 * credentials a browser has cached for this server. Browsers name the page's origin (`Origin`,
 * `Sec-Fetch-Site`) on every cross-origin write; the legacy API clients send neither and keep
 * working with any content type, JSON, text/plain and multipart alike.
 */

const EVIL = "http://evil.example";
const HOST = "gateway.test:8000";

let app: TestApp;
let user: TestUser;
let auth: string;

beforeEach(async () => {
  app = await build({ workers: 0 });
  await seedLocationDomain(app);
  user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data", "edit_locations", "edit_apps"] });
  auth = basic(user.username, user.password);
});
afterEach(() => app?.close());

type Method = "post" | "put" | "patch" | "delete";

/** A request as a browser sends it from a page on `origin` to this server at HOST, cached Basic credentials attached. */
const fromBrowser = (method: Method, path: string, origin: string) =>
  app.http()[method](path).set("Host", HOST).set("Authorization", auth).set("Origin", origin);

/** The three encodings an HTML form can send without a CORS preflight, each carrying a case. */
const SIMPLE_BODIES: [string, (req: Test) => Test][] = [
  ["text/plain", (req) => req.set("Content-Type", "text/plain").send('{"case_type":"t","case_name":"csrf","owner_id":"o"}')],
  ["application/x-www-form-urlencoded", (req) => req.type("form").send("case_type=t&case_name=csrf&owner_id=o")],
  ["multipart/form-data", (req) => req.field("case_type", "t").field("case_name", "csrf").field("owner_id", "o")],
];

const expectRefused = (res: { status: number; body: unknown }) => {
  expect(res.status).toBe(403);
  expect(res.body).toEqual({ error: CROSS_SITE_REFUSED });
};

const counts = async () => ({
  cases: await app.db.prisma.case.count(),
  forms: await app.db.prisma.form.count(),
  locations: await app.db.prisma.location.count(),
  apps: await app.db.prisma.app.count(),
  jobs: await app.db.prisma.multimediaJob.count(),
});

describe("F12: cross-site REST writes are refused (403 in the API's error shape, nothing written)", () => {
  it.each(SIMPLE_BODIES)("F12: a cross-site %s form POST to case create answers 403 and creates no case", async (_type, body) => {
    const res = await body(fromBrowser("post", CASES, EVIL));
    expectRefused(res);
    expect(await counts()).toEqual({ cases: 0, forms: 0, locations: 0, apps: 0, jobs: 0 });
  });

  it("F12: cross-site case bulk, upsert and update writes answer 403 and change nothing", async () => {
    const created = await app.http().post(CASES).set("Authorization", auth).send({ case_type: "t", case_name: "before", owner_id: "o" });
    expect(created.status).toBe(200);
    const caseId = created.body.case.case_id as string;
    const before = await counts();
    const bulk = JSON.stringify([{ create: true, case_type: "t", case_name: "csrf", owner_id: "o" }]);
    expectRefused(await fromBrowser("post", CASES, EVIL).set("Content-Type", "text/plain").send(bulk));
    expectRefused(await fromBrowser("put", CASES, EVIL).set("Content-Type", "text/plain").send(bulk));
    expectRefused(await fromBrowser("put", `${CASES}ext/ext-1/`, EVIL).send({ case_type: "t", case_name: "csrf", owner_id: "o" }));
    expectRefused(await fromBrowser("put", `${CASES}${caseId}`, EVIL).send({ case_name: "renamed" }));
    expect(await counts()).toEqual(before);
    const stored = await app.db.prisma.case.findFirstOrThrow({ where: { id: caseId } });
    expect(stored.caseName).toBe("before");
  });

  it("F12: cross-site location create, update and bulk answer 403 and change nothing", async () => {
    const created = await app.http().post(LOCATIONS).set("Authorization", auth).send({ name: "Kenya", location_type_code: "country" });
    expect(created.status).toBe(201);
    const before = await counts();
    const plain = (req: Test, body: unknown) => req.set("Content-Type", "text/plain").send(JSON.stringify(body));
    expectRefused(await plain(fromBrowser("post", LOCATIONS, EVIL), { name: "csrf", location_type_code: "country" }));
    expectRefused(await plain(fromBrowser("put", `${LOCATIONS}${created.body.location_id}/`, EVIL), { name: "renamed" }));
    expectRefused(await plain(fromBrowser("patch", LOCATIONS, EVIL), { objects: [{ name: "csrf", location_type_code: "country" }] }));
    expect(await counts()).toEqual(before);
    const stored = await app.db.prisma.location.findFirstOrThrow({ where: { id: created.body.location_id } });
    expect(stored.name).toBe("Kenya");
  });

  it("F12: a cross-site multipart import_app answers 403 {success: false, error} and imports nothing", async () => {
    const res = await fromBrowser("post", `${appsBase("demo")}/import_app/`, EVIL)
      .field("app_name", "csrf")
      .attach("app_file", Buffer.from(JSON.stringify(appSource())), { filename: "app.json", contentType: "application/json" });
    expectAppsError(res, 403, CROSS_SITE_REFUSED);
    expect(await counts()).toEqual({ cases: 0, forms: 0, locations: 0, apps: 0, jobs: 0 });
  });

  it("F12: a cross-site multimedia upload answers 403 {success: false, error} and queues no job", async () => {
    const appId = await createApp(app, auth, "demo", appSource({ paths: ["jr://file/commcare/image/a.png"] }));
    const archive = await zip([{ name: "commcare/image/a.png", data: png() }]);
    const res = await fromBrowser("post", `${appsBase("demo")}/${appId}/multimedia/`, EVIL).attach("bulk_upload_file", archive, {
      filename: "media.zip",
      contentType: "application/zip",
    });
    expectAppsError(res, 403, CROSS_SITE_REFUSED);
    expect(await app.db.prisma.multimediaJob.count()).toBe(0);
  });

  it.each(["cross-site", "same-site"])("F12: Sec-Fetch-Site: %s refuses a write even without an Origin header", async (site) => {
    const res = await app
      .http()
      .post(CASES)
      .set("Authorization", auth)
      .set("Sec-Fetch-Site", site)
      .send({ case_type: "t", case_name: "csrf", owner_id: "o" });
    expectRefused(res);
    expect(await app.db.prisma.case.count()).toBe(0);
  });

  it("F12: an opaque Origin (null: sandboxed frame, file:) is refused", async () => {
    expectRefused(await fromBrowser("post", CASES, "null").send({ case_type: "t", case_name: "csrf", owner_id: "o" }));
  });

  it("F12: the refusal comes before authentication: no credentials still get 403, and no challenge a browser would prompt for", async () => {
    const res = await app.http().post(CASES).set("Origin", EVIL).send({ case_type: "t", case_name: "csrf", owner_id: "o" });
    expectRefused(res);
    expect(res.headers["www-authenticate"]).toBeUndefined();
  });

  it("F12: an origin that merely starts like this server's host is another origin", async () => {
    expectRefused(await fromBrowser("post", CASES, `http://${HOST}.evil.example`).send({ case_type: "t", case_name: "x", owner_id: "o" }));
    expectRefused(await fromBrowser("post", CASES, "http://gateway.test:8001").send({ case_type: "t", case_name: "x", owner_id: "o" }));
  });
});

describe("F12: legacy clients and same-origin pages keep writing", () => {
  it("F12: without browser headers, JSON, text/plain and multipart writes work as before", async () => {
    const json = await app.http().post(CASES).set("Authorization", auth).send({ case_type: "t", case_name: "json", owner_id: "o" });
    expect(json.status).toBe(200);
    const plain = await app
      .http()
      .post(CASES)
      .set("Authorization", auth)
      .set("Content-Type", "text/plain")
      .send('{"case_type":"t","case_name":"plain","owner_id":"o"}');
    expect(plain.status).toBe(200);
    expect(plain.body.case.case_name).toBe("plain");
    const imported = await app
      .http()
      .post(`${appsBase("demo")}/import_app/`)
      .set("Authorization", auth)
      .field("app_name", "legacy")
      .attach("app_file", Buffer.from(JSON.stringify(appSource())), { filename: "app.json", contentType: "application/json" });
    expect(imported.status).toBe(201);
    expect(await app.db.prisma.case.count()).toBe(2);
  });

  it("F12: a page of this server's own origin writes (Origin's host is the Host header; Sec-Fetch-Site same-origin)", async () => {
    const body = { case_type: "t", case_name: "same-origin", owner_id: "o" };
    expect((await fromBrowser("post", CASES, `http://${HOST}`).send(body)).status).toBe(200);
    // the scheme is not compared: a proxy may terminate TLS in front of an http server
    expect((await fromBrowser("post", CASES, `https://${HOST}`).send(body)).status).toBe(200);
    expect((await fromBrowser("post", CASES, `http://${HOST}`).set("Sec-Fetch-Site", "same-origin").send(body)).status).toBe(200);
    expect(await app.db.prisma.case.count()).toBe(3);
  });

  it("F12: cross-site reads are not refused (the page cannot read the answer without CORS)", async () => {
    const res = await app.http().get(CASES).set("Authorization", auth).set("Origin", EVIL).set("Sec-Fetch-Site", "cross-site");
    expect(res.status).toBe(200);
  });
});

describe("F12: the server's own host behind a proxy", () => {
  const body = { case_type: "t", case_name: "proxied", owner_id: "o" };
  const viaProxy = () =>
    app
      .http()
      .post(CASES)
      .set("Host", "127.0.0.1:8000")
      .set("X-Forwarded-Host", "api.example.org")
      .set("X-Forwarded-Proto", "https")
      .set("Authorization", auth)
      .set("Origin", "https://api.example.org");

  it("F12: with PUBLIC_URL set, a page of that origin writes", async () => {
    await app.close();
    app = await build({ workers: 0, publicUrl: "https://api.example.org/prefix" });
    await seedLocationDomain(app);
    user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    auth = basic(user.username, user.password);
    expect((await viaProxy().send(body)).status).toBe(200);
  });

  it("F12: with TRUST_PROXY on, X-Forwarded-Host is this server's host; off, it is not believed", async () => {
    expectRefused(await viaProxy().send(body));
    await app.close();
    app = await build({ workers: 0, trustProxy: true });
    await seedLocationDomain(app);
    user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    auth = basic(user.username, user.password);
    expect((await viaProxy().send(body)).status).toBe(200);
  });
});
