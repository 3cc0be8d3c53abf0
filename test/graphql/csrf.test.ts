import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basic, build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/**
 * CONTRACT §5 Protections, CSRF prevention on /graphql (src/graphql/csrf.ts): a request a page of
 * another site could make a browser send without a preflight, riding on the Basic or Digest
 * credentials the browser keeps for this server, is refused 400 with Apollo Server's words; one
 * that only a preflighted request can be passes: a JSON body, a CSRF header, or an `Authorization`
 * a page set itself (ApiKey, Bearer), which is how urql's GET queries come. urql itself:
 * test/clients/urql.test.ts.
 */

const REFUSAL =
  "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header " +
  "(with a type that is not one of application/x-www-form-urlencoded, multipart/form-data, text/plain) or provide a non-empty value " +
  "for one of the following headers: x-apollo-operation-name, apollo-require-preflight\n";

const ME = encodeURIComponent("{ me { username } }");

let app: TestApp;
let user: TestUser;
let bearer: string;

beforeAll(async () => {
  app = await build({ workers: 0 });
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  const { client, clientSecret } = await app.services.admin.createOAuthClient(app.root, { name: "csrf", grants: ["password"] });
  const token = await app
    .http()
    .post("/oauth/token")
    .type("form")
    .send({ grant_type: "password", username: user.username, password: user.password, client_id: client.clientId, client_secret: clientSecret });
  bearer = `Bearer ${token.body.access_token}`;
});
afterAll(() => app?.close());

const get = (authorization: string) => app.http().get(`/graphql?query=${ME}`).set("Authorization", authorization);

function expectRefused(res: { status: number; body: unknown; headers: Record<string, string> }) {
  expect(res.status).toBe(400);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.body).toEqual({ errors: [{ message: REFUSAL, extensions: { code: "BAD_REQUEST" } }] });
}

describe("CONTRACT §5 CSRF prevention", () => {
  it("§5 CSRF: a GET with only Basic credentials (which a browser attaches by itself) and no CSRF header is refused, 400 in Apollo's words", async () => {
    expectRefused(await get(basic(user.username, user.password)));
    expectRefused(await get(basic(user.username, user.password)).set("apollo-require-preflight", ""));
  });

  it("§5 CSRF: a form's POST (text/plain, urlencoded, multipart) with Basic credentials is refused the same way", async () => {
    const credentials = basic(user.username, user.password);
    const post = () => app.http().post("/graphql").set("Authorization", credentials);
    expectRefused(
      await post()
        .set("Content-Type", "text/plain")
        .send(JSON.stringify({ query: "{ me { username } }" })),
    );
    expectRefused(await post().type("form").send({ query: "{ me { username } }" }));
    expectRefused(
      await post()
        .field("operations", JSON.stringify({ query: "{ me { username } }" }))
        .field("map", "{}"),
    );
  });

  it("§5 CSRF: a GET with an Authorization a page set itself (ApiKey, any case of the scheme; Bearer) is answered", async () => {
    for (const authorization of [user.authorization, user.authorization.replace(/^ApiKey/, "apikey"), bearer]) {
      const res = await get(authorization);
      expect([authorization.split(" ")[0], res.status, res.body]).toEqual([
        authorization.split(" ")[0],
        200,
        { data: { me: { username: user.username } } },
      ]);
    }
  });

  it("§5 CSRF: a form's POST (text/plain, multipart) with an API key still needs the CSRF header: only GET queries pass on an Authorization alone", async () => {
    const post = () => app.http().post("/graphql").set("Authorization", user.authorization);
    expectRefused(
      await post()
        .set("Content-Type", "text/plain")
        .send(JSON.stringify({ query: "{ me { username } }" })),
    );
    expectRefused(
      await post()
        .field("operations", JSON.stringify({ query: "{ me { username } }" }))
        .field("map", "{}"),
    );
    const preflighted = await post()
      .set("apollo-require-preflight", "true")
      .field("operations", JSON.stringify({ query: "{ me { username } }" }))
      .field("map", "{}");
    expect(preflighted.body).toEqual({ data: { me: { username: user.username } } });
  });

  it("§5 CSRF: a CSRF header, or a JSON body, lets Basic credentials through as before", async () => {
    const credentials = basic(user.username, user.password);
    for (const header of ["apollo-require-preflight", "x-apollo-operation-name"]) {
      const res = await get(credentials).set(header, "1");
      expect([header, res.status]).toEqual([header, 200]);
    }
    const json = await app.http().post("/graphql").set("Authorization", credentials).send({ query: "{ me { username } }" });
    expect(json.body).toEqual({ data: { me: { username: user.username } } });
  });

  it("§5 CSRF: authentication comes first: a GET without credentials is 401, not the CSRF refusal", async () => {
    const res = await app.http().get(`/graphql?query=${ME}`);
    expect(res.status).toBe(401);
  });
});
