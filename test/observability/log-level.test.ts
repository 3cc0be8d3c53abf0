import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { LOG_LEVELS } from "../../src/log.ts";

/** The reproduction: LOG_LEVEL=debug stopped the server at start. */
describe("LOG_LEVEL", () => {
  it.each(["fatal", "error", "warn", "info", "debug", "trace", "silent", "DEBUG"])("accepts %s (every level pino knows, and silent)", (level) => {
    expect(LOG_LEVELS).toContain(level.toLowerCase());
    expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level.toLowerCase());
  });

  it("defaults to info", () => {
    expect(loadConfig({}).logLevel).toBe("info");
  });

  it("refuses an unknown level at start, naming the variable and the levels", () => {
    expect(() => loadConfig({ LOG_LEVEL: "verbose" })).toThrow(
      "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got 'verbose'",
    );
  });
});

describe("METRICS_TOKEN and OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("are off by default", () => {
    const config = loadConfig({});
    expect(config.metricsToken).toBeUndefined();
    expect(config.otelEndpoint).toBeUndefined();
  });

  it("take a token and an http(s) URL; anything else as the endpoint is refused at start", () => {
    expect(loadConfig({ METRICS_TOKEN: "t0k" }).metricsToken).toBe("t0k");
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).otelEndpoint).toBe("http://collector:4318");
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow("OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL");
  });
});
