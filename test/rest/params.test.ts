import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.ts";
import { build, createDomain, createUser, type TestApp } from "../helpers/app.ts";
import { CASES } from "../helpers/cases.ts";

/**
 * F16 (issue #12): the absolute URLs the server writes (the Case API's `next`) come from PUBLIC_URL
 * when it is set; else from the request: the socket's protocol and the Host header, or, with
 * TRUST_PROXY on, X-Forwarded-Proto and X-Forwarded-Host (CONTRACT §7.2).
 */

let app: TestApp | undefined;
afterEach(() => app?.close());

/** A domain with two cases, and a first page of one case as `headers` ask: its `next`. */
async function nextLink(config: Partial<Config>, headers: Record<string, string>): Promise<string> {
  app = await build(config);
  await createDomain(app, "demo");
  const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  for (const name of ["one", "two"]) {
    const res = await app.http().post(CASES).set("Authorization", user.authorization).send({ case_type: "t", case_name: name, owner_id: "o" });
    expect(res.status).toBe(200);
  }
  let req = app.http().get(`${CASES}?limit=1`).set("Authorization", user.authorization);
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
  const res = await req;
  expect(res.status).toBe(200);
  expect(Object.keys(res.body)).toEqual(["matching_records", "cases", "next"]);
  return res.body.next as string;
}

const CURSOR = /\?cursor=[^&]+$/;
const PROXIED = { Host: "10.0.0.5:8000", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.org" };

describe("F16: the base of `next` links", () => {
  it("F16: PUBLIC_URL wins over Host and X-Forwarded-*, its path prefix first", async () => {
    const next = await nextLink({ publicUrl: "https://api.example.org/prefix", trustProxy: true }, { ...PROXIED, Host: "evil.example" });
    expect(next.startsWith("https://api.example.org/prefix/a/demo/api/case/v2/?cursor=")).toBe(true);
    expect(next).toMatch(CURSOR);
  });

  it("F16: TRUST_PROXY on: X-Forwarded-Proto https and X-Forwarded-Host shape `next`", async () => {
    const next = await nextLink({ trustProxy: true }, PROXIED);
    expect(next.startsWith("https://api.example.org/a/demo/api/case/v2/?cursor=")).toBe(true);
  });

  it("F16: TRUST_PROXY on: of a list of forwarded values, the first (the client's side) counts", async () => {
    const next = await nextLink(
      { trustProxy: true },
      { ...PROXIED, "X-Forwarded-Proto": "https, http", "X-Forwarded-Host": "api.example.org, 10.0.0.5" },
    );
    expect(next.startsWith("https://api.example.org/a/demo/api/case/v2/?cursor=")).toBe(true);
  });

  it("F16: TRUST_PROXY off (the default): X-Forwarded-Proto and X-Forwarded-Host are ignored", async () => {
    const next = await nextLink({}, PROXIED);
    expect(next.startsWith("http://10.0.0.5:8000/a/demo/api/case/v2/?cursor=")).toBe(true);
  });

  it("F16: a Host that is no host (a path, a user part) is refused with 400, never written into a link", async () => {
    app = await build();
    await createDomain(app, "demo");
    const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    for (const name of ["one", "two"]) {
      await app.http().post(CASES).set("Authorization", user.authorization).send({ case_type: "t", case_name: name, owner_id: "o" });
    }
    for (const host of ["evil.example/x?", "user@evil.example", "evil.example:80:80"]) {
      const res = await app.http().get(`${CASES}?limit=1`).set("Authorization", user.authorization).set("Host", host);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "Invalid Host header" });
    }
  });
});
