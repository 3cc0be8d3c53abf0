import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";

describe("F16: PUBLIC_URL and TRUST_PROXY", () => {
  it("F16: PUBLIC_URL is kept as origin plus path prefix, without a trailing slash; unset by default", () => {
    expect(loadConfig({}).publicUrl).toBeUndefined();
    expect(loadConfig({ PUBLIC_URL: "https://api.example.org/prefix/" }).publicUrl).toBe("https://api.example.org/prefix");
    expect(loadConfig({ PUBLIC_URL: "https://API.example.org" }).publicUrl).toBe("https://api.example.org");
  });

  it("F16: a PUBLIC_URL that is no http(s) base URL stops the server at start, naming the variable", () => {
    for (const raw of ["api.example.org", "ftp://api.example.org", "https://api.example.org/?x=1", "https://u:p@api.example.org"]) {
      expect(() => loadConfig({ PUBLIC_URL: raw })).toThrow(ConfigError);
      expect(() => loadConfig({ PUBLIC_URL: raw })).toThrow(/^PUBLIC_URL /);
    }
  });

  it("F16: TRUST_PROXY is off by default, takes true/false (1/0, yes/no, on/off), and refuses anything else", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    for (const on of ["true", "1", "yes", "on", "TRUE"]) expect(loadConfig({ TRUST_PROXY: on }).trustProxy).toBe(true);
    for (const off of ["false", "0", "no", "off"]) expect(loadConfig({ TRUST_PROXY: off }).trustProxy).toBe(false);
    expect(() => loadConfig({ TRUST_PROXY: "maybe" })).toThrow("TRUST_PROXY must be true or false, got 'maybe'");
  });
});

describe("§7.5: MIGRATE_ON_START", () => {
  it("§7.5: MIGRATE_ON_START is on by default, takes true/false (1/0, yes/no, on/off), and refuses anything else", () => {
    expect(loadConfig({}).migrateOnStart).toBe(true);
    for (const on of ["true", "1", "yes", "on"]) expect(loadConfig({ MIGRATE_ON_START: on }).migrateOnStart).toBe(true);
    for (const off of ["false", "0", "no", "off", "FALSE"]) expect(loadConfig({ MIGRATE_ON_START: off }).migrateOnStart).toBe(false);
    expect(() => loadConfig({ MIGRATE_ON_START: "later" })).toThrow("MIGRATE_ON_START must be true or false, got 'later'");
  });
});

describe("§7.6: DATABASE_DIRECT_URL", () => {
  it("§7.6: DATABASE_DIRECT_URL defaults to DATABASE_URL, takes a postgresql:// URL beside it, and is refused alone or malformed, naming the variable", () => {
    expect(loadConfig({}).databaseDirectUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: "postgresql://u@pooler:6432/db" }).databaseDirectUrl).toBe("postgresql://u@pooler:6432/db");
    expect(loadConfig({ DATABASE_URL: "postgresql://u@pooler:6432/db", DATABASE_DIRECT_URL: "postgres://u@db:5432/db" }).databaseDirectUrl).toBe(
      "postgres://u@db:5432/db",
    );
    expect(() => loadConfig({ DATABASE_DIRECT_URL: "postgresql://u@db:5432/db" })).toThrow(/^DATABASE_DIRECT_URL needs DATABASE_URL/);
    expect(() => loadConfig({ DATABASE_URL: "postgresql://u@pooler/db", DATABASE_DIRECT_URL: "mysql://db" })).toThrow(
      "DATABASE_DIRECT_URL must be a postgresql:// URL",
    );
  });
});

describe("§7.6: REDIS_URL", () => {
  it("§7.6: REDIS_URL is unset by default, takes a redis:// or rediss:// URL, and refuses anything else naming the variable (never its password)", () => {
    expect(loadConfig({}).redisUrl).toBeUndefined();
    expect(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379" }).redisUrl).toBe("redis://127.0.0.1:6379");
    expect(loadConfig({ REDIS_URL: "rediss://u:p@cache.example.org:6380/2" }).redisUrl).toBe("rediss://u:p@cache.example.org:6380/2");
    expect(() => loadConfig({ REDIS_URL: "http://127.0.0.1:6379" })).toThrow(
      "REDIS_URL must be a redis:// or rediss:// URL, got 'http://127.0.0.1:6379'",
    );
    expect(() => loadConfig({ REDIS_URL: "redis://u:secret@" })).toThrow("REDIS_URL must be a redis:// or rediss:// URL, got 'redis://…@'");
  });
});
