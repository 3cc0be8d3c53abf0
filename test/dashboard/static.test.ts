import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.ts";

/**
 * CONTRACT §7.4: the dashboard is served from the project's own files. What the server sends
 * for it: the page under a policy that lets it load only from this server (with the hash of its
 * one inline script, the import map), and of graphql-ws nothing but the browser client.
 */

let app: TestApp;
beforeAll(async () => {
  app = await build();
});
afterAll(() => app?.close());

describe("GET /dashboard/", () => {
  it("serves the page without authentication, under a policy that allows only this server", async () => {
    const res = await app.http().get("/dashboard/");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.text).toContain("<title>Upload dashboard</title>");
    const policy = res.headers["content-security-policy"];
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    // no http(s) URL anywhere in the page: nothing loads from outside
    expect(res.text).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("names the import map's hash in script-src, so that the browser runs it", async () => {
    const html = await readFile(new URL("../../src/dashboard/public/index.html", import.meta.url), "utf8");
    const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)![1];
    const hash = createHash("sha256").update(importMap).digest("base64");
    const res = await app.http().get("/dashboard/");
    expect(res.headers["content-security-policy"]).toContain(`script-src 'self' 'sha256-${hash}'`);
  });

  it("redirects /dashboard to /dashboard/, where the page's relative paths resolve", async () => {
    const res = await app.http().get("/dashboard");
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe("/dashboard/");
  });

  it("serves the page's modules as JavaScript", async () => {
    for (const file of ["dashboard.js", "api.js", "documents.js", "jobs.js", "text.js", "oidc.js"]) {
      const res = await app.http().get(`/dashboard/${file}`);
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    }
  });

  it("config.json: without OIDC_ISSUER and OIDC_CLIENT_ID the page offers no provider sign-in", async () => {
    const res = await app.http().get("/dashboard/config.json");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ oidc: null });
    expect(res.headers["content-security-policy"]).toContain("connect-src 'self';");
  });

  it("serves graphql-ws's browser client and the chunk it imports, and no other file of the package", async () => {
    const client = await app.http().get("/dashboard/vendor/graphql-ws/client.js");
    expect(client.status).toBe(200);
    expect(client.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    const chunk = /from '\.\/(common-[\w-]+\.js)'/.exec(client.text)![1];
    expect((await app.http().get(`/dashboard/vendor/graphql-ws/${chunk}`)).status).toBe(200);
    for (const other of ["index.js", "client.cjs", "use/ws.js", "../package.json", "%2e%2e/package.json"]) {
      const res = await app.http().get(`/dashboard/vendor/graphql-ws/${other}`);
      expect(res.status, other).toBe(404);
      expect(res.body).toEqual({ error: expect.any(String) });
    }
  });
});
