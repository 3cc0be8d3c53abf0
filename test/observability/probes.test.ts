import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { notReadyApp } from "../../src/server.ts";
import { build, type TestApp } from "../helpers/app.ts";
import { freshDatabase } from "../helpers/db.ts";

/**
 * CONTRACT §7.2 probes: /livez answers without authentication or database; /readyz says ready only
 * while the database answers, the migrations are applied, the job queue is there and the server is
 * not stopping, and names the failing check otherwise (503).
 */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The database, with raw queries failing while `down.value` is true. */
function breakable(down: { value: boolean }) {
  return (db: Database): Database => {
    const prisma = new Proxy(db.prisma, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== "$queryRaw" || typeof value !== "function") return value;
        return (...args: unknown[]) => (down.value ? Promise.reject(new Error("connection refused")) : value.apply(target, args));
      },
    });
    return { ...db, prisma };
  };
}

describe("§7.2 /livez", () => {
  it("§7.2: 200 {status: ok} without credentials", async () => {
    app = await build();
    const res = await app.http().get("/livez");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ok");
    expect(Object.keys(res.body)[0]).toBe("status");
  });

  it("§7.2: no database round trip (answers while the database is down)", async () => {
    const down = { value: false };
    app = await build({}, breakable(down));
    down.value = true;
    expect((await app.http().get("/livez")).status).toBe(200);
  });
});

describe("§7.2 /readyz", () => {
  it("§7.2: 200 {status: ready, checks: {database: ok, …}} without credentials", async () => {
    app = await build();
    const res = await app.http().get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", jobQueue: "ok", shutdown: "ok" } });
    expect(Object.keys(res.body)).toEqual(["status", "checks"]);
  });

  it("§7.2: the database not answering → 503 {status: unavailable} naming the database check", async () => {
    const down = { value: false };
    app = await build({}, breakable(down));
    down.value = true;
    const res = await app.http().get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body.status).toBe("unavailable");
    expect(res.body.checks.database).toBe("failed");
    down.value = false;
    expect((await app.http().get("/readyz")).status).toBe(200);
  });

  it("§7.2: a migration not applied → 503 naming the migrations check", async () => {
    app = await build();
    await app.db.prisma.$executeRawUnsafe(
      "UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations)",
    );
    const res = await app.http().get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: "unavailable", checks: { database: "ok", migrations: "pending" } });
  });

  it("§7.2: once the server is stopping → 503 naming the shutdown check", async () => {
    app = await build();
    const { server, services, db } = app;
    app = undefined; // its server is closed here: the rest is closed below
    const stopping = server.close(1000);
    const res = await request(server.app).get("/readyz");
    await stopping;
    await services.worker.stop();
    await services.close();
    await db.close();
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: "unavailable", checks: { database: "ok", shutdown: "stopping" } });
  });
});

describe("§7.5 the not-ready server (MIGRATE_ON_START=false, schema behind)", () => {
  it("§7.5: /readyz 503 naming the migrations check (pending, then starting until the whole server answers); other paths 503 with Retry-After", async () => {
    const db = await freshDatabase();
    try {
      await db.prisma.$executeRawUnsafe(
        "UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations)",
      );
      const app = notReadyApp(db, { metricsToken: undefined });
      const pending = await request(app).get("/readyz");
      expect(pending.status).toBe(503);
      expect(pending.body).toEqual({ status: "unavailable", checks: { database: "ok", migrations: "pending", jobQueue: "ok", shutdown: "ok" } });
      expect((await request(app).get("/livez")).status).toBe(200);
      const refused = await request(app).get("/a/demo/api/case/v2/");
      expect(refused.status).toBe(503);
      expect(refused.headers["retry-after"]).toBe("5");
      expect(refused.body).toEqual({
        error:
          "The service is not ready: the database schema is behind this release until its migrations are applied (npm run db:migrate). Retry later.",
      });

      await db.prisma.$executeRawUnsafe("UPDATE _prisma_migrations SET rolled_back_at = NULL");
      const starting = await request(app).get("/readyz");
      expect(starting.status).toBe(503);
      expect(starting.body).toEqual({ status: "unavailable", checks: { database: "ok", migrations: "starting", jobQueue: "ok", shutdown: "ok" } });
    } finally {
      await db.close();
    }
  });
});
