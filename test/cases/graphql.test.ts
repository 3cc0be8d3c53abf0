import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { WebSocket } from "ws";
import { graphql } from "../generated/gql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { countQueries } from "../helpers/db.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";
import { countCases } from "../helpers/rows.ts";

/** CONTRACT §5 for cases: the same operations, rules and messages as REST, relations batched. */

const CreateCase = graphql(`
  mutation GqlCreateCase($domain: String!, $input: CaseInput!) {
    createCase(domain: $domain, input: $input) { xformId case { caseId caseName externalId properties closed } }
  }
`);
const UpdateCase = graphql(`
  mutation GqlUpdateCase($domain: String!, $caseId: ID!, $input: CaseInput!) {
    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { caseName properties closed dateClosed } }
  }
`);
const UpsertCase = graphql(`
  mutation GqlUpsertCase($domain: String!, $externalId: String!, $input: CaseInput!) {
    upsertCase(domain: $domain, externalId: $externalId, input: $input) { case { caseId caseName } }
  }
`);
const BulkWrite = graphql(`
  mutation GqlBulkWrite($domain: String!, $items: [CaseBulkItem!]!) {
    bulkWriteCases(domain: $domain, items: $items) { xformId cases { caseId caseName parent { caseId } } }
  }
`);
const CasesPage = graphql(`
  query GqlCasesPage($domain: String!, $filter: CaseFilter, $first: Int, $after: String) {
    cases(domain: $domain, filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { caseId caseName }
    }
  }
`);
const CasesWithRelations = graphql(`
  query GqlCasesWithRelations($domain: String!, $first: Int) {
    cases(domain: $domain, first: $first, filter: { caseType: ["visit"] }) {
      nodes {
        caseId
        parent { caseId caseName }
        indices { name relationship case { caseId } }
        openedBy { username }
      }
    }
  }
`);
const Relations = graphql(`
  query GqlRelations($domain: String!, $caseId: ID!) {
    case(domain: $domain, caseId: $caseId) {
      caseName
      children { caseName }
      extensions { caseName }
      host { caseName }
      forms { id formId username deviceId xmlns caseIds }
    }
  }
`);
const ByIds = graphql(`
  query GqlByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {
    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {
      matchingRecords missingRecords entries { by requestedId case { caseName } }
    }
  }
`);
const ByExternal = graphql(`
  query GqlByExternal($domain: String!, $externalId: String!) {
    caseByExternalId(domain: $domain, externalId: $externalId) { caseName }
  }
`);
const Form = graphql(`
  query GqlForm($domain: String!, $formId: ID!) {
    form(domain: $domain, formId: $formId) { formId xmlns username xml problem caseIds }
  }
`);

let app: TestApp;
let editor: TestUser;

async function seedBulk(items: Record<string, unknown>[]) {
  const res = await app.http().post("/a/demo/api/case/v2/").set("Authorization", editor.authorization).send(items);
  expect(res.status).toBe(200);
  return res.body.cases as { case_id: string }[];
}

