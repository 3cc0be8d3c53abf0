import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import { basic, build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";

/** CONTRACT §6 Administration: superuser-only GraphQL mutations with fixed names. */

const CreateDomain = graphql(`
  mutation CreateDomain($name: String!) {
    createDomain(name: $name) { id name }
  }
`);
const CreateUser = graphql(`
  mutation CreateUser($input: CreateUserInput!) {
    createUser(input: $input) { id username isSuperuser memberships { domain permissions } }
  }
`);
const CreateApiKey = graphql(`
  mutation CreateApiKey($username: String!) {
    createApiKey(username: $username) { key apiKey { id prefix username revokedAt } }
  }
`);
const RevokeApiKey = graphql(`
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) { id revokedAt }
  }
`);
const SetPermissions = graphql(`
  mutation SetPermissions($username: String!, $domain: String!, $permissions: [Permission!]!) {
    setPermissions(username: $username, domain: $domain, permissions: $permissions) { domain permissions }
  }
`);
const CreateLocationType = graphql(`
  mutation CreateLocationType($domain: String!, $input: LocationTypeInput!) {
    createLocationType(domain: $domain, input: $input) { code name parentCode domain }
  }
`);
const CreateOAuthClient = graphql(`
  mutation CreateOAuthClient($input: CreateOAuthClientInput!) {
    createOAuthClient(input: $input) { clientId clientSecret client { name grants } }
  }
`);
const Listing = graphql(`
  query Listing($username: String!, $domain: String) {
    domains { name }
    users(domain: $domain) { username }
    apiKeys(username: $username) { prefix revokedAt }
  }
`);
const Me = graphql(`
  query Me {
    me { username isSuperuser memberships { domain permissions } }
  }
`);

let app: TestApp;
let admin: TestUser;

beforeEach(async () => {
  app = await build();
  admin = await createUser(app, { username: "boss", superuser: true });
});
afterEach(() => app.close());

describe("superuser mutations", () => {
  it("createDomain creates a domain and refuses a duplicate with BAD_USER_INPUT", async () => {
    const first = await gql(app, admin.authorization, CreateDomain, { name: "alpha" });
    expect(first.body.data?.createDomain.name).toBe("alpha");
    const again = await gql(app, admin.authorization, CreateDomain, { name: "alpha" });
    expect(errorCodes(again.body)).toEqual(["BAD_USER_INPUT"]);
    expect(again.body.errors?.[0].message).toBe("Domain 'alpha' already exists");
  });

  it("§7.3 createUser takes the Permission enum (the §1 names upper-cased), and the user can then authenticate", async () => {
    await createDomain(app, "alpha");
    const res = await gql(app, admin.authorization, CreateUser, {
      input: { username: "worker", password: "s3cret", domain: "alpha", permissions: ["ACCESS_API", "VIEW_LOCATIONS"] },
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data?.createUser.memberships).toEqual([{ domain: "alpha", permissions: ["ACCESS_API", "VIEW_LOCATIONS"] }]);
    const stored = await app.db.prisma.membership.findFirstOrThrow({ where: { user: { username: "worker" } } });
    expect(stored.permissions).toEqual(["access_api", "view_locations"]);
    const read = await app.http().get("/a/alpha/api/location_type/v1/").set("Authorization", basic("worker", "s3cret"));
    expect(read.status).toBe(200);
  });

  it("§7.3 createUser refuses a permission outside the enum (a lowercase §1 name too) with BAD_USER_INPUT and creates nothing", async () => {
    await createDomain(app, "alpha");
    for (const name of ["access_api", "SUPERPOWER"]) {
      const res = await app
        .http()
        .post("/graphql")
        .set("Authorization", admin.authorization)
        .send({
          query: "mutation($input: CreateUserInput!) { createUser(input: $input) { username } }",
          variables: { input: { username: "worker", password: "x", domain: "alpha", permissions: ["ACCESS_API", name] } },
        });
      expect([name, errorCodes(res.body)]).toEqual([name, ["BAD_USER_INPUT"]]);
    }
    expect(await app.db.prisma.user.findUnique({ where: { username: "worker" } })).toBeNull();
  });

  it("createUser in an unknown domain answers NOT_FOUND", async () => {
    const res = await gql(app, admin.authorization, CreateUser, {
      input: { username: "worker", password: "x", domain: "nowhere", permissions: [] },
    });
    expect(errorCodes(res.body)).toEqual(["NOT_FOUND"]);
  });

  it("createApiKey returns the key once; it authenticates; revokeApiKey stops it at once", async () => {
    await createDomain(app, "alpha");
    await gql(app, admin.authorization, CreateUser, {
      input: { username: "worker", password: "x", domain: "alpha", permissions: ["ACCESS_API", "VIEW_LOCATIONS"] },
    });
    const created = await gql(app, admin.authorization, CreateApiKey, { username: "worker" });
    const key = created.body.data!.createApiKey.key;
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect(key.startsWith(created.body.data!.createApiKey.apiKey.prefix)).toBe(true);
    const ok = await app.http().get("/a/alpha/api/location_type/v1/").set("Authorization", `ApiKey worker:${key}`);
    expect(ok.status).toBe(200);

    const listing = await gql(app, admin.authorization, Listing, { username: "worker" });
    expect(JSON.stringify(listing.body)).not.toContain(key);

    const revoked = await gql(app, admin.authorization, RevokeApiKey, { id: created.body.data!.createApiKey.apiKey.id });
    expect(revoked.body.data?.revokeApiKey.revokedAt).toBeTruthy();
    const refused = await app.http().get("/a/alpha/api/location_type/v1/").set("Authorization", `ApiKey worker:${key}`);
    expect(refused.status).toBe(401);
  });

  it("§7.3 setPermissions takes the Permission enum and replaces the user's permissions in the domain", async () => {
    await createDomain(app, "alpha");
    const worker = await createUser(app, { domain: "alpha", permissions: ["access_api", "view_locations"] });
    const res = await gql(app, admin.authorization, SetPermissions, {
      username: worker.username,
      domain: "alpha",
      permissions: ["EDIT_APPS"],
    });
    expect(res.body.data?.setPermissions).toEqual({ domain: "alpha", permissions: ["EDIT_APPS"] });
    const read = await app.http().get("/a/alpha/api/location_type/v1/").set("Authorization", worker.authorization);
    expect(read.status).toBe(403);
  });

  it("createLocationType creates root and child types; an unknown parent code is BAD_USER_INPUT", async () => {
    await createDomain(app, "alpha");
    const root = await gql(app, admin.authorization, CreateLocationType, {
      domain: "alpha",
      input: { code: "state", name: "State" },
    });
    expect(root.body.data?.createLocationType).toEqual({ code: "state", name: "State", parentCode: null, domain: "alpha" });
    const child = await gql(app, admin.authorization, CreateLocationType, {
      domain: "alpha",
      input: { code: "district", name: "District", parentCode: "state" },
    });
    expect(child.body.data?.createLocationType.parentCode).toBe("state");
    const orphan = await gql(app, admin.authorization, CreateLocationType, {
      domain: "alpha",
      input: { code: "x", name: "X", parentCode: "nope" },
    });
    expect(errorCodes(orphan.body)).toEqual(["BAD_USER_INPUT"]);
    expect(orphan.body.errors?.[0].message).toBe("LocationType 'nope' not found");
  });

  it("createOAuthClient returns the secret once and stores only its hash", async () => {
    const res = await gql(app, admin.authorization, CreateOAuthClient, { input: { name: "mobile" } });
    const { clientId, clientSecret, client } = res.body.data!.createOAuthClient;
    expect(client).toEqual({ name: "mobile", grants: ["PASSWORD", "REFRESH_TOKEN"] });
    const row = await app.db.prisma.oAuthClient.findUniqueOrThrow({ where: { clientId } });
    expect(JSON.stringify(row)).not.toContain(clientSecret);
  });

  it("domains, users and apiKeys list what exists", async () => {
    await createDomain(app, "alpha");
    await createUser(app, { username: "worker", domain: "alpha", permissions: ["access_api"] });
    const res = await gql(app, admin.authorization, Listing, { username: "worker", domain: "alpha" });
    expect(res.body.data?.domains.map((d) => d.name)).toEqual(["alpha"]);
    expect(res.body.data?.users.map((u) => u.username)).toEqual(["worker"]);
    expect(res.body.data?.apiKeys).toHaveLength(1);
  });
});

describe("names PostgreSQL cannot hold (NUL, unpaired surrogates)", () => {
  const BAD = ["a\u0000b", "\udfff\udfff", "x\ud800", "\u0000"];
  /** the error codes of a raw GraphQL request as the superuser */
  const codesOf = async (query: string, variables: Record<string, unknown>) => {
    const res = await app.http().post("/graphql").set("Authorization", admin.authorization).send({ query, variables });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
    return { codes: errorCodes(res.body), message: res.body.errors?.[0]?.message as string | undefined };
  };
  const tables = async () => {
    const p = app.db.prisma;
    return Promise.all([
      p.user.count(),
      p.domain.count(),
      p.membership.count(),
      p.apiKey.count(),
      p.oAuthClient.count(),
      p.user.count({ where: { isActive: false } }),
    ]);
  };

  beforeEach(async () => {
    await createDomain(app, "alpha");
    await createUser(app, { username: "worker", domain: "alpha", permissions: ["access_api"] });
  });

  it.each(BAD.map((bad) => [JSON.stringify(bad), bad]))(
    "a user or domain named %s is NOT_FOUND, as any unknown name, and nothing changes",
    async (_name, bad) => {
      const before = await tables();
      const lookups: [string, Record<string, unknown>][] = [
        ["mutation($u: String!) { setUserActive(username: $u, active: false) { id } }", { u: bad }],
        [
          "mutation($u: String!, $d: String!) { setPermissions(username: $u, domain: $d, permissions: [ACCESS_API]) { domain } }",
          { u: bad, d: "alpha" },
        ],
        [
          "mutation($u: String!, $d: String!) { setPermissions(username: $u, domain: $d, permissions: [ACCESS_API]) { domain } }",
          { u: "worker", d: bad },
        ],
        ["mutation($u: String!, $d: String!) { removeMembership(username: $u, domain: $d) }", { u: bad, d: "alpha" }],
        ["mutation($u: String!, $d: String!) { removeMembership(username: $u, domain: $d) }", { u: "worker", d: bad }],
        ["mutation($u: String!) { createApiKey(username: $u) { key } }", { u: bad }],
        ['mutation($u: String!) { createOAuthClient(input: { name: "c", grants: [CLIENT_CREDENTIALS], username: $u }) { clientId } }', { u: bad }],
        ["mutation($u: String!) { revokeOAuthTokens(username: $u) }", { u: bad }],
        ['mutation($d: String!) { createUser(input: { username: "newbie", password: "pw", domain: $d }) { id } }', { d: bad }],
        ["query($u: String!) { apiKeys(username: $u) { id } }", { u: bad }],
        ["query($d: String!) { users(domain: $d) { id } }", { d: bad }],
      ];
      for (const [query, variables] of lookups) {
        expect((await codesOf(query, variables)).codes, query).toEqual(["NOT_FOUND"]);
      }
      expect(await tables()).toEqual(before);
    },
  );

  it.each(BAD.map((bad) => [JSON.stringify(bad), bad]))(
    "a name %s to store is BAD_USER_INPUT with a clear message, and nothing is created",
    async (_name, bad) => {
      const before = await tables();
      const user = await codesOf('mutation($u: String!) { createUser(input: { username: $u, password: "pw" }) { id } }', { u: bad });
      expect(user.codes).toEqual(["BAD_USER_INPUT"]);
      const key = await codesOf('mutation($n: String) { createApiKey(username: "worker", name: $n) { key } }', { n: bad });
      expect(key).toEqual({ codes: ["BAD_USER_INPUT"], message: "An API key name cannot contain the NUL character or an unpaired surrogate." });
      const client = await codesOf("mutation($n: String!) { createOAuthClient(input: { name: $n }) { clientId } }", { n: bad });
      expect(client).toEqual({ codes: ["BAD_USER_INPUT"], message: "A client name cannot contain the NUL character or an unpaired surrogate." });
      expect(await tables()).toEqual(before);
    },
  );
});

describe("non-superusers", () => {
  let worker: TestUser;
  beforeEach(async () => {
    await createDomain(app, "alpha");
    worker = await createUser(app, { domain: "alpha", permissions: ["access_api", "edit_data"] });
  });

  it.each([
    ["createDomain", () => gql(app, worker.authorization, CreateDomain, { name: "beta" })],
    ["createUser", () => gql(app, worker.authorization, CreateUser, { input: { username: "x", password: "y", domain: "alpha" } })],
    ["createApiKey", () => gql(app, worker.authorization, CreateApiKey, { username: worker.username })],
    ["createLocationType", () => gql(app, worker.authorization, CreateLocationType, { domain: "alpha", input: { code: "c", name: "C" } })],
    ["createOAuthClient", () => gql(app, worker.authorization, CreateOAuthClient, { input: { name: "m" } })],
    ["listing", () => gql(app, worker.authorization, Listing, { username: worker.username })],
  ])("are refused %s with FORBIDDEN and nothing changes", async (_name, call) => {
    const before = await app.db.prisma.domain.count();
    const res = await call();
    expect(errorCodes(res.body)[0]).toBe("FORBIDDEN");
    expect(await app.db.prisma.domain.count()).toBe(before);
  });

  it("see themselves through `me`, their permissions as the Permission enum", async () => {
    const res = await gql(app, worker.authorization, Me);
    expect(res.body.data?.me).toEqual({
      username: worker.username,
      isSuperuser: false,
      memberships: [{ domain: "alpha", permissions: ["ACCESS_API", "EDIT_DATA"] }],
    });
  });
});

describe("GraphQL authentication", () => {
  it("answers 401 with UNAUTHENTICATED and challenges when no credentials are sent", async () => {
    const res = await gql(app, undefined, Me);
    expect(res.status).toBe(401);
    expect(errorCodes(res.body)).toEqual(["UNAUTHENTICATED"]);
  });
});
