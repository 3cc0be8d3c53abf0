import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_LOGGED_NAME } from "../../src/observability/graphql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { captureLog } from "../helpers/log.ts";

/**
 * CONTRACT §7.2, a GraphQL request's log line (issue #26, item 5): the request's one line carries a
 * `graphql` field with the operation type, the operation name only when it comes from the
 * trusted-documents manifest or a persisted query (APQ), at most 100 characters, and the distinct
 * error codes the answer carried, so that a 200 carrying FORBIDDEN is visible. Never the document,
 * a variable's value or a credential.
 */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

type Line = Record<string, unknown> & { graphql?: { operationType?: string; operationName?: string; errorCodes?: string[] } };
const requestLines = (lines: string[]): Line[] => lines.map((line) => JSON.parse(line)).filter((entry) => entry.message === "request completed");

/** The one request line `send` produced, with all the lines written meanwhile. */
async function lineOf(send: () => Promise<unknown>): Promise<{ line: Line; output: string }> {
  const lines = await captureLog(async () => void (await send()));
  const requests = requestLines(lines);
  expect(requests).toHaveLength(1);
  return { line: requests[0]!, output: lines.join("\n") };
}

async function demo(): Promise<{ app: TestApp; user: TestUser }> {
  app = await build();
  await createDomain(app, "demo");
  await createDomain(app, "elsewhere");
  const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data", "view_data"] });
  return { app, user };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("§7.2 a GraphQL request's line: operation type and error codes", () => {
  it("§7.2: a query answered 200 with FORBIDDEN logs its type and the code FORBIDDEN", async () => {
    const { app, user } = await demo();
    let status = 0;
    const { line } = await lineOf(async () => {
      const res = await app
        .http()
        .post("/graphql")
        .set("Authorization", user.authorization)
        .send({ query: '{ cases(domain: "elsewhere", first: 1) { totalCount } }' });
      status = res.status;
      expect(res.body.errors[0].extensions.code).toBe("FORBIDDEN");
    });
    expect(status).toBe(200);
    expect(line).toMatchObject({ route: "/graphql", res: { statusCode: 200 }, username: user.username });
    expect(line.graphql).toEqual({ operationType: "query", errorCodes: ["FORBIDDEN"] });
  });

  it("§7.2: a mutation with no error logs its type and no error codes", async () => {
    const { app, user } = await demo();
    const { line, output } = await lineOf(() =>
      app
        .http()
        .post("/graphql")
        .set("Authorization", user.authorization)
        .send({
          query:
            'mutation Make($name: String!) { createCase(domain: "demo", input: { caseType: "t", caseName: $name, ownerId: "o" }) { case { caseId } } }',
          variables: { name: "variable-Value-7731" },
        }),
    );
    expect(line.graphql).toEqual({ operationType: "mutation" });
    expect(output).not.toContain("variable-Value-7731");
  });

  it("§7.2: several errors are listed once each, in order; a document that does not validate has no type", async () => {
    const { app, user } = await demo();
    const forbiddenTwice = await lineOf(() =>
      app
        .http()
        .post("/graphql")
        .set("Authorization", user.authorization)
        .send({ query: '{ a: cases(domain: "elsewhere", first: 1) { totalCount } b: cases(domain: "nowhere", first: 1) { totalCount } }' }),
    );
    expect(forbiddenTwice.line.graphql?.errorCodes).toEqual(["FORBIDDEN"]);
    const invalid = await lineOf(() => app.http().post("/graphql").set("Authorization", user.authorization).send({ query: "{ nope }" }));
    expect(invalid.line).toMatchObject({ res: { statusCode: 400 }, graphql: { errorCodes: ["GRAPHQL_VALIDATION_FAILED"] } });
    expect(invalid.line.graphql).not.toHaveProperty("operationType");
  });

  it("§7.2: a request refused before it is read logs the refusal's code (401 UNAUTHENTICATED)", async () => {
    const { app } = await demo();
    const { line } = await lineOf(() => app.http().post("/graphql").send({ query: "{ __typename }" }));
    expect(line).toMatchObject({ res: { statusCode: 401 }, graphql: { errorCodes: ["UNAUTHENTICATED"] } });
  });
});

describe("§7.2 a GraphQL request's line: the operation name only from a manifest or a persisted query", () => {
  it("§7.2: an ad-hoc document's name is not logged, nor its text or its variables", async () => {
    const { app, user } = await demo();
    const { line, output } = await lineOf(() =>
      app
        .http()
        .post("/graphql")
        .set("Authorization", user.authorization)
        .send({
          query: "query ClientChosenName7731($d: String!) { cases(domain: $d, first: 1) { totalCount } } # comment-Text-5512",
          variables: { d: "demo" },
          operationName: "ClientChosenName7731",
        }),
    );
    expect(line.graphql).toEqual({ operationType: "query" });
    for (const absent of ["ClientChosenName7731", "comment-Text-5512", "totalCount"]) expect(output).not.toContain(absent);
  });

  it("§7.2: a persisted query (APQ) logs its name, when it registers and when it is found by its hash", async () => {
    const { app, user } = await demo();
    const query = 'query PersistedCount { cases(domain: "demo", first: 1) { totalCount } }';
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    const registered = await lineOf(() =>
      app.http().post("/graphql").set("Authorization", user.authorization).send({ query, extensions: { persistedQuery } }),
    );
    expect(registered.line.graphql).toEqual({ operationType: "query", operationName: "PersistedCount" });
    const found = await lineOf(() => app.http().post("/graphql").set("Authorization", user.authorization).send({ extensions: { persistedQuery } }));
    expect(found.line.graphql).toEqual({ operationType: "query", operationName: "PersistedCount" });
  });

  it(`§7.2: a persisted query's name over ${MAX_LOGGED_NAME} characters is left out, not cut`, async () => {
    const { app, user } = await demo();
    const long = `Q${"x".repeat(MAX_LOGGED_NAME)}`;
    const query = `query ${long} { __typename }`;
    const { line, output } = await lineOf(() =>
      app
        .http()
        .post("/graphql")
        .set("Authorization", user.authorization)
        .send({ query, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } } }),
    );
    expect(line.graphql).toEqual({ operationType: "query" });
    expect(output).not.toContain("Qxxxx");
  });

  it("§7.2: with PERSISTED_OPERATIONS=only a trusted document logs its manifest name; a refused one logs FORBIDDEN and no name", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "manifest-"));
    const manifest = path.join(dir, "manifest.json");
    const trusted = "query TrustedProbe { __typename }";
    await writeFile(manifest, JSON.stringify({ probe: trusted }));
    try {
      app = await build({ persistedOperations: "only", persistedOperationsManifest: manifest });
      const user = await createUser(app, { superuser: true });
      const byText = await lineOf(() => app!.http().post("/graphql").set("Authorization", user.authorization).send({ query: trusted }));
      expect(byText.line.graphql).toEqual({ operationType: "query", operationName: "TrustedProbe" });
      const byId = await lineOf(() =>
        app!
          .http()
          .post("/graphql")
          .set("Authorization", user.authorization)
          .send({ extensions: { persistedQuery: { version: 1, sha256Hash: "probe" } } }),
      );
      expect(byId.line.graphql).toEqual({ operationType: "query", operationName: "TrustedProbe" });
      const refused = await lineOf(() =>
        app!.http().post("/graphql").set("Authorization", user.authorization).send({ query: "query NotInManifest { __typename }" }),
      );
      expect(refused.line).toMatchObject({ res: { statusCode: 403 }, graphql: { errorCodes: ["FORBIDDEN"] } });
      expect(refused.output).not.toContain("NotInManifest");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
