import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appsBase, appSource, createApp, png, waitForStatus, zip } from "../helpers/archives.ts";
import { launchBrowser, type TestBrowser } from "./browser.ts";

/**
 * CONTRACT §7.4 "GET /dashboard/", in a real browser against a real server on 127.0.0.1: a user
 * signs in, picks a domain, sees its uploads with live progress, states and results, uploads a
 * ZIP and watches it finish; a user of another domain, signed in at the same time in another tab,
 * sees none of it. Nothing the page loads may come from outside the server.
 */

/**
 * The page's DOM, as the functions that puppeteer runs inside the page see it (the project's
 * TypeScript has no DOM library; those functions are checked by running them).
 */
declare const document: any;
declare const sessionStorage: { length: number };

const NORTH = "north";
const SOUTH = "south";
const REFERENCES = ["jr://file/commcare/image/clinic.png", "jr://file/commcare/image/map.png", "jr://file/commcare/image/logo.png"];
/** a file name that is markup: the page must show it as text */
const EARLIER_UPLOAD = "earlier <img src=x alt=photos>.zip";
const PAGE_UPLOAD = "new-photos.zip";
const LATER_UPLOAD = "from-another-client.zip";
/** polling by time: requestAnimationFrame, puppeteer's default, does not run in a tab in the background */
const WAIT = { timeout: 30_000, polling: 100 };

let app: TestApp;
let origin: string;
let browser: TestBrowser;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let appId: string;
let tmp: string;

/** Uploads a ZIP outside the page (REST), as another client would; resolves once it is complete. */
async function uploadElsewhere(fileName: string, archive: Buffer): Promise<void> {
  const res = await app
    .http()
    .post(`${appsBase(NORTH)}/${appId}/multimedia/`)
    .set("Authorization", alice.authorization)
    .attach("bulk_upload_file", archive, { filename: fileName, contentType: "application/zip" });
  expect(res.status).toBe(200);
  const status = await waitForStatus(app, alice.authorization, NORTH, appId, res.body.processing_id);
  expect(status.body.complete).toBe(true);
}

async function signIn(page: Page, username: string, method: "apikey" | "password", secret: string): Promise<void> {
  await page.locator("#username").fill(username);
  await page.click(`input[name="method"][value="${method}"]`);
  await page.locator("#secret").fill(secret);
  await page.click('#sign-in-form button[type="submit"]');
}

interface Card {
  state: string;
  percent: number;
  ariaValueNow: string | null;
  text: string;
  figures: Record<string, string>;
  nameHasMarkup: boolean;
}

/** The card of the upload named `fileName`, as the page shows it (null if absent). */
function readCard(page: Page, fileName: string): Promise<Card | null> {
  return page.evaluate((name) => {
    const card = [...document.querySelectorAll("li.job")].find((li) => li.querySelector(".job-name")?.textContent === name);
    if (!card) return null;
    const progress = card.querySelector("progress")!;
    const figures: Record<string, string> = {};
    for (const figure of card.querySelectorAll(".job-result > div")) {
      figures[figure.querySelector("dt")!.textContent!] = figure.querySelector("dd")!.textContent!;
    }
    return {
      state: card.dataset.state!,
      percent: progress.value,
      ariaValueNow: progress.getAttribute("aria-valuenow"),
      text: card.textContent ?? "",
      figures,
      nameHasMarkup: card.querySelector(".job-name *") !== null,
    };
  }, fileName);
}

/** Waits until the upload `fileName` shows `state`; on a timeout, says what the page's error banner said. */
async function waitForCard(page: Page, fileName: string, state: string): Promise<void> {
  try {
    await page.waitForFunction(
      (name, wanted) =>
        [...document.querySelectorAll("li.job")].some((li) => li.querySelector(".job-name")?.textContent === name && li.dataset.state === wanted),
      WAIT,
      fileName,
      state,
    );
  } catch (error) {
    const shown = await page.evaluate(() => ({
      error: document.getElementById("error").hidden ? "(none)" : document.getElementById("error").textContent,
      cards: [...document.querySelectorAll("li.job")].map((li) => `${li.querySelector(".job-name")?.textContent}: ${li.dataset.state}`),
      uploadStatus: document.getElementById("upload-status").textContent,
    }));
    throw new Error(`${fileName} never showed ${state}; the page showed ${JSON.stringify(shown)}`, { cause: error });
  }
}

function waitForLiveFeed(page: Page) {
  return page.waitForFunction(() => document.getElementById("feed-status")?.dataset.state === "live", WAIT);
}

const text = (page: Page, selector: string) => page.$eval(selector, (node) => node.textContent ?? "");

