import type { NextFunction, Request, Response } from "express";
import type { SpanExporter } from "@opentelemetry/sdk-trace";

/** The seam between ./tracing.ts (always loaded) and ./otel.ts (loaded only when tracing is on). */

export interface GraphQLSpan {
  end(operationType: string, operationName: string | undefined, failed: boolean): void;
}

/** What ./otel.ts provides once loaded. */
export interface TraceHooks {
  http(req: Request, res: Response, next: NextFunction): void;
  startGraphQL(): GraphQLSpan;
  database<T>(operation: string, run: () => Promise<T>): Promise<T>;
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** the collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT) */
  endpoint?: string;
  /** where spans go instead of the collector (tests: an InMemorySpanExporter) */
  exporter?: SpanExporter;
}
