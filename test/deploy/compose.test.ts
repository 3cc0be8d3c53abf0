/**
 * CONTRACT §7.5, compose.yaml: PostgreSQL 15, a one-shot migration step, two API processes
 * (WORKERS=0) and one worker, none of which changes the schema itself. Compose cannot run here, so
 * the file is read as Compose reads it (YAML with merge keys) and its properties are pinned.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  ports?: string[];
  restart?: string;
  stop_grace_period?: string;
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const compose = parse(readFileSync(path.join(ROOT, "compose.yaml"), "utf8"), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const gateways = Object.entries(services).filter(([, service]) => service.image === "gateway");
const servers = gateways.filter(([name]) => name !== "migrate");

describe("compose.yaml", () => {
  it("§7.5: PostgreSQL 15 with a volume and a health check", () => {
    const postgres = services.postgres!;
    expect(postgres.image).toBe("postgres:15");
    expect(postgres.volumes).toEqual(["postgres-data:/var/lib/postgresql/data"]);
    expect(Object.keys(compose.volumes)).toContain("postgres-data");
    expect(postgres.healthcheck!.test).toContain("pg_isready");
  });

  it("§7.5: the gateway services are the image this repository's Dockerfile builds", () => {
    expect(gateways.map(([name]) => name).sort()).toEqual(["api-1", "api-2", "migrate", "worker"]);
    for (const [, service] of gateways) expect(service.build).toBe(".");
  });

  it("§7.5: two API processes with WORKERS=0 and one worker, none published but the API", () => {
    const workers = Object.fromEntries(servers.map(([name, service]) => [name, service.environment!.WORKERS]));
    expect(workers).toEqual({ "api-1": "0", "api-2": "0", worker: "1" });
    expect(services["api-1"]!.ports).toEqual(["8001:8000"]);
    expect(services["api-2"]!.ports).toEqual(["8002:8000"]);
    expect(services.worker!.ports).toBeUndefined();
  });

  it("§7.5: every gateway process is on the PostgreSQL service with MIGRATE_ON_START=false", () => {
    for (const [, service] of gateways) {
      expect(service.environment!.MIGRATE_ON_START).toBe("false");
      expect(service.environment!.DATABASE_URL).toMatch(/^postgresql:\/\/gateway:[^@]+@postgres:5432\/gateway$/);
    }
  });

  it("§7.5: a one-shot migrate service runs `npm run db:migrate` once PostgreSQL is healthy", () => {
    const migrate = services.migrate!;
    expect(migrate.command).toEqual(["npm", "run", "db:migrate"]);
    expect(migrate.restart).toBe("no");
    expect(migrate.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
  });

  it("§7.5: the servers start only after the migration step has succeeded", () => {
    for (const [, service] of servers) {
      expect(service.depends_on).toEqual({
        postgres: { condition: "service_healthy" },
        migrate: { condition: "service_completed_successfully" },
      });
      expect(service.restart).toBe("unless-stopped");
    }
  });

  it("§7.1: a stopped server is given more than SHUTDOWN_GRACE_SECONDS + 5 before it is killed", () => {
    for (const [, service] of servers) expect(service.stop_grace_period).toBe("20s");
    for (const [, service] of gateways) expect(service.environment!.SHUTDOWN_GRACE_SECONDS).toBeUndefined();
  });
});
