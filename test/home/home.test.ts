import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.ts";

/**
 * `GET /`: a page for browsers, JSON for other clients, both naming the IDE, the REST API's docs
 * page, the dashboard and the probes; served like the other pages (no script, nothing loaded from
 * outside, no framing).
 */

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

let app: TestApp;
beforeAll(async () => {
  app = await build();
});
afterAll(() => app?.close());

describe("GET /", () => {
  it("gives a browser a page linking the IDE, the docs page, the dashboard and the probes", async () => {
    const res = await app.http().get("/").set("Accept", BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    const hrefs = [...res.text.matchAll(/href="([^"]*)"/g)].map((match) => match[1]);
    // relative, so that the links also work behind a proxy's path prefix
    expect(hrefs).toEqual(["graphql", "docs/", "openapi.json", "dashboard/", "livez", "readyz", "metrics"]);
    expect(res.text).toContain("GraphQL IDE");
  });

  it("gives other clients (any Accept, or none) the same links as JSON", async () => {
    for (const accept of ["application/json", "*/*", undefined]) {
      const request = app.http().get("/");
      const res = await (accept ? request.set("Accept", accept) : request);
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(JSON.stringify(res.body)).toBe(
        JSON.stringify({
          name: "field-data-gateway",
          links: {
            graphqlIde: "/graphql",
            apiDocs: "/docs/",
            openApi: "/openapi.json",
            dashboard: "/dashboard/",
            livez: "/livez",
            readyz: "/readyz",
            metrics: "/metrics",
          },
        }),
      );
    }
  });

  it("every link it gives answers", async () => {
    const res = await app.http().get("/").set("Accept", "application/json");
    for (const path of Object.values(res.body.links as Record<string, string>)) {
      const linked = await app.http().get(path).set("Accept", BROWSER_ACCEPT);
      expect(linked.status, path).toBe(200);
    }
  });

  it("sends the pages' security headers: no script, only its own hashed style, no framing, and Vary: Accept", async () => {
    for (const accept of [BROWSER_ACCEPT, "application/json"]) {
      const res = await app.http().get("/").set("Accept", accept);
      const policy = res.headers["content-security-policy"];
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).not.toContain("script-src");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.headers.vary).toMatch(/\bAccept\b/);
    }
    const page = await app.http().get("/").set("Accept", BROWSER_ACCEPT);
    expect(page.text).not.toMatch(/<script|\son\w+=/i);
    const style = /<style>([\s\S]*?)<\/style>/.exec(page.text)![1]!;
    expect(page.headers["content-security-policy"]).toContain(`style-src 'sha256-${createHash("sha256").update(style).digest("base64")}'`);
    expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("does not link the IDE when GRAPHQL_IDE is off, only the endpoint", async () => {
    const off = await build({ graphqlIde: false });
    try {
      const json = await off.http().get("/").set("Accept", "application/json");
      expect(json.body.links).toMatchObject({ graphql: "/graphql" });
      expect(json.body.links.graphqlIde).toBeUndefined();
      const page = await off.http().get("/").set("Accept", BROWSER_ACCEPT);
      expect(page.text).not.toContain("GraphQL IDE");
    } finally {
      await off.close();
    }
  });

  it("is counted in the metrics under its own route, /", async () => {
    await app.http().get("/");
    expect((await app.http().get("/metrics")).text).toMatch(/^http_requests_total\{method="GET",route="\/",status_code="200"\} \d+$/m);
  });

  it("other methods on / stay unknown (404), as before", async () => {
    const res = await app.http().post("/").send({});
    expect(res.status).toBe(404);
  });
});
