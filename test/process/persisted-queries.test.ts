import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { sha256 } from "../../src/graphql/trusted-documents.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";

/**
 * CONTRACT §7.3 APQ "shared by every process of one database", with two real server processes on
 * one PostgreSQL database (several processes share a database only there; on the embedded one,
 * persisted-queries.test.ts runs two servers in one process).
 */

const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
const ME = "query Me { me { username } }";

async function graphql(server: ServerProcess, body: object) {
  const res = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { Authorization: ADMIN, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
}

describe.skipIf(!usingPostgres())("CONTRACT §7.3 APQ across server processes (PostgreSQL)", () => {
  const servers: ServerProcess[] = [];
  let db: Database | undefined;
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop("SIGKILL");
    await db?.close();
  });

  it("CONTRACT §7.3 APQ: a hash registered through one process is found by another process of the same database", async () => {
    db = await freshDatabase();
    const env = { DATABASE_URL: db.url!, BOOTSTRAP_ADMIN: "admin:admin-pass", WORKERS: "0" };
    // one after the other: both migrate at start, and the second waits on the first's migration lock
    const first = await startServer(env);
    const second = await startServer(env);
    servers.push(first, second);
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(ME) } };

    expect((await graphql(second, { extensions })).errors?.[0].extensions?.code).toBe("PERSISTED_QUERY_NOT_FOUND");
    expect(await graphql(first, { query: ME, extensions })).toEqual({ data: { me: { username: "admin" } } });
    // Apollo registers after it answers
    let found = await graphql(second, { extensions });
    for (let tries = 0; found.errors && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      found = await graphql(second, { extensions });
    }
    expect(found).toEqual({ data: { me: { username: "admin" } } });
  }, 120_000);
});
