import type { Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp } from "../helpers/app.ts";
import { appsBase, appSource, createApp, png, waitForStatus, zip } from "../helpers/archives.ts";
import { API_SCOPE, DASHBOARD_CLIENT, startIdentityProvider, type IdentityProvider } from "../auth/identity-provider.ts";
import { launchBrowser, type TestBrowser } from "./browser.ts";

/**
 * CONTRACT §7.4 "GET /dashboard/" signed in through the OpenID Connect provider (OIDC_ISSUER,
 * OIDC_CLIENT_ID): in Chromium, from the dashboard's sign-in button, through the provider's
 * login and consent pages (oidc-provider on loopback), back to the dashboard with an access
 * token got by the authorization code flow with PKCE, showing the domain's uploads, live.
 */

declare const document: any;
declare const sessionStorage: { getItem(key: string): string | null };
declare const location: { href: string };

const NORTH = "north";
const AUDIENCE = "https://gateway.example.test/api";
const UPLOAD = "clinic-photos.zip";
const WAIT = { timeout: 30_000, polling: 100 };

let idp: IdentityProvider;
let app: TestApp;
let origin: string;
let browser: TestBrowser;

beforeAll(async () => {
  idp = await startIdentityProvider({ audience: AUDIENCE, preferredUsernames: { "alice@idp": "alice" } });
  app = await build({
    oidc: {
      issuer: idp.issuer,
      audience: AUDIENCE,
      usernameClaims: ["preferred_username", "sub"],
      clientId: DASHBOARD_CLIENT,
      scope: `openid profile ${API_SCOPE}`,
      jwksCooldownSeconds: 30,
      allowSuperusers: false,
    },
  });
  origin = await app.server.listen(0, "127.0.0.1");
  idp.allowDashboard(`${origin}/dashboard/`);
  idp.allowDashboard(`${origin}/graphql`);
  await createDomain(app, NORTH);
  const alice = await createUser(app, { username: "alice", domain: NORTH, permissions: ["access_api", "edit_apps"] });
  const appId = await createApp(app, alice.authorization, NORTH, appSource({ paths: ["jr://file/commcare/image/clinic.png"] }), "Clinic forms");
  const res = await app
    .http()
    .post(`${appsBase(NORTH)}/${appId}/multimedia/`)
    .set("Authorization", alice.authorization)
    .attach("bulk_upload_file", await zip([{ name: "commcare/image/clinic.png", data: png(1) }]), {
      filename: UPLOAD,
      contentType: "application/zip",
    });
  expect(res.status).toBe(200);
  await waitForStatus(app, alice.authorization, NORTH, appId, res.body.processing_id);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await idp?.close();
});

/** The provider's page (its login or consent form) once it shows `selector`. */
async function onProviderPage(page: Page, selector: string): Promise<void> {
  await page.waitForSelector(selector, WAIT);
  expect(new URL(page.url()).origin).toBe(idp.issuer);
}

