import { afterEach, describe, expect, it } from "vitest";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { build, createDomain, createUser, type TestApp } from "../helpers/app.ts";

/**
 * CONTRACT §7.2 /metrics: Prometheus text 0.0.4, open unless METRICS_TOKEN is set, and labelled by
 * route pattern, never by raw path.
 */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe("§7.2 /metrics", () => {
  it("§7.2: 200 in text/plain; version=0.0.4 without credentials when METRICS_TOKEN is unset", async () => {
    app = await build();
    const res = await app.http().get("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const family of ["process_cpu_seconds_total", "nodejs_heap_size_used_bytes", "multimedia_jobs", "database_pool_connections"]) {
      expect(res.text).toContain(`# TYPE ${family} `);
    }
    expect(res.text).toMatch(/^multimedia_jobs\{state="queued"\} 0$/m);
  });

  it("§7.2: with METRICS_TOKEN, no or a wrong bearer → 401; the token → 200", async () => {
    app = await build({ metricsToken: "scrape-Token-1" });
    expect((await app.http().get("/metrics")).status).toBe(401);
    expect((await app.http().get("/metrics").set("Authorization", "Bearer scrape-Token-2")).status).toBe(401);
    expect((await app.http().get("/metrics").set("Authorization", "Basic c2NyYXBlOlRva2Vu")).status).toBe(401);
    const res = await app.http().get("/metrics").set("Authorization", "Bearer scrape-Token-1");
    expect(res.status).toBe(200);
    expect(res.text).toContain("# TYPE http_requests_total counter");
  });

  it("§7.2: requests are labelled by route pattern; an unknown path by one fixed label", async () => {
    app = await build();
    await createDomain(app, "metricsdomain");
    const user = await createUser(app, { domain: "metricsdomain", permissions: ["access_api", "edit_data"] });
    await app.http().get("/a/metricsdomain/api/case/v2/case-id-7788").set("Authorization", user.authorization);
    await app.http().get("/a/metricsdomain/api/case/v2/ext/ext-id-5566/").set("Authorization", user.authorization);
    await app.http().get("/some/raw/path-9911");
    const text = (await app.http().get("/metrics")).text;
    expect(text).toContain('http_requests_total{method="GET",route="/a/:domain/api/case/v2/:caseId",status_code="404"}');
    expect(text).toContain('http_requests_total{method="GET",route="/a/:domain/api/case/v2/ext/{*rest}",status_code="404"}');
    expect(text).toContain('http_requests_total{method="GET",route="unknown",status_code="404"}');
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="unknown",status_code="404"\} \d+$/m);
    for (const value of ["metricsdomain", user.username, "case-id-7788", "ext-id-5566", "path-9911"]) expect(text).not.toContain(value);
  });

  it("§7.2: GraphQL operations are counted and timed by operation type", async () => {
    app = await build();
    const user = await createUser(app, { superuser: true });
    const before = (await app.http().get("/metrics")).text;
    const count = (text: string, type: string) =>
      Number(new RegExp(`^graphql_operations_total\\{operation_type="${type}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    await app.http().post("/graphql").set("Authorization", user.authorization).send({ query: "query Mine { __typename }" });
    await app.http().post("/graphql").set("Authorization", user.authorization).send({ query: "{ nope }" });
    const after = (await app.http().get("/metrics")).text;
    expect(count(after, "query") - count(before, "query")).toBe(1);
    expect(count(after, "unknown") - count(before, "unknown")).toBe(1);
    expect(after).toContain('graphql_operation_duration_seconds_count{operation_type="query"}');
    expect(after).not.toContain("Mine");
    expect(after).toContain('http_requests_total{method="POST",route="/graphql",status_code="200"}');
  });

  it("§7.2: operation_name labels only the operations of the trusted-documents manifest", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "manifest-"));
    const manifest = path.join(dir, "manifest.json");
    const trusted = "query TrustedProbe { __typename }";
    await writeFile(manifest, JSON.stringify({ probe: trusted }));
    try {
      app = await build({ persistedOperations: "only", persistedOperationsManifest: manifest });
      const user = await createUser(app, { superuser: true });
      await app.http().post("/graphql").set("Authorization", user.authorization).send({ query: trusted });
      const refused = await app.http().post("/graphql").set("Authorization", user.authorization).send({ query: "query ClientChosen { __typename }" });
      expect(refused.status).toBe(403);
      const text = (await app.http().get("/metrics")).text;
      expect(text).toMatch(/^graphql_operations_total\{operation_type="query",operation_name="TrustedProbe"\} 1$/m);
      expect(text).not.toContain("ClientChosen");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
