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

export interface TestServices {
  db: Database;
  services: Services;
  /** a superuser principal, for arranging data through the services */
  root: Principal;
  /**
   * A user who is a member of `domain` with these permissions, as an API-key principal. One user per
   * permission set, granted each domain asked for: a password is hashed once, not per test.
   */
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
  // the one user no service can make: the first superuser (the CLI's job in production)
  const rootUser = await db.prisma.user.create({
    data: { username: "root", passwordHash: "!", digestHa1Md5: "!", digestHa1Sha256: "!", isSuperuser: true },
  });
  const root: Principal = { userId: rootUser.id, username: rootUser.username, isSuperuser: true, scheme: "apikey" };
  const members = new Map<string, Principal>();
  return {
    db,
    services: built,
    root,
    async member(domain, permissions) {
      const key = [...permissions].sort().join(",");
      const known = members.get(key);
      if (known) {
        await built.admin.setPermissions(root, known.username, domain, permissions);
        return known;
      }
      const username = `member${members.size + 1}`;
      const user = await built.admin.createUser(root, { username, password: `pw-${username}`, domain, permissions });
      const principal: Principal = { userId: user.id, username, isSuperuser: false, scheme: "apikey" };
      members.set(key, principal);
      return principal;
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
