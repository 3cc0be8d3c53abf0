import { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { log, MAX_TEXT, redactText } from "../src/log.ts";
import { captureLog } from "./helpers/log.ts";

/**
 * Issue #24 (security review G1): a log line costs work bounded by what it writes, not by what it
 * is handed. Strings are cut before any pattern runs, the walk of fields is bounded, objects of a
 * class are never entered, and redaction still holds at the cut.
 */

async function lineOf(fields: Record<string, unknown>, message = "m"): Promise<Record<string, unknown> & { raw: string }> {
  const [raw] = await captureLog(() => log.info(message, fields));
  return { ...(JSON.parse(raw!) as Record<string, unknown>), raw: raw! };
}

describe("a log line is bounded by what it writes", () => {
  it("a 1 MB string is cut to MAX_TEXT characters, saying how many more there were", async () => {
    const line = await lineOf({ big: "v".repeat(1_000_000) });
    expect(line.big).toBe(`${"v".repeat(MAX_TEXT)}…[${1_000_000 - MAX_TEXT} more characters]`);
  });

  it("the message is cut too", async () => {
    const line = await lineOf({}, "x".repeat(100_000));
    expect(String(line.message)).toHaveLength(MAX_TEXT + `…[${100_000 - MAX_TEXT} more characters]`.length);
  });

  it("wide objects and long arrays are cut at 50 entries, deep ones at depth 4", async () => {
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 1000; i++) deep = { d: deep };
    const line = await lineOf({ wide, list: Array.from({ length: 10_000 }, (_, i) => i), deep });
    expect(Object.keys(line.wide as object)).toHaveLength(51);
    expect(line.list).toHaveLength(51);
    expect((line.list as unknown[])[50]).toBe("[9950 more items]");
    expect(JSON.stringify(line.deep)).toBe('{"d":{"d":{"d":{"d":"[…]"}}}}');
    expect(line.raw.length).toBeLessThan(5_000);
  });

  it("a line writes at most 1,000 values in all, however the fields spread them", async () => {
    const grid = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`r${i}`, Array.from({ length: 50 }, () => "x".repeat(100))]));
    const line = await lineOf({ grid });
    expect(line.raw.length).toBeLessThan(1_000 * 110);
    expect(line.raw).toContain('"[…]"');
  });

  it("a request, a socket or any object of a class is written as its class name, never entered", async () => {
    const req = new IncomingMessage(new Socket());
    const line = await lineOf({ req, buffer: Buffer.alloc(1_000_000), when: new Date(0), map: new Map([[1, 2]]) });
    expect(line).toMatchObject({ req: "[IncomingMessage]", buffer: "[Buffer]", when: "1970-01-01T00:00:00.000Z", map: "[Map]" });
  });

  it("an error is written as name, code, message and stack, each cut", async () => {
    const error = Object.assign(new Error("e".repeat(50_000)), { code: "E_BIG" });
    const line = await lineOf({ error });
    expect(line.error).toMatchObject({ name: "Error", code: "E_BIG" });
    expect(String((line.error as { message: string }).message).length).toBeLessThan(MAX_TEXT + 40);
  });
});

describe("redaction still holds at the cut and on long text", () => {
  it("a credential that straddles the cut is redacted, not half-written", () => {
    for (const secret of ["Bearer tok-s3cret-straddling", "password=pw-s3cret-straddling", "https://app:db-s3cret-straddling@db/x"]) {
      const text = `${"a ".repeat((MAX_TEXT - 10) / 2)}${secret} and more`;
      const out = redactText(text);
      expect(out).not.toContain("s3cret");
      expect(out).not.toContain("s3c");
    }
  });

  it("credentials of every scheme inside long text are redacted", () => {
    const text = `${"w".repeat(500)} ApiKey u:k3y-s3cret Basic YWJj-s3cret token="t-s3cret" Digest username="u", response="d-s3cret"`;
    expect(redactText(text)).not.toMatch(/s3cret/);
  });

  it("an unterminated quoted password is redacted all the same", () => {
    expect(redactText('password="pw-s3cret and the rest')).not.toContain("pw-s3cret");
  });
});

describe("credentials are dropped where they sit, in the one walk of the fields", () => {
  it("request headers and OAuth form fields by name: Authorization, Cookie, X-Api-Key, password, client_secret, refresh_token, code", async () => {
    const line = await lineOf({
      req: {
        headers: { authorization: "Bearer h-s3cret", cookie: "sid=c-s3cret", "proxy-authorization": "Basic p-s3cret", "x-api-key": "x-s3cret" },
        body: {
          grant_type: "authorization_code",
          code: "code-s3cret",
          password: "pw-s3cret",
          client_secret: "cs-s3cret",
          refresh_token: "rt-s3cret",
        },
      },
      res: { headers: { "set-cookie": "sid=sc-s3cret" } },
      upstream: { apiKey: "ak-s3cret", api_key: "ak2-s3cret", access_token: "at-s3cret" },
    });
    expect(line.raw).not.toContain("s3cret");
    expect(line).toMatchObject({
      req: { headers: { "x-api-key": "[redacted]" }, body: { grant_type: "authorization_code", code: "[redacted]" } },
    });
  });

  it("a `code` anywhere but an OAuth form stays readable (an error's code)", async () => {
    const line = await lineOf({
      code: "NOT_FOUND",
      error: Object.assign(new Error("gone"), { code: "ENOENT" }),
      graphql: { code: "BAD_USER_INPUT" },
    });
    expect(line).toMatchObject({ code: "NOT_FOUND", error: { code: "ENOENT" }, graphql: { code: "BAD_USER_INPUT" } });
  });

  it("text that skips the patterns is written as it is; text that may hold a credential still has it redacted, whatever the case or spacing", () => {
    for (const plain of ["request completed", "/a/:domain/api/case/v2/:caseId", "8f2b6c1e-3a4d-4e5f-9a0b-1c2d3e4f5a6b", "a key idea", "tokens: 3"]) {
      expect(redactText(plain)).toBe(plain);
    }
    for (const secret of [
      "BASIC s3cret",
      "bearer\ts3cret",
      "apikey  u:s3cret",
      "DIGEST username=u, response=s3cret",
      "Token : s3cret",
      "client_secret=s3cret",
      "ACCESS_TOKEN:s3cret",
      "key=s3cret",
      "passwd = s3cret",
      "see HTTPS://user:s3cret@host/",
      "redis://:s3cret@cache:6379",
    ]) {
      expect(redactText(`x ${secret} y`)).not.toContain("s3cret");
      expect(redactText(secret)).not.toContain("s3cret");
    }
  });
});