beforeAll(async () => {
  app = await build();
  origin = await app.server.listen(0, "127.0.0.1");
  await createDomain(app, NORTH);
  await createDomain(app, SOUTH);
  alice = await createUser(app, { username: "alice", domain: NORTH, permissions: ["access_api", "edit_apps"] });
  bob = await createUser(app, { username: "bob", domain: SOUTH, permissions: ["access_api", "edit_apps"] });
  // a member of north who may read cases but not apps and their uploads
  carol = await createUser(app, { username: "carol", domain: NORTH, permissions: ["access_api", "view_data"] });
  appId = await createApp(app, alice.authorization, NORTH, appSource({ paths: REFERENCES }), "Clinic forms");
  // an upload made before any page is open
  await uploadElsewhere(EARLIER_UPLOAD, await zip([{ name: "commcare/image/logo.png", data: png(1) }]));
  tmp = await mkdtemp(path.join(os.tmpdir(), "dashboard-test-"));
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  // the screenshot stays for a person to look at; the rest of the directory goes
  if (tmp) await rm(path.join(tmp, PAGE_UPLOAD), { force: true });
});

describe("GET /dashboard/ in a browser", () => {
  it("signs in, shows the domain's uploads live, uploads a ZIP to 100 %, and shows another domain's user none of it", async () => {
    const page = await browser.open(origin);
    await page.setViewport({ width: 1000, height: 900 });
    const response = await page.goto(`${origin}/dashboard/`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);

    // a wrong key is refused in words
    await signIn(page, "alice", "apikey", "not-the-key");
    await page.waitForSelector("#error:not([hidden])", WAIT);
    expect(await text(page, "#error")).toMatch(/^Not signed in: the username, API key or password was not accepted \(401\)/);

    // the right one: the domain opens, with the upload made before the page was opened
    await signIn(page, "alice", "apikey", alice.apiKey);
    await waitForCard(page, EARLIER_UPLOAD, "COMPLETE");
    expect(await page.$eval("#domain", (node: any) => node.value)).toBe(NORTH);
    expect(await text(page, "#session-user")).toBe("alice");
    const earlier = await readCard(page, EARLIER_UPLOAD);
    expect(earlier).toMatchObject({ percent: 100, ariaValueNow: "100", nameHasMarkup: false });
    expect(earlier!.figures).toMatchObject({ Matched: "1", Unmatched: "0" });
    expect(earlier!.text).toContain("App Clinic forms");
    expect(earlier!.text).toContain("by alice");
    await waitForLiveFeed(page);

    // another user of another domain, in a second tab, signed in by password
    const other = await browser.open(origin);
    await other.goto(`${origin}/dashboard/`, { waitUntil: "load" });
    await signIn(other, "bob", "password", bob.password);
    await other.waitForSelector("#jobs-empty:not([hidden])", WAIT);
    expect(await text(other, "#jobs-empty")).toBe(`No uploads in ${SOUTH} yet.`);
    await waitForLiveFeed(other);

    // an upload through the page, by picking the file: two references matched, one file not
    const archive = path.join(tmp, PAGE_UPLOAD);
    await writeFile(
      archive,
      await zip([
        { name: "commcare/image/clinic.png", data: png(2) },
        { name: "commcare/image/map.png", data: png(3) },
        { name: "commcare/image/unknown.png", data: png(4) },
      ]),
    );
    // a click goes to the tab in front
    await page.bringToFront();
    expect(await page.$eval("#app", (node: any) => node.selectedOptions[0]?.textContent)).toBe("Clinic forms");
    const input = await page.$("#file");
    await input!.uploadFile(archive);
    await page.click("#upload-button");
    await waitForCard(page, PAGE_UPLOAD, "COMPLETE");
    const uploaded = await readCard(page, PAGE_UPLOAD);
    expect(uploaded).toMatchObject({ percent: 100, ariaValueNow: "100" });
    expect(uploaded!.figures).toMatchObject({ Matched: "2", Unmatched: "1", Files: "3", Images: "2" });
    expect(uploaded!.text).toContain("100 % · 3 of 3 files");
    expect(await text(page, "#upload-status")).toBe(`${PAGE_UPLOAD} is queued; its progress shows below.`);

    // an upload by another client appears without a reload: only the live feed can bring it
    await uploadElsewhere(LATER_UPLOAD, await zip([{ name: "commcare/image/map.png", data: png(5) }]));
    await waitForCard(page, LATER_UPLOAD, "COMPLETE");
    expect((await readCard(page, LATER_UPLOAD))!.figures).toMatchObject({ Matched: "1", Unmatched: "0" });
    const order = await page.$$eval("li.job .job-name", (names: any[]) => names.map((name) => name.textContent));
    expect(order).toEqual([LATER_UPLOAD, PAGE_UPLOAD, EARLIER_UPLOAD]);
    expect(await text(page, "#jobs-count")).toBe("(3)");

    // the other domain's tab saw none of it, live or read
    expect(await other.$$("li.job")).toHaveLength(0);
    expect(await text(other, "#jobs-empty")).toBe(`No uploads in ${SOUTH} yet.`);
    const otherBody = await text(other, "body");
    for (const name of [PAGE_UPLOAD, LATER_UPLOAD, "photos", "Clinic forms", NORTH]) expect(otherBody).not.toContain(name);

    // the card lists the files: the one that matched nothing with the reason
    await page.evaluate((name) => {
      const card = [...document.querySelectorAll("li.job")].find((li) => li.querySelector(".job-name").textContent === name);
      card.querySelector("details summary").click();
    }, PAGE_UPLOAD);
    expect((await readCard(page, PAGE_UPLOAD))!.text).toMatch(/unknown\.png — Did not match any Image paths in application\./);

    // signed out, the tab forgets bob; a member without the permission is refused in words
    await other.bringToFront();
    await other.click("#sign-out");
    expect(await other.$eval("#workspace", (node: any) => node.hidden)).toBe(true);
    expect(await other.evaluate(() => sessionStorage.length)).toBe(0);
    await signIn(other, "carol", "apikey", carol.apiKey);
    await other.waitForSelector("#error:not([hidden])", WAIT);
    expect(await text(other, "#error")).toMatch(/^Not allowed: your account does not have the permission for this domain or action \(403\)/);
    expect(await other.$$("li.job")).toHaveLength(0);

    await page.bringToFront();
    const screenshot = path.join(tmp, "dashboard.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`dashboard screenshot: ${screenshot}`);

    // at a phone's width nothing runs off the side
    await page.setViewport({ width: 360, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const narrow = path.join(tmp, "dashboard-narrow.png");
    await page.screenshot({ path: narrow, fullPage: true });
    console.log(`dashboard screenshot at 360 px: ${narrow}`);

    expect(browser.blocked).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
    // the refusals above are the only errors: the browser logs each 401/403 response it got
    expect(browser.consoleErrors.filter((message) => !/status of 40[13] /.test(message))).toEqual([]);
  }, 180_000);
});

describe("#24 G8: what the page shows and keeps", () => {
  const EAST = "east";
  const BIDI_CONTROLS = "[\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069]";

  it("G8: bidirectional controls in an entry path and an application's name show as visible marks, so they reorder nothing", async () => {
    await createDomain(app, EAST);
    const dave = await createUser(app, { username: "dave", domain: EAST, permissions: ["access_api", "edit_apps"] });
    const eastApp = await createApp(app, dave.authorization, EAST, appSource({ paths: REFERENCES }), "Clinic \u202eforms");
    // the review's entry: shown raw, it reads "commcare/image/live.png"
    const res = await app
      .http()
      .post(`${appsBase(EAST)}/${eastApp}/multimedia/`)
      .set("Authorization", dave.authorization)
      .attach("bulk_upload_file", await zip([{ name: "commcare/image/\u202eevil\u202c.png", data: png(6) }]), {
        filename: "bidi.zip",
        contentType: "application/zip",
      });
    expect(res.status).toBe(200);
    expect((await waitForStatus(app, dave.authorization, EAST, eastApp, res.body.processing_id)).body.complete).toBe(true);

    const page = await browser.open(origin);
    await page.goto(`${origin}/dashboard/`, { waitUntil: "load" });
    await signIn(page, "dave", "apikey", dave.apiKey);
    await waitForCard(page, "bidi.zip", "COMPLETE");
    await page.evaluate(() => {
      const card = [...document.querySelectorAll("li.job")].find((li) => li.querySelector(".job-name").textContent === "bidi.zip");
      card.querySelector("details summary").click();
    });
    const card = await readCard(page, "bidi.zip");
    expect(card!.text).toContain("commcare/image/\u27e8U+202E\u27e9evil\u27e8U+202C\u27e9.png — Did not match any Image paths in application.");
    expect(card!.text).toContain("App Clinic \u27e8U+202E\u27e9forms");
    expect(await page.$eval("#app", (node: any) => node.selectedOptions[0]?.textContent)).toBe("Clinic \u27e8U+202E\u27e9forms");
    const controls = await page.evaluate((pattern) => new RegExp(pattern).test(document.body.textContent), BIDI_CONTROLS);
    expect(controls).toBe(false);
    await page.close();
  }, 120_000);

  it("G8: a password sign-in keeps the password out of the tab's storage, so a reload asks again; an API key stays for the tab", async () => {
    const page = await browser.open(origin);
    await page.goto(`${origin}/dashboard/`, { waitUntil: "load" });
    await signIn(page, "bob", "password", bob.password);
    await page.waitForSelector("#workspace:not([hidden])", WAIT);
    expect(await text(page, "#session-user")).toBe("bob");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.reload({ waitUntil: "load" });
    expect(await page.$eval("#sign-in", (node: any) => node.hidden)).toBe(false);
    expect(await page.$eval("#workspace", (node: any) => node.hidden)).toBe(true);

    await signIn(page, "bob", "apikey", bob.apiKey);
    await page.waitForSelector("#workspace:not([hidden])", WAIT);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
    await page.reload({ waitUntil: "load" });
    await page.waitForSelector("#workspace:not([hidden])", WAIT);
    expect(await text(page, "#session-user")).toBe("bob");
    await page.close();
  }, 120_000);
});
