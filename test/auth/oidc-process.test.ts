import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";
import { until } from "../helpers/uploads.ts";
import { startIdentityProvider, type IdentityProvider } from "./identity-provider.ts";

/**
 * CONTRACT §1 Bearer with OIDC_ISSUER on a server started as in production (scripts/start.sh,
 * the settings from the environment as docs/configuration.md lists them): the provider's token
 * admits its user on REST and GraphQL; with the provider gone, a JWT bearer is a 503 while
 * `/readyz` stays 200 and the other schemes keep working; the warning is in the log.
 */

const ADMIN = `Basic ${Buffer.from("oidcadmin:admin-Pass-1").toString("base64")}`;
const AUDIENCE = "https://gateway.example.test/api";

let idp: IdentityProvider;
let server: ServerProcess;
let dataDir: string;
let db: Database | undefined;

async function call(pathname: string, authorization: string, init: RequestInit = {}) {
  const res = await fetch(`${server.url}${pathname}`, {
    ...init,
    headers: { Authorization: authorization, "Content-Type": "application/json", ...init.headers },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text.startsWith("{") ? JSON.parse(text) : text };
}

const graphql = (query: string, authorization = ADMIN) => call("/graphql", authorization, { method: "POST", body: JSON.stringify({ query }) });

beforeAll(async () => {
  idp = await startIdentityProvider({ audience: AUDIENCE });
  dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-oidc-"));
  if (usingPostgres()) db = await freshDatabase();
  server = await startServer({
    DATA_DIR: dataDir,
    ...(db?.url ? { DATABASE_URL: db.url } : {}),
    BOOTSTRAP_ADMIN: "oidcadmin:admin-Pass-1",
    WORKERS: "0",
    OIDC_ISSUER: idp.issuer,
    OIDC_AUDIENCE: AUDIENCE,
    // a token naming a key not fetched yet makes the server fetch the keys again within a second
    OIDC_JWKS_COOLDOWN_SECONDS: "1",
  });
  const created = await graphql(
    'mutation { createDomain(name: "field") { name } createUser(input: { username: "nurse", password: "nurse-Pass-1", domain: "field", permissions: [ACCESS_API, VIEW_LOCATIONS] }) { username } }',
  );
  expect(created.body.errors).toBeUndefined();
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await idp?.close();
  await db?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("§1 OIDC on a production-started server", () => {
  it("the provider's token admits its user (sub) on REST and GraphQL", async () => {
    const { accessToken } = await idp.tokenFor("nurse");
    expect((await call("/a/field/api/location_type/v1/", `Bearer ${accessToken}`)).status).toBe(200);
    expect((await graphql("{ me { username } }", `Bearer ${accessToken}`)).body).toEqual({ data: { me: { username: "nurse" } } });
  });

  it("the provider gone: a JWT bearer is 503, /readyz stays 200, Basic still works, and the log says why", async () => {
    const { accessToken } = await idp.tokenFor("nurse");
    await idp.close();
    // the previous test's token had the key set fetched: past the cooldown (1 s here), a key the
    // server has not fetched makes it ask the provider, which is gone (within it, the answer is 401)
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const [header, payload, signature] = accessToken.split(".");
    const otherKid = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(header, "base64url").toString()), kid: "rotated-in" })).toString(
      "base64url",
    );
    const refused = await call("/a/field/api/location_type/v1/", `Bearer ${otherKid}.${payload}.${signature}`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.body.error).toMatch(/^The service is temporarily unavailable: the identity provider \(OIDC_ISSUER\) cannot be reached/);
    await until(async () => server.output().includes("OpenID Connect provider unreachable"), "the warning is logged", 5000);
    const ready = await call("/readyz", "");
    expect(ready.status).toBe(200);
    expect((await call("/a/field/api/location_type/v1/", `Basic ${Buffer.from("nurse:nurse-Pass-1").toString("base64")}`)).status).toBe(200);
  });
});