describe("case queries and mutations", () => {
  beforeEach(async () => {
    app = await build();
    await createDomain(app, "demo");
    editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  });
  afterEach(() => app.close());

  it("createCase, updateCase and upsertCase write through the same service as REST", async () => {
    const created = await gql(app, editor.authorization, CreateCase, {
      domain: "demo",
      input: { caseType: "patient", caseName: "Ann", ownerId: "o1", externalId: "e-1", properties: { age: "3" } },
    });
    expect(created.body.errors).toBeUndefined();
    const { caseId } = created.body.data!.createCase.case;
    const rest = await app.http().get(`/a/demo/api/case/v2/${caseId}`).set("Authorization", editor.authorization);
    expect(rest.body.properties).toEqual({ age: "3" });

    const updated = await gql(app, editor.authorization, UpdateCase, {
      domain: "demo",
      caseId,
      input: { properties: { weight: "10" }, close: true },
    });
    expect(updated.body.data!.updateCase.case).toMatchObject({ properties: { age: "3", weight: "10" }, closed: true });

    const upserted = await gql(app, editor.authorization, UpsertCase, { domain: "demo", externalId: "e-1", input: { caseName: "Anne" } });
    expect(upserted.body.data!.upsertCase.case).toEqual({ caseId, caseName: "Anne" });
  });

  it("gives the REST validation messages as BAD_USER_INPUT", async () => {
    const missing = await gql(app, editor.authorization, CreateCase, { domain: "demo", input: { caseName: "x", ownerId: "o" } });
    expect(errorCodes(missing.body)).toEqual(["BAD_USER_INPUT"]);
    expect(missing.body.errors![0].message).toBe("Property case_type is required.");

    const badProperty = await gql(app, editor.authorization, CreateCase, {
      domain: "demo",
      input: { caseType: "t", caseName: "x", ownerId: "o", properties: { "1bad": "v" } },
    });
    expect(badProperty.body.errors![0].message).toBe("Error with case property '1bad'. Case property names must be valid XML identifiers.");

    const bulk = await gql(app, editor.authorization, BulkWrite, { domain: "demo", items: [{ caseName: "no flag" }] });
    expect(bulk.body.errors![0].message).toBe("Error in row 1: A 'create' flag is required for each update.");
    expect(await countCases(app)).toBe(0);
  });

  it("bulkWriteCases links a child to a parent created in the same request by temporary id", async () => {
    const res = await gql(app, editor.authorization, BulkWrite, {
      domain: "demo",
      items: [
        {
          create: true,
          caseType: "visit",
          caseName: "V",
          ownerId: "o",
          indices: { parent: { temporary_id: "p", case_type: "patient", relationship: "child" } },
        },
        { create: true, caseType: "patient", caseName: "P", ownerId: "o", temporaryId: "p" },
      ],
    });
    expect(res.body.errors).toBeUndefined();
    const [child, parent] = res.body.data!.bulkWriteCases.cases;
    expect(child.parent).toEqual({ caseId: parent.caseId });
  });

  it("pages through a connection with first/after, each case once, totalCount the same on every page", async () => {
    await seedBulk(Array.from({ length: 25 }, (_, i) => ({ create: true, case_type: "t", case_name: `c${i}`, owner_id: "o" })));
    const seen: string[] = [];
    let after: string | null = null;
    const totals: number[] = [];
    do {
      const res: Awaited<ReturnType<typeof gql<any, any>>> = await gql(app, editor.authorization, CasesPage, {
        domain: "demo",
        first: 10,
        after,
      });
      const page = res.body.data!.cases;
      totals.push(page.totalCount);
      seen.push(...page.nodes.map((n: { caseId: string }) => n.caseId));
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect(totals).toEqual([25, 25, 25]);
  });

  it("filters as REST does, and refuses more than 5000 per page", async () => {
    await seedBulk([
      { create: true, case_type: "a", case_name: "one", owner_id: "o", properties: { colour: "red" } },
      { create: true, case_type: "a", case_name: "two", owner_id: "o", properties: { colour: "blue" } },
      { create: true, case_type: "b", case_name: "three", owner_id: "o" },
    ]);
    const res = await gql(app, editor.authorization, CasesPage, {
      domain: "demo",
      filter: { caseType: ["a"], properties: [{ name: "colour", values: ["red"] }] },
    });
    expect(res.body.data!.cases.nodes.map((n) => n.caseName)).toEqual(["one"]);

    const tooMany = await gql(app, editor.authorization, CasesPage, { domain: "demo", first: 5001 });
    expect(tooMany.body.errors![0].message).toBe("You cannot request more than 5000 cases per request.");
    const badDate = await gql(app, editor.authorization, CasesPage, { domain: "demo", filter: { lastModified: { gte: "2020-02-30" } } });
    expect(badDate.body.errors![0].message).toBe("Cannot parse datetime '2020-02-30'");
  });

  it("resolves children, extensions, host, forms, by-id and by-external-id reads", async () => {
    const [parent] = await seedBulk([{ create: true, case_type: "patient", case_name: "P", owner_id: "o", external_id: "ext-p" }]);
    await seedBulk([
      {
        create: true,
        case_type: "visit",
        case_name: "child",
        owner_id: "o",
        indices: { parent: { case_id: parent.case_id, case_type: "patient", relationship: "child" } },
      },
      {
        create: true,
        case_type: "note",
        case_name: "ext",
        owner_id: "o",
        indices: { host: { case_id: parent.case_id, case_type: "patient", relationship: "extension" } },
      },
    ]);
    const res = await gql(app, editor.authorization, Relations, { domain: "demo", caseId: parent.case_id });
    expect(res.body.data!.case).toMatchObject({
      caseName: "P",
      children: [{ caseName: "child" }],
      extensions: [{ caseName: "ext" }],
      host: null,
    });
    const [form] = res.body.data!.case!.forms;
    expect(form).toMatchObject({ username: editor.username, caseIds: [parent.case_id] });

    const full = await gql(app, editor.authorization, Form, { domain: "demo", formId: form.formId });
    expect(full.body.data!.form!.xml).toContain(parent.case_id);

    const byIds = await gql(app, editor.authorization, ByIds, { domain: "demo", caseIds: [parent.case_id, "nope"], externalIds: ["ext-p"] });
    expect(byIds.body.data!.casesByIds).toEqual({
      matchingRecords: 2,
      missingRecords: 1,
      entries: [
        { by: "case_id", requestedId: parent.case_id, case: { caseName: "P" } },
        { by: "case_id", requestedId: "nope", case: null },
        { by: "external_id", requestedId: "ext-p", case: { caseName: "P" } },
      ],
    });
    const byExternal = await gql(app, editor.authorization, ByExternal, { domain: "demo", externalId: "ext-p" });
    expect(byExternal.body.data!.caseByExternalId).toEqual({ caseName: "P" });
  });

  it("casesByIds answers FORBIDDEN before input errors (401, then 403/404, then 400: no ids, over 5000 ids)", async () => {
    await createDomain(app, "other");
    const stranger = await createUser(app, { domain: "other", permissions: ["access_api", "edit_data"] });
    const noViewData = await createUser(app, { domain: "demo", permissions: ["access_api"] });
    const tooMany = Array.from({ length: 5001 }, (_, i) => `id-${i}`);
    const bad = [
      { domain: "demo", caseIds: [], externalIds: [] },
      { domain: "demo", caseIds: null, externalIds: null },
      { domain: "demo", caseIds: tooMany, externalIds: [] },
      { domain: "demo", caseIds: [], externalIds: tooMany },
    ];
    for (const variables of bad) {
      expect(errorCodes((await gql(app, undefined, ByIds, variables)).body)).toEqual(["UNAUTHENTICATED"]);
      // the same input from a reader of the domain is a 400: the permission is answered first
      expect(errorCodes((await gql(app, editor.authorization, ByIds, variables)).body)).toEqual(["BAD_USER_INPUT"]);
      for (const caller of [stranger, noViewData]) {
        const res = await gql(app, caller.authorization, ByIds, variables);
        expect(errorCodes(res.body), JSON.stringify(res.body).slice(0, 300)).toEqual(["FORBIDDEN"]);
      }
      const unknownDomain = await gql(app, stranger.authorization, ByIds, { ...variables, domain: "nowhere" });
      expect(errorCodes(unknownDomain.body)).toEqual(["FORBIDDEN"]);
    }
  });

  it("refuses a member of another domain with FORBIDDEN", async () => {
    await createDomain(app, "other");
    const stranger = await createUser(app, { domain: "other", permissions: ["access_api", "edit_data"] });
    const res = await gql(app, stranger.authorization, CasesPage, { domain: "demo" });
    expect(errorCodes(res.body)).toEqual(["FORBIDDEN"]);
  });
});

describe("relations are batched", () => {
  let counter: ReturnType<typeof countQueries>;
  beforeEach(async () => {
    app = await build({}, (db) => (counter = countQueries(db)).db);
    await createDomain(app, "demo");
    editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  });
  afterEach(() => app.close());

  it("costs the same number of queries for a page of 10 and a page of 1,000 cases with parents", async () => {
    const parents = await seedBulk(
      Array.from({ length: 100 }, (_, i) => ({ create: true, case_type: "patient", case_name: `p${i}`, owner_id: "o" })),
    );
    for (let batch = 0; batch < 10; batch++) {
      await seedBulk(
        Array.from({ length: 100 }, (_, i) => ({
          create: true,
          case_type: "visit",
          case_name: `v${batch}-${i}`,
          owner_id: "o",
          indices: { parent: { case_id: parents[i].case_id, case_type: "patient", relationship: "child" } },
        })),
      );
    }
    const measure = async (first: number) => {
      counter.reset();
      const res = await gql(app, editor.authorization, CasesWithRelations, { domain: "demo", first });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data!.cases.nodes).toHaveLength(first);
      expect(res.body.data!.cases.nodes.every((n) => n.parent !== null && n.indices[0].case?.caseId === n.parent.caseId)).toBe(true);
      return counter.count();
    };
    const small = await measure(10);
    const large = await measure(1000);
    // Constant, not proportional: DataLoader may split a batch across ticks under load (+1 or 2),
    // where N+1 loading would cost about a thousand more.
    expect(large).toBeLessThanOrEqual(small + 2);
    expect(large).toBeLessThanOrEqual(18);
  });
});

