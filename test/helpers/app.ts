import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import type { Principal } from "../../src/auth/principal.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import type { Database } from "../../src/db/client.ts";
import { buildServer, type HttpServer } from "../../src/server.ts";
import { createServices, type Services } from "../../src/services.ts";
import { freshDatabase } from "./db.ts";
import { documentValidator } from "./openapi.ts";

/** The whole app over a fresh database, for one test; `close()` tears both down. */
export interface TestApp {
  db: Database;
  services: Services;
  server: HttpServer;
  /**
   * supertest against the express app (no port needed). Every response from a path of the OpenAPI
   * document is checked against it: an undocumented status, header or body fails the request.
   */
  http: () => ReturnType<typeof request>;
  /** a superuser principal, for arranging data through the services */
  root: Principal;
  close(): Promise<void>;
}

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];

/**
 * supertest whose every request carries one more assertion, run before the test's own: the
 * response is as the OpenAPI document says (test/helpers/openapi.ts).
 */
export function validatingRequest(app: Parameters<typeof request>[0]): ReturnType<typeof request> {
  const agent = request(app);
  const validator = documentValidator();
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== "string" || !METHODS.includes(property) || typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const test = value.apply(target, args) as request.Test;
        // supertest's typings omit the request's method and url
        const { method, url } = test as unknown as { method: string; url: string };
        return test.expect((res) => validator.check(method, url, res));
      };
    },
  });
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ DATA_DIR: "/nonexistent" }), ...overrides };
}

export async function build(overrides: Partial<Config> = {}, wrapDb: (db: Database) => Database = (db) => db): Promise<TestApp> {
  const db = wrapDb(await freshDatabase());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-test-"));
  const services = await createServices(db, testConfig({ dataDir, ...overrides }));
  const server = await buildServer(services);
  await services.worker.start();
  const rootUser = await db.prisma.user.create({
    data: { username: "root", passwordHash: "!", digestHa1Md5: "!", digestHa1Sha256: "!", isSuperuser: true },
  });
  return {
    db,
    services,
    server,
    http: () => validatingRequest(server.app),
    root: { userId: rootUser.id, username: rootUser.username, isSuperuser: true, scheme: "apikey" },
    async close() {
      await server.close();
      await services.worker.stop();
      await services.close();
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestUser {
  username: string;
  password: string;
  apiKey: string;
  /** `ApiKey username:key` */
  authorization: string;
}

/** A domain member with the given permissions, and an API key for them. */
export async function createUser(
  app: TestApp,
  options: { username?: string; password?: string; domain?: string; permissions?: string[]; superuser?: boolean } = {},
): Promise<TestUser> {
  const username = options.username ?? `user${Math.random().toString(36).slice(2, 10)}`;
  const password = options.password ?? `pw-${Math.random().toString(36).slice(2)}`;
  await app.services.admin.createUser(app.root, {
    username,
    password,
    domain: options.domain,
    permissions: options.permissions,
    superuser: options.superuser,
  });
  const { key } = await app.services.admin.createApiKey(app.root, username);
  return { username, password, apiKey: key, authorization: `ApiKey ${username}:${key}` };
}

export async function createDomain(app: TestApp, name: string): Promise<void> {
  await app.services.admin.createDomain(app.root, name);
}

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}

/** Every value of a repeated response header, as sent (Node joins them with ", " otherwise). */
export function headerValues(res: object, name: string): string[] {
  // supertest's typings omit `res`, the underlying IncomingMessage that keeps the raw headers
  const raw = (res as { res: { rawHeaders: string[] } }).res.rawHeaders;
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === name.toLowerCase()) values.push(raw[i + 1]);
  return values;
}
