import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { openDatabase, type Database } from "../../src/db/client.ts";

describe("the embedded database's memory (EMBEDDED_DB_CACHE_MB)", () => {
  let dataDir: string | undefined;
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    db = dataDir = undefined;
  });

  it("the buffer cache is 16 MB by default, read from EMBEDDED_DB_CACHE_MB, at least 1", () => {
    expect(loadConfig({}).embeddedCacheMb).toBe(16);
    expect(loadConfig({ EMBEDDED_DB_CACHE_MB: "64" }).embeddedCacheMb).toBe(64);
    expect(() => loadConfig({ EMBEDDED_DB_CACHE_MB: "0" })).toThrow("EMBEDDED_DB_CACHE_MB must be an integer >= 1, got '0'");
  });

  it("the embedded PostgreSQL runs with that cache, PGlite's own start parameters kept", async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-db-"));
    db = await openDatabase({ dataDir, embeddedCacheMb: 24 });
    const setting = async (name: string) =>
      (await db!.pglite!.query<{ setting: string }>(`SELECT current_setting('${name}') AS setting`)).rows[0]!.setting;
    expect(await setting("shared_buffers")).toBe("24MB");
    // PGlite's defaults still apply (one of them: no parallel workers in a single-process engine)
    expect(await setting("max_parallel_workers")).toBe("0");
  }, 120_000); // a new data directory: initdb first
});
