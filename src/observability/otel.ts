import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { routePattern } from "./http.ts";
import type { TraceHooks, TracingOptions } from "./trace-hooks.ts";

/**
 * The OpenTelemetry side of ./tracing.ts, loaded only when tracing is on: a tracer provider with
 * the OTLP/HTTP exporter (which reads the standard OTEL_EXPORTER_OTLP_* variables) or the given
 * exporter, W3C trace context propagation, and AsyncLocalStorage context so that database spans
 * nest under the request that caused them.
 */
export function otelHooks(options: TracingOptions): TraceHooks {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME || "field-data-gateway" }),
    // a test's exporter sees each span as it ends; the collector gets batches
    spanProcessors: [
      options.exporter ? new SimpleSpanProcessor({ exporter: options.exporter }) : new BatchSpanProcessor({ exporter: new OTLPTraceExporter() }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer("field-data-gateway");

  const failed = (span: Span, error: unknown) => {
    if (error instanceof Error) span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR });
  };

  return {
    http(req, res, next) {
      const parent = propagation.extract(context.active(), req.headers);
      const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method } }, parent);
      res.once("close", () => {
        const route = routePattern(req);
        span.updateName(`${req.method} ${route}`);
        span.setAttributes({ "http.route": route, "http.response.status_code": res.statusCode });
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      context.with(trace.setSpan(parent, span), next);
    },
    startGraphQL() {
      const span = tracer.startSpan("graphql", { kind: SpanKind.INTERNAL });
      return {
        end(operationType, operationName, hadErrors) {
          span.updateName(`graphql ${operationType}`);
          span.setAttribute("graphql.operation.type", operationType);
          if (operationName) span.setAttribute("graphql.operation.name", operationName);
          if (hadErrors) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
    database(operation, run) {
      const attributes = { "db.system.name": "postgresql", "db.operation.name": operation };
      return tracer.startActiveSpan(`prisma ${operation}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
        try {
          return await run();
        } catch (error) {
          failed(span, error);
          throw error;
        } finally {
          span.end();
        }
      });
    },
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
