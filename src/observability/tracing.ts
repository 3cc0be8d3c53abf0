import type { RequestHandler } from "express";
import type { Database } from "../db/client.ts";
import type { GraphQLSpan, TraceHooks, TracingOptions } from "./trace-hooks.ts";

/**
 * Optional OpenTelemetry traces (CONTRACT §7.2 operations): spans for HTTP requests (joining a
 * caller's `traceparent`), GraphQL operations and database operations, exported over OTLP/HTTP
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set. Unset, no OpenTelemetry module is loaded at all (this
 * file imports only types) and each hook below is one `undefined` check.
 */

let hooks: TraceHooks | undefined;

/** Loads the OpenTelemetry SDK and turns the hooks on, when an endpoint or an exporter is given. */
export async function startTracing(options: TracingOptions): Promise<boolean> {
  if (!options.endpoint && !options.exporter) return false;
  const { otelHooks } = await import("./otel.ts");
  hooks = otelHooks(options);
  return true;
}

/** Flushes and turns the hooks off (on shutdown, and between tests). */
export async function stopTracing(): Promise<void> {
  const stopping = hooks;
  hooks = undefined;
  await stopping?.shutdown();
}

export const tracing = {
  startGraphQL: (): GraphQLSpan | undefined => hooks?.startGraphQL(),
};

/** Express middleware: the request's server span (the active context of everything it runs). */
export function traceRequests(): RequestHandler {
  return (req, res, next) => (hooks ? hooks.http(req, res, next) : next());
}

/**
 * The database with a client span around each Prisma operation, when tracing is on (the same
 * database otherwise).
 */
export function tracedDatabase(db: Database): Database {
  if (!hooks) return db;
  const traced = hooks;
  const prisma = db.prisma.$extends({
    query: {
      async $allOperations({ model, operation, args, query }) {
        return traced.database(model ? `${model}.${operation}` : operation, () => query(args));
      },
    },
  }) as unknown as Database["prisma"];
  return { ...db, prisma };
}