describe("GET /dashboard/ with OIDC_ISSUER and OIDC_CLIENT_ID", () => {
  it("CONTRACT §7.4: signs in through the provider's login and consent pages (code flow with PKCE) and shows the domain's uploads", async () => {
    const config = await app.http().get("/dashboard/config.json");
    expect(config.body).toEqual({
      oidc: {
        issuer: idp.issuer,
        clientId: DASHBOARD_CLIENT,
        scope: `openid profile ${API_SCOPE}`,
        authorizationEndpoint: `${idp.issuer}/auth`,
        tokenEndpoint: `${idp.issuer}/token`,
      },
    });
    const page = await browser.open(origin, [idp.issuer]);
    await page.goto(`${origin}/dashboard/`, { waitUntil: "load" });
    await page.waitForSelector("#oidc-button", { ...WAIT, visible: true });
    // the page may call the provider's token endpoint, and nothing else outside this server
    const policy = (await page.goto(`${origin}/dashboard/`, { waitUntil: "load" }))!.headers()["content-security-policy"];
    expect(policy).toContain(`connect-src 'self' ${idp.issuer}`);
    await page.waitForSelector("#oidc-button", { ...WAIT, visible: true });

    await Promise.all([page.waitForNavigation(), page.click("#oidc-button")]);
    await onProviderPage(page, 'input[name="login"]');
    const authorize = new URL(page.url());
    expect(authorize.pathname).toMatch(/^\/interaction\//);
    await page.type('input[name="login"]', "alice@idp");
    await page.type('input[name="password"]', "any password");
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    await onProviderPage(page, 'input[name="prompt"][value="consent"]');
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);

    // back on the dashboard, signed in as the user the token names, with the domain's data
    await page.waitForFunction(() => document.getElementById("session-user")?.textContent === "alice", WAIT);
    expect(new URL(page.url()).href).toBe(`${origin}/dashboard/`);
    await page.waitForFunction(
      (name: string) =>
        [...document.querySelectorAll("li.job")].some(
          (li: any) => li.querySelector(".job-name")?.textContent === name && li.dataset.state === "COMPLETE",
        ),
      WAIT,
      UPLOAD,
    );
    await page.waitForFunction(() => document.getElementById("feed-status")?.dataset.state === "live", WAIT);
    expect(await page.$eval("#sign-in", (node: any) => node.hidden)).toBe(true);
    const stored = await page.evaluate(() => sessionStorage.getItem("dashboard.authorization"));
    expect(stored).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    // the pending sign-in (the PKCE verifier) is gone once used
    expect(await page.evaluate(() => sessionStorage.getItem("dashboard.oidc.pending"))).toBeNull();

    // a reload keeps the session (the token in this tab's storage)
    await page.reload({ waitUntil: "load" });
    await page.waitForFunction(() => document.getElementById("session-user")?.textContent === "alice", WAIT);

    // what was blocked came from the provider's own pages (their web font), never from the dashboard
    expect(browser.blocked.filter((url) => !url.startsWith("https://fonts.googleapis.com/"))).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
  });

  it("CONTRACT §7.4: when the access token expires the page signs out and says so; signing in again needs no new login while the provider's session lasts", async () => {
    const page = await browser.open(origin, [idp.issuer]);
    await page.goto(`${origin}/dashboard/`, { waitUntil: "load" });
    // the tab of the test above signed in at the provider: this browser has its session
    idp.setAccessTokenTtl(3);
    try {
      await page.waitForSelector("#oidc-button", { ...WAIT, visible: true });
      await Promise.all([page.waitForNavigation(), page.click("#oidc-button")]);
      await page.waitForFunction(() => document.getElementById("session-user")?.textContent === "alice", WAIT);
      expect(new URL(page.url()).origin).toBe(origin);
      await page.waitForFunction(() => !document.getElementById("error").hidden, WAIT);
      expect(await page.$eval("#error", (node: any) => node.textContent)).toBe("Your sign-in has expired: sign in again.");
      expect(await page.$eval("#sign-in", (node: any) => node.hidden)).toBe(false);
      expect(await page.evaluate(() => sessionStorage.getItem("dashboard.authorization"))).toBeNull();
    } finally {
      idp.setAccessTokenTtl(300);
    }
  });
});

describe("GET /graphql (the IDE) with OIDC_ISSUER and OIDC_CLIENT_ID", () => {
  it("CONTRACT §7.3 IDE: signs in through the provider (the dashboard's code flow with PKCE, back to /graphql), then opens with the schema and an example query", async () => {
    const page = await browser.open(origin, [idp.issuer]);
    const opened = await page.goto(`${origin}/graphql`, { waitUntil: "domcontentloaded" });
    // the page may call the provider's token endpoint, and nothing else outside this server
    expect(opened!.headers()["content-security-policy"]).toContain(`connect-src 'self' ${idp.issuer};`);
    await page.waitForSelector("#ide-external-button", { ...WAIT, visible: true });
    expect(await page.$eval("#ide-external-button", (node: any) => node.textContent)).toBe("Sign in with your organisation's account");

    const visited: string[] = [];
    page.on("request", (request) => {
      if (request.isNavigationRequest()) visited.push(request.url());
    });
    await Promise.all([page.waitForNavigation(), page.click("#ide-external-button")]);
    // a browser the provider already knows (the dashboard's tests signed in) comes straight back;
    // a new one logs in and consents first
    await page.waitForFunction(
      (home: string) => location.href.startsWith(home) || document.querySelector('input[name="login"], input[name="prompt"]'),
      WAIT,
      `${origin}/graphql`,
    );
    if (await page.$('input[name="login"]')) {
      await page.type('input[name="login"]', "alice@idp");
      await page.type('input[name="password"]', "any password");
      await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    }
    if (await page.$('input[name="prompt"][value="consent"]')) {
      await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    }

    await page.waitForFunction(() => document.getElementById("ide-user")?.textContent === "alice", WAIT);
    expect(visited.some((url) => url.startsWith(`${idp.issuer}/`))).toBe(true);
    // the one-time code left the address; the pending sign-in (the PKCE verifier) is gone once used
    expect(page.url()).toBe(`${origin}/graphql`);
    expect(await page.evaluate(() => sessionStorage.getItem("dashboard.oidc.pending"))).toBeNull();
    // the IDE started with the token: its example query is in the editor and the schema loaded
    await page.waitForFunction(() => document.querySelector(".graphiql-query-editor .view-lines")?.textContent?.includes("Example"), WAIT);
    await page.click('.graphiql-sidebar button[aria-label="Show Documentation Explorer"]');
    await page.waitForFunction(() => /query: ?Query/.test(document.querySelector(".graphiql-doc-explorer")?.textContent ?? ""), WAIT);
    // a token is never kept in the tab's storage: a reload asks again
    expect(await page.evaluate(() => sessionStorage.getItem("graphql-ide.authorization"))).toBeNull();
    expect(browser.pageErrors).toEqual([]);
    await page.close();
  });
});