describe("Subscription.caseChanged over WebSocket", () => {
  let url: string;
  let client: Client | undefined;
  beforeEach(async () => {
    app = await build();
    await createDomain(app, "demo");
    editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
  });
  afterEach(async () => {
    await client?.dispose();
    client = undefined;
    await app.close();
  });

  const subscribe = (authorization: string | undefined, query: string) => {
    client = createClient({
      url,
      webSocketImpl: WebSocket,
      connectionParams: authorization ? { Authorization: authorization } : {},
      retryAttempts: 0,
      lazy: true,
    });
    return client.iterate<{ caseChanged: { caseId: string; caseType: string; formId: string } }>({ query });
  };

  it("pushes each committed write of the domain, filtered by caseType", async () => {
    const events = subscribe(editor.authorization, 'subscription { caseChanged(domain: "demo", caseType: "visit") { caseId caseType formId } }');
    const first = events.next();
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the subscription start
    await seedBulk([{ create: true, case_type: "patient", case_name: "ignored", owner_id: "o" }]);
    const [visit] = await seedBulk([{ create: true, case_type: "visit", case_name: "seen", owner_id: "o" }]);
    const { value } = await first;
    expect(value?.data?.caseChanged).toMatchObject({ caseId: visit.case_id, caseType: "visit" });
    await events.return?.();
  });

  it("closes the connection (4403) when connection_init carries no valid credentials", async () => {
    const events = subscribe("ApiKey nobody:wrong", 'subscription { caseChanged(domain: "demo") { caseId } }');
    await expect(events.next()).rejects.toMatchObject({ code: 4403 });
  });

  it("refuses a subscription to a domain the user is not in with FORBIDDEN", async () => {
    await createDomain(app, "other");
    const events = subscribe(editor.authorization, 'subscription { caseChanged(domain: "other") { caseId } }');
    const result = await events.next();
    expect(result.value?.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });
});
