import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

/**
 * Debian's Chromium driven by puppeteer-core (STACK.md): never a downloaded browser, a fresh
 * profile per run, and every request that leaves the server under test blocked and remembered,
 * so that a page reaching for a CDN fails its test instead of hanging.
 */

const CHROMIUM = "/usr/bin/chromium";

export interface TestBrowser {
  browser: Browser;
  /** a new tab on `origin`, every request elsewhere (but to the `also` origins: an identity provider's) blocked */
  open(origin: string, also?: string[]): Promise<Page>;
  /** requests that tried to leave the server under test */
  blocked: string[];
  /** uncaught errors in any of the pages */
  pageErrors: string[];
  /** what the pages logged as errors (a refused request, a Content-Security-Policy violation) */
  consoleErrors: string[];
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get update && apt-get install -y chromium), as .ci/run does`);
  }
  const profile = await mkdtemp(path.join(os.tmpdir(), "dashboard-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const blocked: string[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  return {
    browser,
    blocked,
    pageErrors,
    consoleErrors,
    async open(origin, also = []) {
      const page = await browser.newPage();
      await page.setRequestInterception(true);
      const allowed = [origin, ...also].map((o) => `${o}/`);
      page.on("request", (request) => {
        if (allowed.some((prefix) => request.url().startsWith(prefix))) return void request.continue();
        blocked.push(request.url());
        void request.abort("blockedbyclient");
      });
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      page.on("console", (message) => {
        if (message.type() === "error") consoleErrors.push(message.text());
      });
      return page;
    },
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
