import express from "express";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { graphqlIde } from "../../src/graphql/ide/ide.ts";
import { build, createUser, type TestApp } from "../helpers/app.ts";

/**
 * CONTRACT §7.3 IDE: `GET /graphql` from a browser serves the GraphQL IDE (Ruru, a GraphiQL) from
 * the installed package's files, opened by a sign-in step of this server's own files, with no
 * credentials; GRAPHQL_IDE=false turns it off. The IDE in a real browser: ide.browser.test.ts.
 */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** Every URL the page names in src= or href= attributes or in its module imports. */
const urlsIn = (html: string) => [...html.matchAll(/(?:src|href)="([^"]+)"|from\s+"([^"]+)"/g)].map((m) => m[1] ?? m[2]);

describe("CONTRACT §7.3 GraphQL IDE", () => {
  it("CONTRACT §7.3 IDE: GET /graphql with Accept: text/html serves the IDE page without credentials, naming only this server's files", async () => {
    app = await build({ workers: 0 });
    const res = await app.http().get("/graphql").set("Accept", BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.headers["www-authenticate"]).toBeUndefined();
    expect(res.text).toContain("ruru-root");
    const urls = urlsIn(res.text);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url, url).toMatch(/^\/graphql\/ide\//);
    // the browser itself is told to load nothing from elsewhere
    expect(res.headers["content-security-policy"]).toMatch(/default-src 'self'/);
    expect(res.text).not.toMatch(/unpkg|jsdelivr|cdn\./);
  });

  it("CONTRACT §7.3 IDE: the page's scripts and styles are served from the installed package, without credentials", async () => {
    app = await build({ workers: 0 });
    for (const file of ["ruru.js", "ruru.css", "graphqlWorker.js"]) {
      const res = await app.http().get(`/graphql/ide/${file}`).set("Accept-Encoding", "gzip");
      expect(res.status, file).toBe(200);
      expect(res.headers["content-type"], file).toMatch(file.endsWith(".css") ? /^text\/css/ : /^text\/javascript/);
      expect(res.text.length, file).toBeGreaterThan(1000);
    }
    const missing = await app.http().get("/graphql/ide/nope.js");
    expect(missing.status).toBe(401); // past the IDE's files, /graphql's admission as before
  });

  it("CONTRACT §7.3 IDE: the page opens on its sign-in step, whose script, style and icon are served without credentials", async () => {
    app = await build({ workers: 0 });
    const res = await app.http().get("/graphql").set("Accept", BROWSER_ACCEPT);
    expect(res.text).toContain('<form id="ide-sign-in-form">');
    expect(urlsIn(res.text)).toEqual(expect.arrayContaining(["/graphql/ide/sign-in.js", "/graphql/ide/sign-in.css", "/graphql/ide/favicon.svg"]));
    for (const [file, type] of [
      ["sign-in.js", /^text\/javascript/],
      ["sign-in.css", /^text\/css/],
      ["favicon.svg", /^image\/svg\+xml/],
    ] as const) {
      const asset = await app.http().get(`/graphql/ide/${file}`);
      expect(asset.status, file).toBe(200);
      expect(asset.headers["content-type"], file).toMatch(type);
    }
  });

  it("CONTRACT §7.3 IDE: another sign-in (e.g. OpenID Connect's browser flow) plugs in as a module: its button's label, its module, and the origins it may reach", async () => {
    const signIn = { label: "Sign in with Example ID", module: "/oidc/ide-sign-in.js", connectTo: async () => ["https://id.example.org"] };
    const res = await request(express().use(graphqlIde(undefined, signIn)))
      .get("/graphql")
      .set("Accept", BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    const config = JSON.parse(/<script type="application\/json" id="ide-config">([\s\S]*?)<\/script>/.exec(res.text)![1]!);
    expect(config.externalSignIn).toEqual({ label: signIn.label, module: signIn.module });
    expect(res.headers["content-security-policy"]).toContain("connect-src 'self' https://id.example.org;");
    const without = await request(express().use(graphqlIde(undefined)))
      .get("/graphql")
      .set("Accept", BROWSER_ACCEPT);
    expect(without.text).toContain('"externalSignIn": null');
    expect(without.headers["content-security-policy"]).toContain("connect-src 'self';");
  });

  it("CONTRACT §7.3 IDE: subscriptions go to this server's own graphql-transport-ws endpoint; PUBLIC_URL places it behind a proxy", async () => {
    app = await build({ workers: 0, publicUrl: "https://api.example.org/gw" });
    const res = await app.http().get("/graphql").set("Accept", "text/html");
    expect(res.text).toContain('"subscriptionEndpoint": "wss://api.example.org/gw/graphql"');
    expect(res.text).toContain('"endpoint": "/gw/graphql"');
    for (const url of urlsIn(res.text)) expect(url).toMatch(/^\/gw\/graphql\/ide\//);
  });

  it("CONTRACT §7.3 IDE: API clients on GET /graphql still get GraphQL (JSON), and need credentials", async () => {
    app = await build({ workers: 0 });
    const user = await createUser(app, { superuser: true });
    const query = encodeURIComponent("{ me { username } }");
    const api = await app.http().get(`/graphql?query=${query}`).set("Authorization", user.authorization).set("apollo-require-preflight", "1");
    expect(api.status).toBe(200);
    expect(api.body).toEqual({ data: { me: { username: user.username } } });
    const json = await app.http().get(`/graphql?query=${query}`).set("Accept", "application/json");
    expect(json.status).toBe(401);
  });

  it("CONTRACT §7.3 IDE: GRAPHQL_IDE=false turns it off: a browser's GET /graphql is an unauthenticated API request (401), no IDE file is served", async () => {
    app = await build({ workers: 0, graphqlIde: false });
    const res = await app.http().get("/graphql").set("Accept", BROWSER_ACCEPT);
    expect(res.status).toBe(401);
    expect(res.text).not.toContain("ruru-root");
    expect((await app.http().get("/graphql/ide/ruru.js")).status).toBe(401);
  });
});
