import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { startTracing, stopTracing, tracedDatabase } from "../../src/observability/tracing.ts";
import { build, createDomain, createUser, type TestApp } from "../helpers/app.ts";

/**
 * CONTRACT §7.2 (optional traces): with tracing on, an HTTP request is a server span named by its
 * route pattern that joins the caller's traceparent, with its GraphQL operation and database
 * operations inside the same trace. Off (no endpoint), nothing is started.
 */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  await stopTracing();
});

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe("§7.2 OpenTelemetry traces", () => {
  it("§7.2: off without an endpoint: nothing is loaded, the database is the same object", async () => {
    expect(await startTracing({})).toBe(false);
    app = await build();
    expect(tracedDatabase(app.db)).toBe(app.db);
  });

  it("§7.2: REST: a server span per request under its route pattern, in the caller's trace, with database spans inside", async () => {
    const exporter = new InMemorySpanExporter();
    expect(await startTracing({ exporter })).toBe(true);
    app = await build({}, tracedDatabase);
    await createDomain(app, "demo");
    const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    exporter.reset();
    const res = await app.http().get("/a/demo/api/case/v2/").set("Authorization", user.authorization).set("traceparent", TRACEPARENT);
    expect(res.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    const server = spans.find((span) => span.name === "GET /a/:domain/api/case/v2/");
    expect(server).toBeDefined();
    expect(server!.spanContext().traceId).toBe(TRACE_ID);
    expect(server!.attributes["http.route"]).toBe("/a/:domain/api/case/v2/");
    expect(server!.attributes["http.response.status_code"]).toBe(200);
    const database = spans.filter((span) => span.name.startsWith("prisma "));
    expect(database.length).toBeGreaterThan(0);
    for (const span of database) expect(span.spanContext().traceId).toBe(TRACE_ID);
  });

  it("§7.2: GraphQL: an operation span by type inside the request's trace", async () => {
    const exporter = new InMemorySpanExporter();
    await startTracing({ exporter });
    app = await build({}, tracedDatabase);
    const user = await createUser(app, { superuser: true });
    exporter.reset();
    await app.http().post("/graphql").set("Authorization", user.authorization).set("traceparent", TRACEPARENT).send({ query: "{ __typename }" });
    const operation = exporter.getFinishedSpans().find((span) => span.name === "graphql query");
    expect(operation).toBeDefined();
    expect(operation!.spanContext().traceId).toBe(TRACE_ID);
    expect(operation!.attributes["graphql.operation.type"]).toBe("query");
  });
});
