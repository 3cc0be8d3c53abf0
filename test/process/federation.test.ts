import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promisify } from "node:util";
import type { Database } from "../../src/db/client.ts";
import { blocksUnder, readDoc, ROOT } from "../docs/markdown.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { composeWithVisits, executeIn, executePlan, GATEWAY, planOf, VISITS, visitsSubgraph, type SendToSubgraph } from "../helpers/federation.ts";
import { startServer, type ServerProcess } from "../helpers/process.ts";

/**
 * FEDERATION=true on a real server process (scripts/start.sh, production defaults): a supergraph
 * is composed from the SDL the server serves (`_service { sdl }` over HTTP) and another team's
 * subgraph, and a supergraph query runs as a router runs it: the query plan's first fetch on the
 * other subgraph, then its `_entities` fetch sent to the server over HTTP with the caller's
 * `Authorization` (a router propagates it). Each caller gets the cases of its own domain and null
 * for the others. Apollo Router is a binary download, unavailable here: the plan comes from
 * `@apollo/query-planner`, Apollo Gateway's planner (test/helpers/federation.ts).
 */

const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
const ADMIN = basic("fedadmin", "admin-Pass-1");
const MEMBER = { username: "fedmember", password: "member-Pass-1" };
const OUTSIDER = { username: "fedoutsider", password: "outsider-Pass-1" };

let server: ServerProcess;
let dataDir: string;
let db: Database | undefined;
let demoCase: string;
let otherCase: string;

async function graphql(query: string, variables: Record<string, unknown>, authorization: string) {
  const res = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { Authorization: authorization, "Content-Type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as { data?: Record<string, any> | null; errors?: unknown[] } };
}

async function data(query: string, variables: Record<string, unknown>, authorization: string) {
  const { body } = await graphql(query, variables, authorization);
  expect(body.errors).toBeUndefined();
  return body.data!;
}

async function setUpDomain(domain: string, user: { username: string; password: string }, caseName: string): Promise<string> {
  await data("mutation($n: String!) { createDomain(name: $n) { name } }", { n: domain }, ADMIN);
  await data(
    "mutation($i: CreateUserInput!) { createUser(input: $i) { username } }",
    { i: { ...user, domain, permissions: ["ACCESS_API", "VIEW_DATA", "EDIT_DATA"] } },
    ADMIN,
  );
  const created = await data(
    "mutation($d: String!, $i: CaseInput!) { createCase(domain: $d, input: $i) { case { id } } }",
    { d: domain, i: { caseType: "visit", caseName, ownerId: "o" } },
    basic(user.username, user.password),
  );
  return created.createCase.case.id;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-federation-"));
  if (usingPostgres()) db = await freshDatabase();
  const storage: Record<string, string> = db?.url ? { DATABASE_URL: db.url, DATA_DIR: dataDir } : { DATA_DIR: dataDir };
  server = await startServer({ ...storage, FEDERATION: "true", BOOTSTRAP_ADMIN: "fedadmin:admin-Pass-1", WORKERS: "0" });
  demoCase = await setUpDomain("demo", MEMBER, "Ann");
  otherCase = await setUpDomain("other", OUTSIDER, "Bea");
  // the user of the README's Try it, whom docs/graphql.md's commands sign in as
  await data(
    "mutation($i: CreateUserInput!) { createUser(input: $i) { username } }",
    { i: { username: "worker", password: "worker-pw", domain: "demo", permissions: ["ACCESS_API", "VIEW_DATA"] } },
    ADMIN,
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("federation: a supergraph over the running server", () => {
  it("a supergraph query resolves the gateway's fields through _entities over HTTP: the caller's domain's case, null for another domain's", async () => {
    const { _service } = await data("{ _service { sdl } }", {}, basic(MEMBER.username, MEMBER.password));
    const composed = composeWithVisits(_service.sdl as string);
    if (composed.errors) throw composed.errors[0];
    expect(composed.hints ?? []).toEqual([]);
    const plan = planOf(composed.supergraphSdl, "{ visitsDue { id caseName visitNotes } }");
    const visits = visitsSubgraph({ cases: [demoCase, otherCase] });

    const asUser = (user: { username: string; password: string }): SendToSubgraph => {
      return async (service, operation, variables) => {
        if (service === VISITS) return executeIn(visits, operation, variables);
        expect(service).toBe(GATEWAY);
        const { status, body } = await graphql(operation, variables, basic(user.username, user.password));
        expect(status).toBe(200);
        return body;
      };
    };

    const member = await executePlan(plan, asUser(MEMBER));
    expect(member.errors).toEqual([]);
    expect(member.entities).toEqual([
      {
        service: GATEWAY,
        representations: [
          { __typename: "Case", id: demoCase },
          { __typename: "Case", id: otherCase },
        ],
        answer: [{ caseName: "Ann" }, null],
      },
    ]);
    expect(member.data.visitsDue).toEqual([
      { __typename: "Case", id: demoCase, visitNotes: [expect.any(String)], caseName: "Ann" },
      { __typename: "Case", id: otherCase, visitNotes: [expect.any(String)] },
    ]);

    const outsider = await executePlan(plan, asUser(OUTSIDER));
    expect(outsider.errors).toEqual([]);
    expect(outsider.entities[0]?.answer).toEqual([null, { caseName: "Bea" }]);
  });

  it("_service and _entities need credentials like every request (401), and a subgraph request is logged as any other", async () => {
    const res = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ query: "{ _service { sdl } }" }),
    });
    expect(res.status).toBe(401);
    expect(server.output()).toMatch(/"route":"\/graphql"/);
  });

  it("docs/graphql.md: the Federation section's command, run as written, prints the SDL with the four keys", async () => {
    const blocks = blocksUnder(readDoc("docs/graphql.md"), "Federation", "sh");
    expect(blocks).toHaveLength(1);
    const { stdout } = await promisify(execFile)("bash", ["-e", "-o", "pipefail", "-c", blocks[0]!.code], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY: server.url },
    });
    const sdl = (JSON.parse(stdout) as { data: { _service: { sdl: string } } }).data._service.sdl;
    for (const type of ["Case", "Location", "App", "MultimediaJob"])
      expect(sdl).toMatch(new RegExp(`^type ${type} implements Node @key\\(fields: "id"\\)`, "m"));
  });
});
