import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.ts";

/**
 * CONTRACT §7.2 `GET /docs/`: a browsable page over /openapi.json, with no authentication, that
 * loads nothing from outside the server: every file it references is served here, and its
 * Content-Security-Policy forbids the browser any other origin.
 */

let app: TestApp;
beforeAll(async () => {
  app = await build();
});
afterAll(() => app.close());

/** The src/href attributes of a page. */
const references = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]);

describe("GET /docs/", () => {
  it("/docs redirects to /docs/, whose relative asset URLs resolve under it", async () => {
    const res = await app.http().get("/docs").expect(301);
    expect(res.headers.location).toBe("docs/");
  });

  it("serves the page without authentication, with a policy that allows only this server", async () => {
    const res = await app.http().get("/docs/").expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.text).toContain('id="swagger-ui"');
    const csp = String(res.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    // no directive names a host or scheme of its own
    expect(csp).not.toMatch(/https?:|\*/);
  });

  it("every file the page references, and the document its script loads, is served locally", async () => {
    const page = await app.http().get("/docs/").expect(200);
    const refs = references(page.text);
    expect(refs.length).toBeGreaterThanOrEqual(4);
    for (const ref of refs) {
      expect(ref, "a relative URL").toMatch(/^\.\//);
      const res = await app.http().get(new URL(ref, "http://server/docs/").pathname).expect(200);
      expect(Number(res.headers["content-length"] ?? res.body?.length ?? 0)).toBeGreaterThan(0);
    }
    const script = await app.http().get("/docs/docs.js").expect(200);
    expect(script.text).toContain('"../openapi.json"');
    expect(script.text).toContain("validatorUrl: null");
    await app.http().get(new URL("../openapi.json", "http://server/docs/").pathname).expect(200);
  });

  it("the stylesheet pulls in nothing from outside", async () => {
    const css = await app.http().get("/docs/swagger-ui.css").expect(200);
    const urls = [...css.text.matchAll(/url\(([^)]*)\)/g)].map((m) => m[1].replace(/["']/g, ""));
    expect(urls.filter((u) => !u.startsWith("data:"))).toEqual([]);
    expect(css.text).not.toContain("@import");
  });

  it("nothing else of the packages' folders is served", async () => {
    await app.http().get("/docs/index.html").expect(404);
    await app.http().get("/docs/package.json").expect(404);
    await app.http().get("/docs/..%2Fpackage.json").expect(404);
  });
});
