import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { hostileJsonValue, hostileString } from "../helpers/arbitraries.ts";
import { NO_RATE_LIMIT } from "../helpers/raw-http.ts";
import { countOAuthTokens } from "../helpers/rows.ts";

/**
 * Issue #12 F9, the token endpoint `POST /oauth/token` under hostile forms: a repeated parameter
 * is 400 invalid_request (RFC 6749 §3.2: parameters appear once) and issues nothing; JSON bodies
 * with values of any type, and any mix of the grant's parameters, get an RFC 6749 error below 500.
 * numRuns are explicit and add up to OAUTH_INPUTS.
 */

const N = { repeatedKeys: 80, jsonBodies: 60, anyForm: 80 };
const OAUTH_INPUTS = Object.values(N).reduce((a, b) => a + b, 0);

const PARAMETERS = ["grant_type", "client_id", "client_secret", "username", "password", "refresh_token", "scope"] as const;

let app: TestApp;
let user: TestUser;
let client: { id: string; secret: string };
let sent = 0;

beforeAll(async () => {
  app = await build({ ...NO_RATE_LIMIT, workers: 0 });
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: ["access_api"] });
  const created = await app.services.admin.createOAuthClient(app.root, { name: "app" });
  client = { id: created.client.clientId, secret: created.clientSecret };
});
afterAll(() => app?.close());

/** A realistic value for a parameter, so that the repetition is the only thing wrong. */
function plausible(name: (typeof PARAMETERS)[number]): fc.Arbitrary<string> {
  const known: Record<string, string[]> = {
    grant_type: ["password", "client_credentials", "refresh_token"],
    client_id: [client.id],
    client_secret: [client.secret],
    username: [user.username],
    password: [user.password],
    scope: ["access_apis"],
  };
  return fc.oneof(fc.constantFrom(...(known[name] ?? ["x"])), hostileString);
}

async function post(body: string, type: string) {
  sent += 1;
  return app.http().post("/oauth/token").set("Content-Type", type).send(body);
}

function expectOAuthRefusal(res: { status: number; body: Record<string, unknown> }, context: string): void {
  expect(res.status, context).toBeGreaterThanOrEqual(400);
  expect(res.status, context).toBeLessThan(500);
  expect(typeof res.body.error, context).toBe("string");
  expect(typeof res.body.error_description, context).toBe("string");
  expect(res.body.access_token, context).toBeUndefined();
}

describe(`POST /oauth/token under hostile forms (${OAUTH_INPUTS} inputs)`, () => {
  it("F9: any form with a repeated parameter answers 400 invalid_request naming it, and issues no token", async () => {
    const tokensBefore = await countOAuthTokens(app);
    const form = fc
      .record({
        repeated: fc.constantFrom(...PARAMETERS),
        others: fc.subarray([...PARAMETERS]),
        copies: fc.integer({ min: 2, max: 4 }),
      })
      .chain(({ repeated, others, copies }) =>
        fc.tuple(
          fc.constant(repeated),
          fc.array(plausible(repeated), { minLength: copies, maxLength: copies }),
          fc.tuple(...others.filter((o) => o !== repeated).map((o) => plausible(o).map((v) => [o, v] as const))),
        ),
      );
    await fc.assert(
      fc.asyncProperty(form, async ([repeated, copies, others]) => {
        const params = new URLSearchParams();
        // the parameters in any order: the repeated one need not come first or be adjacent
        for (const [name, value] of others) params.append(name, value);
        for (const value of copies) params.append(repeated, value);
        const res = await post(params.toString(), "application/x-www-form-urlencoded");
        const context = params.toString().slice(0, 300);
        // named: the first parameter (in form order) that is repeated
        const names = [...params.keys()];
        const named = names.find((name) => names.indexOf(name) !== names.lastIndexOf(name));
        expect(named).toBe(repeated);
        expect(res.status, context).toBe(400);
        expect(res.headers["cache-control"]).toBe("no-store");
        expect(res.text, context).toBe(
          `{"error":"invalid_request","error_description":"Invalid parameter: \`${named}\` must be given once, as a string"}`,
        );
      }),
      { numRuns: N.repeatedKeys },
    );
    expect(await countOAuthTokens(app)).toBe(tokensBefore);
  });

  it("F9: JSON bodies whose values are of any type (arrays, objects, numbers, null) answer 400, never 500", async () => {
    const body = fc.dictionary(fc.oneof(fc.constantFrom(...PARAMETERS), fc.string({ maxLength: 10 })), hostileJsonValue, { maxKeys: 7 });
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        const text = JSON.stringify(value);
        const res = await post(text, "application/json");
        expectOAuthRefusal(res, text.slice(0, 300));
        expect(res.status).toBe(400);
        expect(res.body.error).toBe("invalid_request");
      }),
      { numRuns: N.jsonBodies },
    );
  });

  it("F9: any mix of the grant's parameters, repeated or not, answers an RFC 6749 error or a token, never 500", async () => {
    const pair = fc.constantFrom(...PARAMETERS).chain((name) => plausible(name).map((value) => [name, value] as const));
    await fc.assert(
      fc.asyncProperty(fc.array(pair, { maxLength: 10 }), async (pairs) => {
        const params = new URLSearchParams();
        for (const [name, value] of pairs) params.append(name, value);
        const res = await post(params.toString(), "application/x-www-form-urlencoded");
        if (res.status === 200) expect(typeof res.body.access_token).toBe("string");
        else expectOAuthRefusal(res, params.toString().slice(0, 300));
      }),
      { numRuns: N.anyForm },
    );
  });

  it(`summary: ${OAUTH_INPUTS} inputs planned, all sent`, () => {
    expect(sent).toBeGreaterThanOrEqual(OAUTH_INPUTS);
  });
});
