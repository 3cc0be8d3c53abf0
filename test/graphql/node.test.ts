import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isInterfaceType } from "graphql";
import { graphql } from "../generated/gql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { gql } from "../helpers/graphql.ts";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";
import { NODE_FETCHERS } from "../../src/gateway/features.ts";
import { globalId } from "../../src/graphql/node.ts";

/** CONTRACT §7.3: global object identification (Node, node, nodes) with opaque ids. */

const CreateCase = graphql(`
  mutation NodeCreateCase($domain: String!, $input: CaseInput!) {
    createCase(domain: $domain, input: $input) { xformId case { id caseId } }
  }
`);
const NodeById = graphql(`
  query NodeById($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on Case { caseId caseName }
      ... on Form { formId caseIds }
    }
  }
`);
const NodesByIds = graphql(`
  query NodesByIds($ids: [ID!]!) {
    nodes(ids: $ids) { __typename id }
  }
`);
const CaseForms = graphql(`
  query NodeCaseForms($domain: String!, $caseId: ID!) {
    case(domain: $domain, caseId: $caseId) { id forms { id formId } }
  }
`);

let app: TestApp;
let reader: TestUser;
let outsider: TestUser;
let caseId: string;
let caseGlobalId: string;
let formId: string;

beforeAll(async () => {
  app = await build();
  await createDomain(app, "demo");
  await createDomain(app, "other");
  const editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
  reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  outsider = await createUser(app, { domain: "other", permissions: ["access_api", "edit_data"] });
  const created = await gql(app, editor.authorization, CreateCase, { domain: "demo", input: { caseType: "t", caseName: "Ann", ownerId: "o" } });
  ({ id: caseGlobalId, caseId } = created.body.data!.createCase.case);
  formId = created.body.data!.createCase.xformId;
});
afterAll(() => app.close());

describe("CONTRACT §7.3 global object identification", () => {
  it("every type implementing Node has a fetcher for node(id)", async () => {
    const schema = await buildGatewaySchema();
    const node = schema.getType("Node");
    expect(isInterfaceType(node)).toBe(true);
    const implementing = schema.getPossibleTypes(node as never).map((t) => t.name);
    expect(implementing.filter((name) => !(name in NODE_FETCHERS))).toEqual([]);
  });

  it("a case's id is an opaque global id, distinct from caseId, and node(id) fetches the case again", async () => {
    expect(caseGlobalId).not.toBe(caseId);
    expect(caseGlobalId).not.toContain(caseId);
    const res = await gql(app, reader.authorization, NodeById, { id: caseGlobalId });
    expect(res.body).toEqual({ data: { node: { __typename: "Case", id: caseGlobalId, caseId, caseName: "Ann" } } });
  });

  it("a form's id is a global id; formId is the write's xformId; node(id) fetches the form", async () => {
    const res = await gql(app, reader.authorization, CaseForms, { domain: "demo", caseId });
    const [form] = res.body.data!.case!.forms;
    expect(form.formId).toBe(formId);
    const fetched = await gql(app, reader.authorization, NodeById, { id: form.id });
    expect(fetched.body.data!.node).toEqual({ __typename: "Form", id: form.id, formId, caseIds: [caseId] });
  });

  it("node of an unknown id, a malformed id or another domain's object is null, never an error", async () => {
    const unknown = globalId("Case", "demo", "00000000-0000-4000-8000-000000000000");
    for (const id of [unknown, "nope", "", "W10", globalId("Case", "nodomain", caseId), "💥"]) {
      const res = await gql(app, reader.authorization, NodeById, { id });
      expect([id, res.body]).toEqual([id, { data: { node: null } }]);
    }
    const hidden = await gql(app, outsider.authorization, NodeById, { id: caseGlobalId });
    expect(hidden.body).toEqual({ data: { node: null } });
  });

  it("nodes(ids) answers in order, null for each id the caller cannot see", async () => {
    const res = await gql(app, reader.authorization, NodesByIds, { ids: [caseGlobalId, "nope", caseGlobalId] });
    expect(res.body).toEqual({
      data: { nodes: [{ __typename: "Case", id: caseGlobalId }, null, { __typename: "Case", id: caseGlobalId }] },
    });
  });

  it("#24 G8: one encoding per object: a case's or form's id spelled in upper case names nothing, in node and nodes", async () => {
    const upperCase = globalId("Case", "demo", caseId.toUpperCase());
    const upperForm = globalId("Form", "demo", formId.toUpperCase());
    const upperDomain = globalId("Case", "DEMO", caseId);
    for (const id of [upperCase, upperForm, upperDomain]) {
      const res = await gql(app, reader.authorization, NodeById, { id });
      expect([id, res.body]).toEqual([id, { data: { node: null } }]);
    }
    const res = await gql(app, reader.authorization, NodesByIds, { ids: [upperCase, caseGlobalId, upperForm] });
    expect(res.body).toEqual({ data: { nodes: [null, { __typename: "Case", id: caseGlobalId }, null] } });
  });

  it("node still needs credentials: 401 without them", async () => {
    const res = await app
      .http()
      .post("/graphql")
      .send({ query: `{ node(id: "${caseGlobalId}") { id } }` });
    expect(res.status).toBe(401);
  });
});
