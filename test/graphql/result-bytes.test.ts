import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, type Config } from "../../src/config.ts";
import { stringifyResult } from "../../src/graphql/budget.ts";
import { jsonBytes } from "../../src/graphql/result-bytes.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, createApp, png, uploadAndWait, zip } from "../helpers/archives.ts";
import { connectWs, pause, until, type LiveSubscription, type WsTestClient } from "../helpers/ws.ts";

/**
 * Security review G2: JSON scalars and long strings were outside the result budget (which counted
 * objects) and cost 1 in the estimate, so aliases, repeated ids and subscriptions copied them into
 * responses of hundreds of MB (500 "Invalid string length", 17–24 s stalls). The budget now counts
 * the bytes of text a result carries as it resolves (GRAPHQL_MAX_RESULT_BYTES), over HTTP (compiled
 * execution, graphql-jit) and WebSocket (graphql-js), a subscription event's results for one user
 * together; the estimate prices a JSON field at 20.
 */

const LIMIT = 4096;

const TOO_LARGE_ERROR = {
  message: `Query result is too large: it exceeds the limit of ${LIMIT} bytes. Ask for smaller pages, fewer relations or fewer large fields.`,
  extensions: { code: "RESULT_TOO_LARGE" },
};
const TOO_LARGE = { errors: [TOO_LARGE_ERROR], data: null };

let app: TestApp;
let reader: TestUser;
let editor: TestUser;
let ws: WsTestClient | undefined;

async function setUp(limits: Partial<Config> = {}): Promise<void> {
  app = await build({ graphqlMaxResultBytes: LIMIT, ...limits });
  await createDomain(app, "demo");
  reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data", "edit_apps"] });
}

const post = (user: TestUser, query: string) => app.http().post("/graphql").set("Authorization", user.authorization).send({ query });

/** A case whose properties are ten values of 200 characters (about 2.2 KB of JSON): one fits the limit, two do not. */
async function bigCase(): Promise<string> {
  const properties = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, `${i}`.repeat(200)]));
  const res = await app
    .http()
    .post("/a/demo/api/case/v2/")
    .set("Authorization", editor.authorization)
    .send({ case_type: "t", case_name: "big", owner_id: "o", properties });
  expect(res.status).toBe(200);
  return res.body.case.case_id as string;
}

