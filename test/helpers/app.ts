/** The whole app in process over a fresh database, for the faces (HTTP, WebSocket) tier. */
import request from "supertest";
import type { Principal } from "../../src/auth/principal.ts";
import type { Config } from "../../src/config.ts";
import type { Database } from "../../src/db/client.ts";
import { buildServer, type HttpServer } from "../../src/server.ts";
import type { Services } from "../../src/services.ts";
import { documentValidator, supertestRequest } from "./openapi.ts";
import { services, testConfig } from "./services.ts";

export { testConfig };

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
 * response, and the request when it was accepted, are as the OpenAPI document says
 * (test/helpers/openapi.ts).
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
        return test.expect((res) => validator.check(method, url, res, supertestRequest(test)));
      };
    },
  });
}

/** The whole app: the service tier's harness (test/helpers/services.ts) with the HTTP server and the job worker on top. */
export async function build(overrides: Partial<Config> = {}, wrapDb: (db: Database) => Database = (db) => db): Promise<TestApp> {
  const base = await services(overrides, wrapDb);
  const server = await buildServer(base.services);
  await base.services.worker.start();
  return {
    db: base.db,
    services: base.services,
    server,
    http: () => validatingRequest(server.app),
    root: base.root,
    async close() {
      await server.close();
      await base.services.worker.stop();
      await base.close();
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

export async function createDomain(app: Pick<TestApp, "services" | "root">, name: string): Promise<void> {
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
