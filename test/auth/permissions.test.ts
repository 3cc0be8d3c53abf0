import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ACCESS, authorize, satisfies, type Access, type Requirement } from "../../src/auth/permissions.ts";
import { PERMISSIONS, type Principal } from "../../src/auth/principal.ts";
import { DomainError } from "../../src/errors.ts";
import { basic, build, createDomain, createUser, type TestApp } from "../helpers/app.ts";
import { countCases, domainRow, insertMembership, insertUser } from "../helpers/rows.ts";

/**
 * CONTRACT §1 Permissions: the permission table (per user, per domain; a superuser has all, in
 * every domain), the 403 for non-members and missing permissions, the 404-vs-403 rule for unknown
 * domains, and the error body of each REST family.
 */

// ---------------------------------------------------------------------------------------------
// The contract's table, written out independently of src/ so that the code is checked against it.
// ---------------------------------------------------------------------------------------------

const CONTRACT: Record<Access, (granted: ReadonlySet<string>) => boolean> = {
  caseRead: (g) => g.has("access_api") && (g.has("view_data") || g.has("edit_data")),
  caseWrite: (g) => g.has("access_api") && g.has("edit_data"),
  locationRead: (g) => g.has("access_api") && (g.has("view_locations") || g.has("edit_locations")),
  locationWrite: (g) => g.has("access_api") && g.has("edit_locations"),
  apps: (g) => g.has("edit_apps"),
};
const ACCESSES = Object.keys(CONTRACT) as Access[];