const aliasesOfProperties = (caseId: string, count: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `a${i}: case(domain: "demo", caseId: "${caseId}") { properties }`).join(" ")} }`;

const repeatedIds = (caseId: string, count: number) =>
  `{ casesByIds(domain: "demo", caseIds: ${JSON.stringify(Array(count).fill(caseId))}) { entries { case { properties } } } }`;

/** An app and an archive of `strays` images it does not reference, each named with 100 characters: its REST status lists them all as unmatched. */
async function strayArchive(strays: number, seed = 0): Promise<{ appId: string; archive: Buffer }> {
  const appId = await createApp(app, editor.authorization, "demo", appSource({ paths: [] }), `App ${seed}`);
  const names = Array.from({ length: strays }, (_, i) => `commcare/image/${String(i).padStart(3, "0")}-${"n".repeat(92)}.png`);
  return { appId, archive: await zip(names.map((name, i) => ({ name, data: png(seed * 1000 + i) }))) };
}

describe("G2: the byte count of a value and the last guard of an answer", () => {
  it("G2: GRAPHQL_MAX_RESULT_BYTES is 32 MiB by default, and at most 64 MiB: a longer count could be written past one JavaScript string", () => {
    expect(loadConfig({}).graphqlMaxResultBytes).toBe(33_554_432);
    expect(loadConfig({ GRAPHQL_MAX_RESULT_BYTES: "67108864" }).graphqlMaxResultBytes).toBe(67_108_864);
    expect(() => loadConfig({ GRAPHQL_MAX_RESULT_BYTES: "67108865" })).toThrow(ConfigError);
    expect(() => loadConfig({ GRAPHQL_MAX_RESULT_BYTES: "67108865" })).toThrow(
      "GRAPHQL_MAX_RESULT_BYTES must be an integer between 1024 and 67108864, got '67108865'",
    );
  });

  it("G2: jsonBytes is a JSON value's text with each string at its length: never more than JSON.stringify writes, never less than a sixth of it", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value).length;
        const counted = jsonBytes(value);
        expect(counted).toBeLessThanOrEqual(text);
        expect(text).toBeLessThanOrEqual(6 * counted);
      }),
    );
    // without escapes, exactly what JSON.stringify writes
    const plain = { a: "xy", b: [1, -0.5, true, null, { c: [] }], d: {}, e: new Date(0), é: "ü" };
    expect(jsonBytes(plain)).toBe(JSON.stringify(plain).length);
  });

  it("G2: an answer longer than one JavaScript string can hold is RESULT_TOO_LARGE, not a 500; any other is Apollo's JSON and newline", () => {
    const stringify = stringifyResult(LIMIT);
    const tooLong = {
      data: {
        x: {
          toJSON() {
            throw new RangeError("Invalid string length");
          },
        },
      },
    };
    expect(stringify(tooLong)).toBe(`${JSON.stringify(TOO_LARGE)}\n`);
    expect(stringify({ data: { a: 1 } })).toBe('{"data":{"a":1}}\n');
  });
});

describe("G2: the result budget counts bytes", () => {
  afterEach(async () => {
    await ws?.dispose();
    ws = undefined;
    await app.close();
  });

  it("G2: over HTTP, aliases of a case's properties past GRAPHQL_MAX_RESULT_BYTES answer one RESULT_TOO_LARGE error and no data", async () => {
    await setUp();
    const caseId = await bigCase();
    const one = await post(reader, aliasesOfProperties(caseId, 1));
    expect([one.status, one.body.errors, Object.keys(one.body.data.a0.properties).length]).toEqual([200, undefined, 10]);
    const two = await post(reader, aliasesOfProperties(caseId, 2));
    expect([two.status, two.body]).toEqual([200, TOO_LARGE]);
    expect(Object.keys(two.body)).toEqual(["errors", "data"]);
  });

  it("G2: over HTTP, casesByIds with one id repeated, each entry's properties, past GRAPHQL_MAX_RESULT_BYTES answers RESULT_TOO_LARGE", async () => {
    await setUp();
    const caseId = await bigCase();
    const one = await post(reader, repeatedIds(caseId, 1));
    expect([one.status, one.body.errors, one.body.data.casesByIds.entries.length]).toEqual([200, undefined, 1]);
    const res = await post(reader, repeatedIds(caseId, 3));
    expect([res.status, res.body]).toEqual([200, TOO_LARGE]);
  });

  it("G2: over HTTP, aliases of a job's restStatus past GRAPHQL_MAX_RESULT_BYTES answer RESULT_TOO_LARGE", async () => {
    await setUp();
    const { appId, archive } = await strayArchive(12);
    const done = await uploadAndWait(app, editor.authorization, "demo", appId, archive);
    // the REST status of 12 unmatched entries: one fits the limit, two do not
    expect(JSON.stringify(done.body).length).toBeGreaterThan(LIMIT / 2 + 100);
    expect(JSON.stringify(done.body).length).toBeLessThan(LIMIT - 200);
    const aliases = (count: number) =>
      `{ ${Array.from({ length: count }, (_, i) => `a${i}: multimediaJob(domain: "demo", processingId: "${done.body.processing_id}") { restStatus }`).join(" ")} }`;
    const one = await post(editor, aliases(1));
    expect([one.status, one.body.errors, one.body.data.a0.restStatus]).toEqual([200, undefined, done.body]);
    const res = await post(editor, aliases(2));
    expect([res.status, res.body]).toEqual([200, TOO_LARGE]);
  });

  it("G2: over WebSocket (graphql-js), the same queries get the same RESULT_TOO_LARGE answer and the socket stays open", async () => {
    await setUp();
    const caseId = await bigCase();
    ws = await connectWs(app, reader.authorization);
    expect(await ws.run(aliasesOfProperties(caseId, 2))).toEqual({ errors: [TOO_LARGE_ERROR], data: null });
    expect(await ws.run(repeatedIds(caseId, 3))).toEqual({ errors: [TOO_LARGE_ERROR], data: null });
    const fits = await ws.run(aliasesOfProperties(caseId, 1));
    expect(Object.keys((fits as { data: { a0: { properties: object } } }).data.a0.properties)).toHaveLength(10);
    expect(ws.closes).toEqual([]);
  });

  it("G2: a subscription event past GRAPHQL_MAX_RESULT_BYTES is delivered as RESULT_TOO_LARGE for that subscription; the subscription and its socket go on", async () => {
    await setUp();
    ws = await connectWs(app, editor.authorization);
    const live = ws.subscribe('subscription { multimediaJobs(domain: "demo") { state restStatus } }');
    await pause(300); // let the subscription start
    // 40 unmatched entries: the final status is about 6 KB, the ones before it small
    const big = await strayArchive(40, 1);
    await uploadAndWait(app, editor.authorization, "demo", big.appId, big.archive);
    await until(() => live.errors.length > 0);
    expect(live.errors).toEqual([TOO_LARGE_ERROR]);
    expect(live.events.every((event) => (event.multimediaJobs as { state: string }).state !== "COMPLETE")).toBe(true);
    // the next upload's events arrive as before, its final one included
    const small = await strayArchive(1, 2);
    await uploadAndWait(app, editor.authorization, "demo", small.appId, small.archive);
    await until(() => live.events.some((event) => (event.multimediaJobs as { state: string }).state === "COMPLETE"));
    expect([live.errors.length, live.ended, ws.closes]).toEqual([1, false, []]);
  });

  it("G2: one event's results for one user count together: twenty subscriptions with twenty selections are twenty aliases, a shared selection counts once", async () => {
    await setUp({ graphqlMaxResultBytes: 1024 });
    ws = await connectWs(app, editor.authorization);
    const distinct = Array.from({ length: 20 }, (_, i) => ws!.subscribe(`subscription { multimediaJobs(domain: "demo") { s${i}: restStatus } }`));
    const shared = Array.from({ length: 20 }, () => ws!.subscribe('subscription { multimediaJobs(domain: "demo") { state } }'));
    await pause(300);
    const { appId, archive } = await strayArchive(1);
    await uploadAndWait(app, editor.authorization, "demo", appId, archive);
    const heard = (live: LiveSubscription) => live.events.length + live.errors.length > 0;
    await until(() => [...distinct, ...shared].every(heard));
    // the first event (QUEUED): its REST status is some hundred bytes, twenty of them are not within 1,024
    const refused = distinct.filter((live) => live.errors.length > 0 && live.events.length === 0);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThan(20);
    expect(refused[0]!.errors[0]).toEqual({ ...TOO_LARGE_ERROR, message: TOO_LARGE_ERROR.message.replace(`${LIMIT}`, "1024") });
    // twenty subscriptions of one selection share one execution of each event, counted once
    expect(shared.map((live) => live.errors.length)).toEqual(Array(20).fill(0));
    expect(ws.closes).toEqual([]);
  });

  it("G2: a JSON field costs 20 in the estimate: aliases of a page of properties are refused before they run", async () => {
    await setUp({ graphqlMaxCost: 1000 });
    // each alias: 1 + 20 cases × (nodes 1 + properties 20)
    const page = (i: number) => `a${i}: cases(domain: "demo", first: 20) { nodes { properties } }`;
    const fits = await post(reader, `{ ${page(0)} ${page(1)} }`);
    expect([fits.status, fits.body.errors]).toEqual([200, undefined]);
    const res = await post(reader, `{ ${page(0)} ${page(1)} ${page(2)} }`);
    expect([res.status, res.body]).toEqual([
      400,
      { errors: [{ message: "Query is too expensive: cost 1263 exceeds the limit of 1000.", extensions: { code: "QUERY_TOO_COMPLEX" } }] },
    ]);
  });
});
