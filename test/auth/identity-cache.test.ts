import request from "supertest";
import { afterEach, describe, expect, it, vi } from "vitest";
import { IdentityCache } from "../../src/auth/identity.cache.ts";
import type { Principal } from "../../src/auth/principal.ts";
import { verifyUserPassword } from "../../src/auth/secrets.ts";
import { basic, build, createDomain, createUser, type TestApp } from "../helpers/app.ts";

/**
 * Issue #16: a credential admitted lately is found again without a query or a password hash, by the
 * same credential only, and never past a change of the user's credentials or memberships.
 */

vi.mock("../../src/auth/secrets.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/auth/secrets.ts")>();
  return { ...original, verifyUserPassword: vi.fn(original.verifyUserPassword) };
});
const verifySpy = vi.mocked(verifyUserPassword);

const principal = (userId: string): Principal => ({ userId, username: userId, isSuperuser: false, scheme: "apikey" });

describe("IdentityCache", () => {
  it("issue #16: finds an entry by the same credential only", () => {
    const cache = new IdentityCache({ ttlMs: 5000, max: 10 });
    const fingerprint = cache.fingerprint("basic", "mobile:pw");
    cache.remember(cache.begin(), fingerprint, principal("u1"));
    expect(cache.find(cache.fingerprint("basic", "mobile:pw"))?.userId).toBe("u1");
    expect(cache.find(cache.fingerprint("basic", "mobile:pw2"))).toBeUndefined();
    expect(cache.find(cache.fingerprint("apikey", "mobile:pw"))).toBeUndefined();
  });

  it("issue #16: another process's key gives other fingerprints (no plain hash of a credential is held)", () => {
    expect(new IdentityCache({ ttlMs: 5000, max: 10 }).fingerprint("basic", "a:b")).not.toBe(
      new IdentityCache({ ttlMs: 5000, max: 10 }).fingerprint("basic", "a:b"),
    );
  });

  it("issue #16: forgetting a user drops their entries only", () => {
    const cache = new IdentityCache({ ttlMs: 5000, max: 10 });
    const [one, two, other] = ["k1", "k2", "k3"].map((k) => cache.fingerprint("apikey", k));
    cache.remember(cache.begin(), one!, principal("u1"));
    cache.remember(cache.begin(), two!, principal("u1"));
    cache.remember(cache.begin(), other!, principal("u2"));
    cache.forgetUser("u1");
    expect([cache.find(one!), cache.find(two!), cache.find(other!)?.userId]).toEqual([undefined, undefined, "u2"]);
  });

  it("issue #16: a lookup begun before an invalidation does not store the row it read", () => {
    const cache = new IdentityCache({ ttlMs: 5000, max: 10 });
    const fingerprint = cache.fingerprint("apikey", "k");
    const generation = cache.begin();
    cache.forgetUser("someone");
    cache.remember(generation, fingerprint, principal("u1"));
    expect(cache.find(fingerprint)).toBeUndefined();
  });

  it("issue #16: entries expire", async () => {
    const cache = new IdentityCache({ ttlMs: 30, max: 10 });
    const fingerprint = cache.fingerprint("apikey", "k");
    cache.remember(cache.begin(), fingerprint, principal("u1"));
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(cache.find(fingerprint)).toBeUndefined();
  });
});

describe("the identity cache behind REST", () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("issue #16: a Basic credential admitted lately is not hashed again; a wrong password still is, and a changed one is refused at once", async () => {
    app = await build({ workers: 0 });
    await createDomain(app, "demo");
    const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations"], password: "right" });
    const list = (authorization: string) => request(app!.server.app).get("/a/demo/api/location_type/v1/").set("Authorization", authorization);
    verifySpy.mockClear();

    for (let i = 0; i < 3; i++) expect((await list(basic(user.username, "right"))).status).toBe(200);
    expect(verifySpy).toHaveBeenCalledTimes(1);
    expect((await list(basic(user.username, "wrong"))).status).toBe(401);
    expect(verifySpy).toHaveBeenCalledTimes(2);

    await app.services.admin.createUser(app.root, { username: user.username, password: "new" });
    expect((await list(basic(user.username, "right"))).status).toBe(401);
    expect((await list(basic(user.username, "new"))).status).toBe(200);
  }, 180_000);

  it("issue #16: a member's domain check answers from the memberships found at authentication, and follows their change at once", async () => {
    app = await build({ workers: 0 });
    await createDomain(app, "demo");
    const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations"] });
    const list = () => request(app!.server.app).get("/a/demo/api/location_type/v1/").set("Authorization", user.authorization);
    expect((await list()).status).toBe(200);
    await app.services.admin.setPermissions(app.root, user.username, "demo", ["access_api"]);
    expect((await list()).status).toBe(403);
    await app.services.admin.removeMembership(app.root, user.username, "demo");
    expect((await list()).body).toEqual({ error: "You are not a member of the domain 'demo'." });
  }, 180_000);
});
