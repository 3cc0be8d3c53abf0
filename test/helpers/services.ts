/**
 * The service tier's harness: the composition root (src/services.ts) over a fresh database of its
 * own, with no HTTP server, no Apollo and no job worker running. A test calls the scopes directly
 * (`caseReads.in(principal, domain)`, `locations.in(…)`) and pins the value rules by the
 * DomainError they throw; the faces' suites keep the wire (status, message, key order).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Permission, Principal } from "../../src/auth/principal.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import type { Database } from "../../src/db/client.ts";
import { createServices, type Services } from "../../src/services.ts";
import { freshDatabase } from "./db.ts";
import { insertUser } from "./rows.ts";

export interface TestServices {
  db: Database;
  services: Services;
  /** a superuser principal, for arranging data through the services */
  root: Principal;
  /** a new user who is a member of `domain` with these permissions (no password: none is hashed), as a principal */
  member(domain: string, permissions: Permission[]): Promise<Principal>;
  /** a new domain of its own (`d1`, `d2`…): what isolates the tests that share one database */
  domain(): Promise<string>;
  close(): Promise<void>;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ DATA_DIR: "/nonexistent" }), ...overrides };
}

let domains = 0;

/** The services over a fresh database; `close()` releases both and the data directory. */
export async function services(overrides: Partial<Config> = {}, wrapDb: (db: Database) => Database = (db) => db): Promise<TestServices> {
  const db = wrapDb(await freshDatabase());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-test-"));
  const built = await createServices(db, testConfig({ dataDir, ...overrides }));
  // the one user no service can make: the first superuser (BOOTSTRAP_ADMIN's in production)
  const rootUser = await insertUser({ db }, "root", true);
  const root: Principal = { userId: rootUser.id, username: rootUser.username, isSuperuser: true, scheme: "apikey" };
  let members = 0;
  return {
    db,
    services: built,
    root,
    async member(domain, permissions) {
      members += 1;
      const user = await insertUser({ db }, `member${members}`);
      await built.admin.setPermissions(root, user.username, domain, permissions);
      return { userId: user.id, username: user.username, isSuperuser: false, scheme: "apikey" };
    },
    async domain() {
      domains += 1;
      const name = `d${domains}`;
      await built.admin.createDomain(root, name);
      return name;
    },
    async close() {
      await built.close();
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
