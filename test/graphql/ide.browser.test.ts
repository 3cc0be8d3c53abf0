import { existsSync } from "node:fs";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { CASES } from "../helpers/cases.ts";

/**
 * CONTRACT §7.3 IDE in a real browser: Debian's chromium (never a downloaded browser) opens
 * GET /graphql on a listening server, with every request that leaves the server blocked (and
 * recorded), sets an API key in the IDE's headers, runs a query and a subscription, and shows the
 * results. `.ci/run` installs chromium; without the binary this file says so and skips.
 */

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path));
if (!CHROMIUM) console.warn("ide.browser.test.ts SKIPPED: no chromium binary (apt-get install -y chromium); .ci/run installs it");

let app: TestApp;
let user: TestUser;
let base: string;
let browser: Browser;

beforeAll(async () => {
  if (!CHROMIUM) return;
  app = await build({ workers: 0 });
  user = await createUser(app, { superuser: true });
  await createDomain(app, "demo");
  base = await app.server.listen(0, "127.0.0.1");
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** A page whose requests outside the server under test fail (and are listed in `outside`). */
async function isolatedPage(): Promise<{ page: Page; outside: string[]; failures: string[] }> {
  // a context of its own: no IDE state (tabs, headers) left in storage by another test
  const page = await (await browser.createBrowserContext()).newPage();
  const outside: string[] = [];
  const failures: string[] = [];
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = request.url();
    if (url.startsWith(`${base}/`) || url.startsWith("data:") || url.startsWith("blob:")) return void request.continue();
    outside.push(url);
    void request.abort("blockedbyclient");
  });
  page.on("pageerror", (error) => failures.push(String(error)));
  return { page, outside, failures };
}

/** The text an element shows, once it shows any (the page's own scripts fill it in). */
async function textOf(page: Page, selector: string): Promise<string> {
  return (await page.evaluate(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ""`)) as string;
}

/** Replaces the content of the IDE's Monaco editor under `selector` as a user's paste would (no bracket auto-closing). */
async function typeInto(page: Page, selector: string, text: string): Promise<void> {
  await page.focus(`${selector} .monaco-editor textarea`);
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyA");
  await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
  await page.keyboard.sendCharacter(text);
}

const QUERY_EDITOR = ".graphiql-query-editor";
const HEADERS_EDITOR = ".graphiql-editor-tool .graphiql-editor:not(.hidden)";
const RESULT = ".result-window";

/**
 * Opens the IDE, sets the API key header, runs `query` and waits until the result shows `expected`;
 * `meanwhile` runs every half second until then (e.g. a write a subscription is waiting for).
 */
async function runInIde(query: string, expected: string, meanwhile?: () => Promise<unknown>): Promise<{ text: string; outside: string[] }> {
  const { page, outside, failures } = await isolatedPage();
  try {
    const response = await page.goto(`${base}/graphql`, { waitUntil: "domcontentloaded" });
    expect(response?.status()).toBe(200);
    // the default document is in place once the editor is ready
    await page.waitForFunction(`document.querySelector("${QUERY_EDITOR} .monaco-editor .view-lines")?.textContent?.trim()`, {
      timeout: 30_000,
    });
    await typeInto(page, QUERY_EDITOR, query);
    const [headersTab] = await page.$$("xpath/.//button[normalize-space(text())='Headers']");
    await headersTab!.click();
    await page.waitForSelector(`${HEADERS_EDITOR} .monaco-editor`);
    await typeInto(page, HEADERS_EDITOR, JSON.stringify({ Authorization: user.authorization }));
    await page.click(".graphiql-execute-button");
    const deadline = Date.now() + 30_000;
    while (!(await textOf(page, RESULT)).includes(expected)) {
      if (Date.now() > deadline) throw new Error(`the result window never showed ${expected}: ${await textOf(page, RESULT)}`);
      await meanwhile?.();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(failures).toEqual([]);
    // Monaco lays text out with non-breaking spaces
    return { text: (await textOf(page, RESULT)).replace(/\s+/g, " "), outside };
  } finally {
    await page.browserContext().close();
  }
}

describe.skipIf(!CHROMIUM)("CONTRACT §7.3 IDE in a real browser (chromium)", () => {
  it("CONTRACT §7.3 IDE: the page loads from this server alone, runs a query with an API key header, and shows the result", async () => {
    const { text, outside } = await runInIde("{ me { username } }", user.username);
    expect(text).toContain(`"me": { "username": "${user.username}" }`);
    expect(outside).toEqual([]);
  }, 120_000);

  it("CONTRACT §7.3 IDE: runs a mutation with the same header", async () => {
    const { text, outside } = await runInIde('mutation { createDomain(name: "from-the-ide") { name } }', "from-the-ide");
    expect(text).toContain('"createDomain": { "name": "from-the-ide" }');
    expect(outside).toEqual([]);
  }, 120_000);

  it("CONTRACT §7.3 IDE: runs a subscription over graphql-transport-ws on /graphql, its header as the connection_init payload, and shows each event", async () => {
    const write = () =>
      app.http().post(CASES).set("Authorization", user.authorization).send({ case_type: "seen-in-the-ide", case_name: "c", owner_id: "o" });
    const { text, outside } = await runInIde('subscription { caseChanged(domain: "demo") { caseType } }', "seen-in-the-ide", write);
    expect(text).toContain('"caseChanged": { "caseType": "seen-in-the-ide" }');
    expect(outside).toEqual([]);
  }, 120_000);
});