/** Every subset of the six permission names (64 of them). */
function allSubsets(): string[][] {
  const out: string[][] = [];
  for (let mask = 0; mask < 1 << PERMISSIONS.length; mask++) {
    out.push(PERMISSIONS.filter((_, i) => mask & (1 << i)));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// satisfies() and the ACCESS table: pure, no database.
// ---------------------------------------------------------------------------------------------

describe("the ACCESS table", () => {
  it("has exactly the five rows of the contract, with the contract's requirements", () => {
    expect(Object.keys(ACCESS).sort()).toEqual([...ACCESSES].sort());
    const normalise = (r: Requirement) => ({ all: [...r.all].sort(), anyOf: r.anyOf ? [...r.anyOf].sort() : undefined });
    expect(normalise(ACCESS.caseRead)).toEqual({ all: ["access_api"], anyOf: ["edit_data", "view_data"] });
    expect(normalise(ACCESS.caseWrite)).toEqual({ all: ["access_api", "edit_data"], anyOf: undefined });
    expect(normalise(ACCESS.locationRead)).toEqual({ all: ["access_api"], anyOf: ["edit_locations", "view_locations"] });
    expect(normalise(ACCESS.locationWrite)).toEqual({ all: ["access_api", "edit_locations"], anyOf: undefined });
    expect(normalise(ACCESS.apps)).toEqual({ all: ["edit_apps"], anyOf: undefined });
  });

  it("names only the six permissions of the contract", () => {
    expect([...PERMISSIONS].sort()).toEqual(["access_api", "edit_apps", "edit_data", "edit_locations", "view_data", "view_locations"]);
    for (const requirement of Object.values(ACCESS) as Requirement[]) {
      for (const p of [...requirement.all, ...(requirement.anyOf ?? [])]) expect(PERMISSIONS).toContain(p);
    }
  });
});

describe("satisfies()", () => {
  it.each([
    // caseRead: access_api + (view_data | edit_data)
    ["caseRead", ["access_api", "view_data"], true],
    ["caseRead", ["access_api", "edit_data"], true],
    ["caseRead", ["access_api", "view_data", "edit_data"], true],
    ["caseRead", ["view_data"], false],
    ["caseRead", ["edit_data"], false],
    ["caseRead", ["view_data", "edit_data"], false],
    ["caseRead", ["access_api"], false],
    ["caseRead", ["access_api", "view_locations", "edit_locations", "edit_apps"], false],
    ["caseRead", [], false],
    // caseWrite: access_api + edit_data
    ["caseWrite", ["access_api", "edit_data"], true],
    ["caseWrite", ["access_api", "view_data"], false],
    ["caseWrite", ["edit_data"], false],
    ["caseWrite", ["access_api"], false],
    ["caseWrite", ["access_api", "edit_locations", "edit_apps", "view_data"], false],
    // locationRead: access_api + (view_locations | edit_locations)
    ["locationRead", ["access_api", "view_locations"], true],
    ["locationRead", ["access_api", "edit_locations"], true],
    ["locationRead", ["view_locations"], false],
    ["locationRead", ["edit_locations"], false],
    ["locationRead", ["access_api"], false],
    ["locationRead", ["access_api", "view_data", "edit_data", "edit_apps"], false],
    // locationWrite: access_api + edit_locations
    ["locationWrite", ["access_api", "edit_locations"], true],
    ["locationWrite", ["access_api", "view_locations"], false],
    ["locationWrite", ["edit_locations"], false],
    ["locationWrite", ["access_api", "edit_data"], false],
    // apps: edit_apps alone, no access_api needed
    ["apps", ["edit_apps"], true],
    ["apps", ["access_api", "edit_apps"], true],
    ["apps", ["access_api"], false],
    ["apps", ["access_api", "view_data", "edit_data", "view_locations", "edit_locations"], false],
    ["apps", [], false],
  ] as [Access, string[], boolean][])("%s with %j is %s", (access, granted, expected) => {
    expect(satisfies(granted, ACCESS[access])).toBe(expected);
  });

  it.each(ACCESSES)("%s: agrees with the contract's table for all 64 combinations of permissions", (access) => {
    const wrong: string[] = [];
    for (const granted of allSubsets()) {
      const expected = CONTRACT[access](new Set(granted));
      if (satisfies(granted, ACCESS[access]) !== expected) wrong.push(`${JSON.stringify(granted)} should be ${expected}`);
    }
    expect(wrong).toEqual([]);
  });

  it("does not depend on the order of the granted permissions or on duplicates", () => {
    expect(satisfies(["edit_data", "access_api"], ACCESS.caseWrite)).toBe(true);
    expect(satisfies(["view_data", "view_data", "access_api", "access_api"], ACCESS.caseRead)).toBe(true);
    expect(satisfies(["edit_data", "edit_data"], ACCESS.caseWrite)).toBe(false);
  });

  it("is not fooled by unknown names or names in another case", () => {
    expect(satisfies(["superuser", "admin", "*", "all"], ACCESS.apps)).toBe(false);
    expect(satisfies(["ACCESS_API", "EDIT_DATA"], ACCESS.caseWrite)).toBe(false);
    expect(satisfies(["access_api ", " edit_data"], ACCESS.caseWrite)).toBe(false);
    expect(satisfies(["access_apis", "edit_data"], ACCESS.caseWrite)).toBe(false);
  });

  it("needs every `all` permission and at least one `anyOf` permission of a requirement", () => {
    const requirement: Requirement = { all: ["access_api", "edit_apps"], anyOf: ["view_data", "view_locations"] };
    expect(satisfies(["access_api", "edit_apps", "view_locations"], requirement)).toBe(true);
    expect(satisfies(["access_api", "edit_apps"], requirement)).toBe(false);
    expect(satisfies(["access_api", "view_data"], requirement)).toBe(false);
    expect(satisfies(["access_api", "edit_apps", "view_data"], { all: ["access_api", "edit_apps"] })).toBe(true);
  });
});

let app: TestApp;

describe("against the app (domains demo and other)", () => {
  beforeEach(async () => {
    app = await build();
    await createDomain(app, "demo");
    await createDomain(app, "other");
  });
  afterEach(() => app.close());

  // ---------------------------------------------------------------------------------------------
  // authorize(): against a database.
  // ---------------------------------------------------------------------------------------------

  /** A user (no password work: authorize() never looks at it), with a membership per entry of `domains`. */
  async function principalWith(domains: Record<string, string[]>, superuser = false): Promise<Principal> {
    const username = `p${Math.random().toString(36).slice(2, 12)}`;
    const user = await insertUser(app, username, superuser);
    for (const [name, permissions] of Object.entries(domains)) await insertMembership(app, user.id, name, permissions);
    return { userId: user.id, username, isSuperuser: superuser, scheme: "apikey" };
  }

  /** The DomainError authorize() rejects with (fails the test when it resolves or throws anything else). */
  async function refusal(principal: Principal, domain: string, access: Access): Promise<DomainError> {
    const error = await authorize(app.db.prisma, principal, domain, access).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, `authorize(${domain}, ${access}) should be refused`).toBeInstanceOf(DomainError);
    return error as DomainError;
  }

  describe("authorize()", () => {
    it("agrees with the contract's table for a member holding each of the 64 combinations", async () => {
      const demo = await domainRow(app, "demo");
      const wrong: string[] = [];
      for (const granted of allSubsets()) {
        const principal = await principalWith({ demo: granted });
        for (const access of ACCESSES) {
          const expected = CONTRACT[access](new Set(granted));
          const outcome = await authorize(app.db.prisma, principal, "demo", access).then(
            (d) => ({ ok: true as const, d }),
            (e: unknown) => ({ ok: false as const, e }),
          );
          if (outcome.ok !== expected) {
            wrong.push(`${access} with ${JSON.stringify(granted)}: expected ${expected ? "allowed" : "403"}`);
          } else if (outcome.ok) {
            if (outcome.d.id !== demo.id || outcome.d.name !== "demo") wrong.push(`${access}: wrong domain ${JSON.stringify(outcome.d)}`);
          } else if (!(outcome.e instanceof DomainError) || outcome.e.code !== "FORBIDDEN" || outcome.e.status !== 403) {
            wrong.push(`${access} with ${JSON.stringify(granted)}: refused with ${String(outcome.e)} instead of a 403`);
          }
        }
      }
      expect(wrong).toEqual([]);
    });

    it("returns the id and name of the domain", async () => {
      const principal = await principalWith({ demo: ["access_api", "view_data"] });
      const demo = await domainRow(app, "demo");
      expect(await authorize(app.db.prisma, principal, "demo", "caseRead")).toEqual({ id: demo.id, name: "demo" });
    });

    it("refuses a non-member with a 403 FORBIDDEN for every operation", async () => {
      const principal = await principalWith({});
      for (const access of ACCESSES) {
        const error = await refusal(principal, "demo", access);
        expect(error.code).toBe("FORBIDDEN");
        expect(error.status).toBe(403);
        expect(error.message).toEqual(expect.any(String));
        expect(error.message.length).toBeGreaterThan(0);
      }
    });

    it("refuses a member whose membership has no permissions at all", async () => {
      const principal = await principalWith({ demo: [] });
      for (const access of ACCESSES) expect((await refusal(principal, "demo", access)).status).toBe(403);
    });

    it("grants nothing in one domain for a membership in another", async () => {
      const principal = await principalWith({ demo: [...PERMISSIONS] });
      for (const access of ACCESSES) {
        await expect(authorize(app.db.prisma, principal, "demo", access)).resolves.toMatchObject({ name: "demo" });
        expect((await refusal(principal, "other", access)).status).toBe(403);
      }
    });

    it("keeps each domain's permissions separate for a member of two domains", async () => {
      const principal = await principalWith({ demo: ["access_api", "view_data"], other: ["edit_apps"] });
      await expect(authorize(app.db.prisma, principal, "demo", "caseRead")).resolves.toMatchObject({ name: "demo" });
      expect((await refusal(principal, "demo", "apps")).status).toBe(403);
      await expect(authorize(app.db.prisma, principal, "other", "apps")).resolves.toMatchObject({ name: "other" });
      expect((await refusal(principal, "other", "caseRead")).status).toBe(403);
    });

    it("gives a superuser every operation in every existing domain without any membership", async () => {
      const root = await principalWith({}, true);
      for (const domain of ["demo", "other"]) {
        const row = await domainRow(app, domain);
        for (const access of ACCESSES) {
          await expect(authorize(app.db.prisma, root, domain, access)).resolves.toEqual({ id: row.id, name: domain });
        }
      }
    });

    it("gives a superuser everything even where their own membership lists no permissions", async () => {
      const root = await principalWith({ demo: [] }, true);
      for (const access of ACCESSES) {
        await expect(authorize(app.db.prisma, root, "demo", access)).resolves.toMatchObject({ name: "demo" });
      }
    });

    it("answers a superuser 404 NOT_FOUND for an unknown domain", async () => {
      const root = await principalWith({}, true);
      for (const access of ACCESSES) {
        const error = await refusal(root, "nosuch", access);
        expect(error.code).toBe("NOT_FOUND");
        expect(error.status).toBe(404);
      }
    });

    it("answers anyone else an unknown domain exactly as an existing domain they are not in", async () => {
      const principal = await principalWith({ demo: [...PERMISSIONS] });
      for (const access of ACCESSES) {
        const unknown = await refusal(principal, "nosuch", access);
        const existing = await refusal(principal, "other", access);
        expect(unknown.code).toBe("FORBIDDEN");
        expect(unknown.status).toBe(403);
        expect({ code: unknown.code, status: unknown.status, extra: unknown.extra, headers: unknown.headers }).toEqual({
          code: existing.code,
          status: existing.status,
          extra: existing.extra,
          headers: existing.headers,
        });
        // The message may name the domain asked for, but must say nothing else different.
        expect(unknown.message.replaceAll("nosuch", "<d>")).toBe(existing.message.replaceAll("other", "<d>"));
      }
    });
  });

  // ---------------------------------------------------------------------------------------------
  // Over HTTP. "Allowed" is judged as "not refused": an allowed request may still be a 200, a 400
  // (empty payload) or a 404 (no such case, or an endpoint that does not exist yet), but never a
  // 401, a 403 or a 5xx. A refusal is exactly a 403 in the family's error shape.
  // ---------------------------------------------------------------------------------------------

  type Method = "get" | "head" | "post" | "put" | "patch" | "delete";
  interface Op {
    family: "case" | "location" | "location_type" | "apps";
    method: Method;
    path: (domain: string) => string;
    access: Access;
    body?: unknown;
  }

  const CASE_ID = "0f6b8f5e-3c1a-4d2e-9b7a-1c2d3e4f5a6b";
  const casePath = (d: string) => `/a/${d}/api/case/v2/`;
  const locationPath = (d: string) => `/a/${d}/api/location/v2/`;
  const locationTypePath = (d: string) => `/a/${d}/api/location_type/v1/`;
  const appsPath = (d: string) => `/a/${d}/apps/api/import_app/`;
  const NEW_CASE = { case_type: "patient", case_name: "Ann", owner_id: "owner-1" };

  const OPS: Op[] = [
    // Case API: the operations the seed defines (reads need caseRead, writes caseWrite)
    { family: "case", method: "get", path: casePath, access: "caseRead" },
    { family: "case", method: "head", path: casePath, access: "caseRead" },
    { family: "case", method: "get", path: (d) => `${casePath(d)}${CASE_ID}`, access: "caseRead" },
    { family: "case", method: "get", path: (d) => `${casePath(d)}${CASE_ID},other-id`, access: "caseRead" },
    { family: "case", method: "get", path: (d) => `${casePath(d)}ext/some%2Fext%20id/`, access: "caseRead" },
    { family: "case", method: "post", path: (d) => `${casePath(d)}bulk-fetch/`, access: "caseRead", body: { case_ids: [CASE_ID] } },
    { family: "case", method: "post", path: casePath, access: "caseWrite", body: NEW_CASE },
    { family: "case", method: "put", path: casePath, access: "caseWrite", body: [{ ...NEW_CASE, create: true }] },
    { family: "case", method: "put", path: (d) => `${casePath(d)}${CASE_ID}`, access: "caseWrite", body: { case_name: "x" } },
    { family: "case", method: "put", path: (d) => `${casePath(d)}ext/e-1/`, access: "caseWrite", body: NEW_CASE },
    // Location API (reads asked for in JSON: the default format is XML)
    { family: "location", method: "get", path: (d) => `${locationPath(d)}?format=json`, access: "locationRead" },
    { family: "location", method: "head", path: (d) => `${locationPath(d)}?format=json`, access: "locationRead" },
    { family: "location", method: "get", path: (d) => `${locationPath(d)}loc-1?format=json`, access: "locationRead" },
    { family: "location", method: "post", path: locationPath, access: "locationWrite", body: {} },
    { family: "location", method: "put", path: (d) => `${locationPath(d)}loc-1`, access: "locationWrite", body: {} },
    { family: "location", method: "patch", path: locationPath, access: "locationWrite", body: { objects: [] } },
    { family: "location_type", method: "get", path: locationTypePath, access: "locationRead" },
    // Import App API
    { family: "apps", method: "post", path: appsPath, access: "apps", body: {} },
    { family: "apps", method: "post", path: (d) => `/a/${d}/apps/api/app-1/multimedia/`, access: "apps", body: {} },
    { family: "apps", method: "get", path: (d) => `/a/${d}/apps/api/app-1/multimedia/status/dl-${"0".repeat(32)}/`, access: "apps" },
  ];

  const label = (op: Op, domain: string) => `${op.method.toUpperCase()} ${op.path(domain)}`;

  function send(op: Op, domain: string, authorization?: string) {
    const req = app.http()[op.method](op.path(domain));
    if (authorization !== undefined) req.set("Authorization", authorization);
    return op.body === undefined ? req : req.send(op.body as object);
  }

  type Res = Awaited<ReturnType<typeof send>>;

  /** Why `res` is not the family's 403 (undefined when it is). */
  function notRefusal(op: Op, res: Res): string | undefined {
    if (res.status !== 403) return `${res.status} (expected 403) ${res.text ?? ""}`;
    if (!String(res.headers["content-type"]).startsWith("application/json")) return "not JSON";
    if (op.method === "head") return undefined;
    const keys = op.family === "apps" ? ["success", "error"] : ["error"];
    if (JSON.stringify(Object.keys(res.body)) !== JSON.stringify(keys)) return `body ${res.text}`;
    if (typeof res.body.error !== "string" || !res.body.error) return `error ${res.text}`;
    if (op.family === "apps" && res.body.success !== false) return `success ${res.text}`;
    return undefined;
  }

  /** Why `res` is not an allowed answer (undefined when it is). */
  function notAllowed(op: Op, res: Res): string | undefined {
    if (res.status === 401 || res.status === 403 || res.status >= 500) return `${res.status} (expected allowed) ${res.text ?? ""}`;
    if (!String(res.headers["content-type"]).startsWith("application/json")) return "not JSON";
    if (op.method === "head" || res.status < 400) return undefined;
    const keys = op.family === "apps" ? ["success", "error"] : ["error"];
    if (JSON.stringify(Object.keys(res.body).slice(0, keys.length)) !== JSON.stringify(keys)) return `error body ${res.text}`;
    return undefined;
  }

  /** Runs every operation; returns the disagreements with `expectAllowed` (empty when all is well). */
  async function mismatches(domain: string, authorization: string, expectAllowed: (op: Op) => boolean): Promise<string[]> {
    const wrong: string[] = [];
    for (const op of OPS) {
      const res = await send(op, domain, authorization);
      const problem = expectAllowed(op) ? notAllowed(op, res) : notRefusal(op, res);
      if (problem) wrong.push(`${label(op, domain)}: ${problem}`);
    }
    return wrong;
  }

  describe("each REST family enforces the contract's table", () => {
    it("for members holding each of 15 combinations of permissions", async () => {
      const wrong: string[] = [];
      for (const permissions of [
        [],
        ["access_api"],
        ["view_data"],
        ["edit_data"],
        ["view_data", "edit_data"],
        ["access_api", "view_data"],
        ["access_api", "edit_data"],
        ["view_locations"],
        ["edit_locations"],
        ["access_api", "view_locations"],
        ["access_api", "edit_locations"],
        ["edit_apps"],
        ["access_api", "edit_apps"],
        ["access_api", "view_data", "view_locations"],
        [...PERMISSIONS],
      ]) {
        const user = await createUser(app, { domain: "demo", permissions });
        const granted = new Set<string>(permissions);
        const found = await mismatches("demo", user.authorization, (op) => CONTRACT[op.access](granted));
        wrong.push(...found.map((m) => `${JSON.stringify(permissions)}: ${m}`));
      }
      expect(wrong).toEqual([]);
    });
  });

  describe("case permissions over HTTP", () => {
    it("lets access_api + view_data read cases (list, single, ext, multi, bulk-fetch) but not write them", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
      const wrong: string[] = [];
      for (const op of OPS.filter((o) => o.family === "case")) {
        const res = await send(op, "demo", user.authorization);
        const problem = op.access === "caseRead" ? notAllowed(op, res) : notRefusal(op, res);
        if (problem) wrong.push(`${label(op, "demo")}: ${problem}`);
      }
      expect(wrong).toEqual([]);
      const list = await app.http().get(casePath("demo")).set("Authorization", user.authorization);
      expect(list.status).toBe(200);
    });

    it("refuses a write by a view_data user with 403 {error} whatever the payload, and saves nothing", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
      for (const body of [NEW_CASE, {}, [], [{ create: true }], { bogus: 1 }]) {
        const res = await app.http().post(casePath("demo")).set("Authorization", user.authorization).send(body);
        expect(res.status, JSON.stringify(body)).toBe(403);
        expect(res.headers["content-type"]).toMatch(/^application\/json/);
        expect(Object.keys(res.body)).toEqual(["error"]);
        expect(res.body.error).toEqual(expect.any(String));
      }
      expect(await countCases(app)).toBe(0);
    });

    it("answers permission before payload: 403 for a refused user whatever the body or parameters", async () => {
      const outsider = await createUser(app, { domain: "other", permissions: [...PERMISSIONS] });
      const locationsOnly = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations"] });
      const wrong: string[] = [];
      for (const auth of [outsider.authorization, locationsOnly.authorization]) {
        for (const op of OPS.filter((o) => o.family === "case" && o.method !== "head")) {
          const hasBody = op.method !== "get";
          for (const [what, body, query] of [
            ["invalid JSON", "{", ""],
            ["an empty body", "", ""],
            ["an invalid payload", '{"bogus": 1, "case_ids": 5}', ""],
            ["bad parameters", undefined, "?bogus=1&fields=a&exclude=b&limit=x"],
          ] as const) {
            if (!hasBody && body !== undefined) continue;
            const req = app
              .http()
              [op.method](`${op.path("demo")}${query}`)
              .set("Authorization", auth);
            const res = await (body === undefined ? req.send(op.body as object) : req.set("Content-Type", "application/json").send(body));
            if (res.status !== 403) wrong.push(`${label(op, "demo")} with ${what}: ${res.status} ${res.text}`);
          }
        }
      }
      expect(wrong).toEqual([]);
      expect(await countCases(app)).toBe(0);
    });

    it("refuses view_data without access_api for reads and writes", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["view_data"] });
      expect((await app.http().get(casePath("demo")).set("Authorization", user.authorization)).status).toBe(403);
      expect((await app.http().post(casePath("demo")).set("Authorization", user.authorization).send(NEW_CASE)).status).toBe(403);
    });

    it("refuses edit_data alone (no access_api) with 403 {error}, for reads and writes", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["edit_data"] });
      for (const res of [
        await app.http().get(casePath("demo")).set("Authorization", user.authorization),
        await app.http().post(casePath("demo")).set("Authorization", user.authorization).send(NEW_CASE),
        await app
          .http()
          .post(`${casePath("demo")}bulk-fetch/`)
          .set("Authorization", user.authorization)
          .send({ case_ids: ["x"] }),
      ]) {
        expect(res.status).toBe(403);
        expect(Object.keys(res.body)).toEqual(["error"]);
      }
      expect(await countCases(app)).toBe(0);
    });

    it("lets access_api + edit_data both read and write cases", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
      const created = await app.http().post(casePath("demo")).set("Authorization", user.authorization).send(NEW_CASE);
      expect(created.status).toBe(200);
      const id = created.body.case.case_id;
      const read = await app
        .http()
        .get(`${casePath("demo")}${id}`)
        .set("Authorization", user.authorization);
      expect(read.status).toBe(200);
      expect(read.body.case_name).toBe("Ann");
      const updated = await app
        .http()
        .put(`${casePath("demo")}${id}`)
        .set("Authorization", user.authorization)
        .send({ case_name: "Bo" });
      expect(updated.status).toBe(200);
    });

    it("treats POST bulk-fetch/ as a case read: view_data may use it", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
      for (const path of ["/a/demo/api/case/v2/bulk-fetch/", "/a/demo/api/case/v2/bulk-fetch"]) {
        const res = await app
          .http()
          .post(path)
          .set("Authorization", user.authorization)
          .send({ case_ids: ["x"] });
        expect(res.status, path).toBe(200);
        expect(res.body).toMatchObject({ matching_records: 0, missing_records: 1 });
      }
    });

    it("refuses bulk-fetch/ to a member without view_data or edit_data", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations", "edit_locations", "edit_apps"] });
      const res = await app
        .http()
        .post(`${casePath("demo")}bulk-fetch/`)
        .set("Authorization", user.authorization)
        .send({ case_ids: ["x"] });
      expect(res.status).toBe(403);
      expect(Object.keys(res.body)).toEqual(["error"]);
    });
  });

  describe("location permissions over HTTP", () => {
    it("lets view_locations read (location/v2 and location_type/v1) but not write", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations"] });
      expect((await app.http().get(locationPath("demo")).set("Authorization", user.authorization)).status).not.toBe(403);
      expect((await app.http().get(locationTypePath("demo")).set("Authorization", user.authorization)).status).toBe(200);
      for (const [method, path] of [
        ["post", locationPath("demo")],
        ["patch", locationPath("demo")],
        ["put", `${locationPath("demo")}loc-1`],
      ] as const) {
        const write = await app.http()[method](path).set("Authorization", user.authorization).send({});
        expect(write.status, method).toBe(403);
        expect(Object.keys(write.body)).toEqual(["error"]);
      }
    });

    it("lets edit_locations read and write", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_locations"] });
      expect((await app.http().get(locationPath("demo")).set("Authorization", user.authorization)).status).not.toBe(403);
      expect((await app.http().get(locationTypePath("demo")).set("Authorization", user.authorization)).status).toBe(200);
      expect((await app.http().patch(locationPath("demo")).set("Authorization", user.authorization).send({})).status).not.toBe(403);
      expect((await app.http().post(locationPath("demo")).set("Authorization", user.authorization).send({})).status).not.toBe(403);
    });

    it("refuses view_locations and edit_locations without access_api", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["edit_locations", "view_locations"] });
      expect((await app.http().get(locationTypePath("demo")).set("Authorization", user.authorization)).status).toBe(403);
      expect((await app.http().get(locationPath("demo")).set("Authorization", user.authorization)).status).toBe(403);
      expect((await app.http().post(locationPath("demo")).set("Authorization", user.authorization).send({})).status).toBe(403);
    });

    it("does not let case permissions stand in for location permissions, nor the reverse", async () => {
      const cases = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data", "edit_data"] });
      const locations = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations", "edit_locations"] });
      expect((await app.http().get(locationTypePath("demo")).set("Authorization", cases.authorization)).status).toBe(403);
      expect((await app.http().get(locationPath("demo")).set("Authorization", cases.authorization)).status).toBe(403);
      expect((await app.http().post(locationPath("demo")).set("Authorization", cases.authorization).send({})).status).toBe(403);
      expect((await app.http().get(casePath("demo")).set("Authorization", locations.authorization)).status).toBe(403);
      expect((await app.http().post(casePath("demo")).set("Authorization", locations.authorization).send(NEW_CASE)).status).toBe(403);
    });
  });

  describe("apps permissions over HTTP", () => {
    it("lets edit_apps alone (no access_api) use the Import App API", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
      const wrong: string[] = [];
      for (const op of OPS.filter((o) => o.family === "apps")) {
        const problem = notAllowed(op, await send(op, "demo", user.authorization));
        if (problem) wrong.push(`${label(op, "demo")}: ${problem}`);
      }
      expect(wrong).toEqual([]);
    });

    it("refuses access_api with every other permission but edit_apps: 403 {success: false, error}", async () => {
      const user = await createUser(app, {
        domain: "demo",
        permissions: ["access_api", "view_data", "edit_data", "view_locations", "edit_locations"],
      });
      const res = await app.http().post(appsPath("demo")).set("Authorization", user.authorization).send({});
      expect(res.status).toBe(403);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      expect(Object.keys(res.body)).toEqual(["success", "error"]);
      expect(res.body).toEqual({ success: false, error: expect.any(String) });
    });

    it("answers a non-member 403 {success: false, error}", async () => {
      const user = await createUser(app, { domain: "other", permissions: ["edit_apps"] });
      const res = await app.http().post(appsPath("demo")).set("Authorization", user.authorization).send({});
      expect(res.status).toBe(403);
      expect(Object.keys(res.body)).toEqual(["success", "error"]);
      expect(res.body.success).toBe(false);
    });

    it("answers 401 {success: false, error} with the challenges when credentials are missing", async () => {
      const res = await app.http().post(appsPath("demo")).send({});
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBeDefined();
      expect(Object.keys(res.body)).toEqual(["success", "error"]);
      expect(res.body.success).toBe(false);
    });

    it("answers a superuser 404 {success: false, error} for an unknown domain", async () => {
      const root = await createUser(app, { superuser: true });
      const res = await app.http().post(appsPath("nosuch")).set("Authorization", root.authorization).send({});
      expect(res.status).toBe(404);
      expect(Object.keys(res.body)).toEqual(["success", "error"]);
      expect(res.body.success).toBe(false);
      expect(res.body.error).toEqual(expect.any(String));
    });
  });

  describe("non-members and unknown domains over HTTP", () => {
    it("answers a user with no membership 403, in the family's shape, on every operation of every family", async () => {
      const user = await createUser(app, {});
      expect(await mismatches("demo", user.authorization, () => false)).toEqual([]);
    });

    it("grants nothing in another domain for a membership with every permission", async () => {
      const user = await createUser(app, { domain: "demo", permissions: [...PERMISSIONS] });
      expect(await mismatches("demo", user.authorization, () => true)).toEqual([]);
      expect(await mismatches("other", user.authorization, () => false)).toEqual([]);
    });

    it("shows nothing of one domain's cases in another, even to a member of both", async () => {
      const user = await createUser(app, { domain: "demo", permissions: [...PERMISSIONS] });
      await app.services.admin.setPermissions(app.root, user.username, "other", [...PERMISSIONS]);
      const created = await app
        .http()
        .post(casePath("demo"))
        .set("Authorization", user.authorization)
        .send({ ...NEW_CASE, external_id: "x-1" });
      expect(created.status).toBe(200);
      const id = created.body.case.case_id;
      const auth = user.authorization;
      expect(
        (
          await app
            .http()
            .get(`${casePath("other")}${id}`)
            .set("Authorization", auth)
        ).status,
      ).toBe(404);
      expect(
        (
          await app
            .http()
            .get(`${casePath("other")}ext/x-1/`)
            .set("Authorization", auth)
        ).status,
      ).toBe(404);
      expect((await app.http().get(casePath("other")).set("Authorization", auth)).body).toMatchObject({ matching_records: 0, cases: [] });
      const bulk = await app
        .http()
        .post(`${casePath("other")}bulk-fetch/`)
        .set("Authorization", auth)
        .send({ case_ids: [id] });
      expect(bulk.body).toMatchObject({ matching_records: 0, missing_records: 1 });
      const update = await app
        .http()
        .put(`${casePath("other")}${id}`)
        .set("Authorization", auth)
        .send({ case_name: "stolen" });
      expect(update.status).toBeGreaterThanOrEqual(400);
      expect(update.status).toBeLessThan(500);
      const back = await app
        .http()
        .get(`${casePath("demo")}${id}`)
        .set("Authorization", auth);
      expect(back.body.case_name).toBe("Ann");
    });

    it("answers a normal user for an unknown domain exactly as for an existing domain they are not in", async () => {
      const user = await createUser(app, { domain: "demo", permissions: [...PERMISSIONS] });
      for (const op of OPS.filter((o) => o.method !== "head")) {
        const unknown = await send(op, "nosuch", user.authorization);
        const existing = await send(op, "other", user.authorization);
        const at = label(op, "<d>");
        expect(unknown.status, at).toBe(403);
        expect(existing.status, at).toBe(403);
        expect(unknown.headers["content-type"], at).toBe(existing.headers["content-type"]);
        expect(unknown.headers["www-authenticate"], at).toBe(existing.headers["www-authenticate"]);
        expect(Object.keys(unknown.body), at).toEqual(Object.keys(existing.body));
        expect(JSON.stringify(unknown.body).replaceAll("nosuch", "<d>"), at).toBe(JSON.stringify(existing.body).replaceAll("other", "<d>"));
      }
    });

    it("answers a user with no membership anywhere the same for unknown and existing domains", async () => {
      const user = await createUser(app, {});
      for (const path of [locationTypePath, casePath]) {
        const unknown = await app.http().get(path("nosuch")).set("Authorization", user.authorization);
        const existing = await app.http().get(path("demo")).set("Authorization", user.authorization);
        expect(unknown.status).toBe(403);
        expect(existing.status).toBe(403);
        expect(unknown.body.error.replaceAll("nosuch", "<d>")).toBe(existing.body.error.replaceAll("demo", "<d>"));
      }
    });

    it("answers a superuser 404 JSON, in the family's shape, for an unknown domain on every operation", async () => {
      const root = await createUser(app, { superuser: true });
      const wrong: string[] = [];
      for (const op of OPS.filter((o) => o.method !== "head")) {
        const res = await send(op, "nosuch", root.authorization);
        const keys = op.family === "apps" ? ["success", "error"] : ["error"];
        if (res.status !== 404 || JSON.stringify(Object.keys(res.body)) !== JSON.stringify(keys)) {
          wrong.push(`${label(op, "nosuch")}: ${res.status} ${res.text}`);
        }
      }
      expect(wrong).toEqual([]);
    });

    it("authenticates before it authorises: no credentials is a 401, not a 403 or 404, even for an unknown domain", async () => {
      for (const op of OPS) expect((await send(op, "nosuch")).status, label(op, "nosuch")).toBe(401);
    });
  });

  describe("superusers over HTTP", () => {
    it("have every operation in every domain without any membership", async () => {
      const root = await createUser(app, { superuser: true });
      expect(await mismatches("demo", root.authorization, () => true)).toEqual([]);
      expect(await mismatches("other", root.authorization, () => true)).toEqual([]);
    });

    it("have every operation even where their own membership lists no permissions", async () => {
      const root = await createUser(app, { superuser: true, domain: "demo", permissions: [] });
      expect(await mismatches("demo", root.authorization, () => true)).toEqual([]);
    });
  });

  describe("permission changes", () => {
    it("take effect on the next request when permissions are reduced", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
      expect((await app.http().post(casePath("demo")).set("Authorization", user.authorization).send(NEW_CASE)).status).toBe(200);
      await app.services.admin.setPermissions(app.root, user.username, "demo", ["access_api", "view_data"]);
      expect((await app.http().post(casePath("demo")).set("Authorization", user.authorization).send(NEW_CASE)).status).toBe(403);
      expect((await app.http().get(casePath("demo")).set("Authorization", user.authorization)).status).toBe(200);
    });

    it("take effect on the next request when the membership is removed", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations", "view_data"] });
      expect((await app.http().get(locationTypePath("demo")).set("Authorization", user.authorization)).status).toBe(200);
      await app.services.admin.removeMembership(app.root, user.username, "demo");
      expect((await app.http().get(locationTypePath("demo")).set("Authorization", user.authorization)).status).toBe(403);
      expect((await app.http().get(casePath("demo")).set("Authorization", user.authorization)).status).toBe(403);
    });

    it("take effect on the next request when a permission is granted", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api"] });
      expect((await app.http().get(locationTypePath("demo")).set("Authorization", user.authorization)).status).toBe(403);
      await app.services.admin.setPermissions(app.root, user.username, "demo", ["access_api", "view_locations"]);
      expect((await app.http().get(locationTypePath("demo")).set("Authorization", user.authorization)).status).toBe(200);
    });
  });

  describe("the rules do not depend on the authentication scheme", () => {
    it("applies the same permissions to a Basic-authenticated user", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
      const auth = basic(user.username, user.password);
      expect((await app.http().get(casePath("demo")).set("Authorization", auth)).status).toBe(200);
      expect((await app.http().post(casePath("demo")).set("Authorization", auth).send(NEW_CASE)).status).toBe(403);
      expect((await app.http().get(casePath("other")).set("Authorization", auth)).status).toBe(403);
    });
  });

  // -------------------------------------------------------------------------------------------
  // GraphQL: the same rules, reported as extensions.code.
  // -------------------------------------------------------------------------------------------

  describe("the same rules through GraphQL", () => {
    const gql = (authorization: string, query: string, variables: Record<string, unknown>) =>
      app.http().post("/graphql").set("Authorization", authorization).set("Content-Type", "application/json").send({ query, variables });
    const LOCATION_TYPES = "query($d: String!) { locationTypes(domain: $d) { code } }";
    const CASES = "query($d: String!) { cases(domain: $d) { totalCount } }";
    const CASES_BY_IDS = 'query($d: String!) { casesByIds(domain: $d, caseIds: ["x"]) { missingRecords } }';
    const CREATE = `mutation($d: String!) { createCase(domain: $d, input: { caseType: "t", caseName: "n", ownerId: "o" }) { xformId } }`;
    const code = (res: { body: { errors?: { extensions?: { code?: string } }[] } }) => res.body.errors?.[0]?.extensions?.code;

    it("lets a member with the permission read, and refuses the rest with FORBIDDEN", async () => {
      const reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data", "view_locations"] });
      expect((await gql(reader.authorization, LOCATION_TYPES, { d: "demo" })).body).toEqual({ data: { locationTypes: [] } });
      expect((await gql(reader.authorization, CASES, { d: "demo" })).body).toEqual({ data: { cases: { totalCount: 0 } } });
      expect((await gql(reader.authorization, CASES_BY_IDS, { d: "demo" })).body).toEqual({ data: { casesByIds: { missingRecords: 1 } } });
      const create = await gql(reader.authorization, CREATE, { d: "demo" });
      expect(code(create)).toBe("FORBIDDEN");
      expect(create.body.data ?? null).toBeNull();
      expect(await countCases(app)).toBe(0);
    });

    it("lets edit_data write and read; refuses it without access_api", async () => {
      const writer = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
      const create = await gql(writer.authorization, CREATE, { d: "demo" });
      expect(create.body.errors).toBeUndefined();
      expect((await gql(writer.authorization, CASES, { d: "demo" })).body).toEqual({ data: { cases: { totalCount: 1 } } });
      const noApi = await createUser(app, { domain: "demo", permissions: ["edit_data", "view_data"] });
      expect(code(await gql(noApi.authorization, CREATE, { d: "demo" }))).toBe("FORBIDDEN");
      expect(code(await gql(noApi.authorization, CASES, { d: "demo" }))).toBe("FORBIDDEN");
    });

    it("refuses with FORBIDDEN a member without the permission, a non-member, and an unknown domain alike", async () => {
      const user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
      const outsider = await createUser(app, { domain: "other", permissions: [...PERMISSIONS] });
      const lacking = await gql(user.authorization, LOCATION_TYPES, { d: "demo" });
      for (const query of [LOCATION_TYPES, CASES, CASES_BY_IDS, CREATE]) {
        const stranger = await gql(outsider.authorization, query, { d: "demo" });
        const unknown = await gql(outsider.authorization, query, { d: "nosuch" });
        for (const res of [lacking, stranger, unknown]) {
          expect(res.body.data ?? null, query).toBeNull();
          expect(code(res), query).toBe("FORBIDDEN");
        }
        expect(unknown.body.errors[0].message.replaceAll("nosuch", "<d>"), query).toBe(stranger.body.errors[0].message.replaceAll("demo", "<d>"));
      }
    });

    it("gives a superuser every domain without membership, and NOT_FOUND for an unknown domain", async () => {
      const root = await createUser(app, { superuser: true });
      for (const query of [LOCATION_TYPES, CASES, CASES_BY_IDS, CREATE]) {
        expect(code(await gql(root.authorization, query, { d: "nosuch" })), query).toBe("NOT_FOUND");
        expect((await gql(root.authorization, query, { d: "demo" })).body.errors, query).toBeUndefined();
      }
    });
  });
});
