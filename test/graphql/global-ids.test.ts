import { isInterfaceType, isObjectType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";
import { globalId } from "../../src/graphql/node.ts";
import { graphql } from "../generated/gql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";

/**
 * CONTRACT §7.3 global object identification, for every `id` of the schema: normalised client
 * caches (Apollo's InMemoryCache, Relay, urql graphcache) take any `id` for an object's identity.
 * An entity's `id` is its Node global id (`ApiKey` too); a value that is no object of its own
 * names its id for what it is (`CaseFetchEntry.requestedId`, `Actor.userId`) and has no `id`:
 * their old non-unique `id` fields are gone. Apollo Client's own cache over these answers:
 * test/clients/apollo-ids.test.ts.
 */

const ApiKeys = graphql(`
  query GlobalIdsApiKeys($username: String!) {
    apiKeys(username: $username) { id keyId prefix revokedAt }
  }
`);
const CreateApiKey = graphql(`
  mutation GlobalIdsCreateApiKey($username: String!) {
    createApiKey(username: $username) { key apiKey { id keyId username } }
  }
`);
const RevokeApiKey = graphql(`
  mutation GlobalIdsRevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) { id keyId revokedAt }
  }
`);
const ApiKeyNode = graphql(`
  query GlobalIdsApiKeyNode($id: ID!) {
    node(id: $id) { __typename id ... on ApiKey { keyId username prefix } }
  }
`);
const CreateCase = graphql(`
  mutation GlobalIdsCreateCase($domain: String!, $input: CaseInput!) {
    createCase(domain: $domain, input: $input) { case { caseId externalId openedBy { userId username } } }
  }
`);
const FetchEntries = graphql(`
  query GlobalIdsFetchEntries($domain: String!, $caseIds: [String!], $externalIds: [String!]) {
    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) { entries { by requestedId case { caseId } } }
  }
`);
const FormOfCase = graphql(`
  query GlobalIdsFormOfCase($domain: String!, $caseId: ID!) {
    case(domain: $domain, caseId: $caseId) { forms { userId } }
  }
`);

let app: TestApp;
let admin: TestUser;
let editor: TestUser;

beforeAll(async () => {
  app = await build({ workers: 0 });
  await createDomain(app, "demo");
  admin = await createUser(app, { superuser: true });
  editor = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
});
afterAll(() => app?.close());

describe("CONTRACT §7.3: every `id` is a global id", () => {
  it("§7.3: every type with an `id` (or `_id`) implements Node; values that are no object of their own have none", async () => {
    const schema = await buildGatewaySchema();
    const node = schema.getType("Node");
    expect(isInterfaceType(node)).toBe(true);
    const notGlobal: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith("__") || !(isObjectType(type) || isInterfaceType(type)) || type === node) continue;
      const fields = type.getFields();
      // Apollo's and urql's caches also key by `_id`
      for (const name of ["id", "_id"]) {
        const field = fields[name];
        if (!field) continue;
        if (!isObjectType(type) || !type.getInterfaces().some((i) => i.name === "Node")) notGlobal.push(`${type.name}.${name}`);
      }
    }
    expect(notGlobal).toEqual([]);
    const fieldsOf = (type: string) => {
      const found = schema.getType(type);
      return isObjectType(found) ? Object.keys(found.getFields()) : [];
    };
    expect(fieldsOf("CaseFetchEntry")).toEqual(expect.arrayContaining(["requestedId"]));
    expect(fieldsOf("CaseFetchEntry")).not.toContain("id");
    expect(fieldsOf("Actor")).toEqual(expect.arrayContaining(["userId"]));
    expect(fieldsOf("Actor")).not.toContain("id");
  });

  it("§7.3: an API key's id is a global id that node(id) fetches for a superuser, and null for anyone else", async () => {
    const created = await gql(app, admin.authorization, CreateApiKey, { username: editor.username });
    const { id, keyId } = created.body.data!.createApiKey.apiKey;
    expect(keyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(id).toBe(globalId("ApiKey", "", keyId));
    const listed = await gql(app, admin.authorization, ApiKeys, { username: editor.username });
    expect(listed.body.data!.apiKeys.map((key) => key.id)).toContain(id);

    const fetched = await gql(app, admin.authorization, ApiKeyNode, { id });
    expect(fetched.body.data!.node).toEqual({ __typename: "ApiKey", id, keyId, username: editor.username, prefix: expect.any(String) });
    const hidden = await gql(app, editor.authorization, ApiKeyNode, { id });
    expect(hidden.body).toEqual({ data: { node: null } });
  });

  it("§7.3: revokeApiKey takes the global id, and the key's own id (keyId) as before; another type's global id names no key", async () => {
    const first = (await gql(app, admin.authorization, CreateApiKey, { username: editor.username })).body.data!.createApiKey.apiKey;
    const second = (await gql(app, admin.authorization, CreateApiKey, { username: editor.username })).body.data!.createApiKey.apiKey;
    const byGlobal = await gql(app, admin.authorization, RevokeApiKey, { id: first.id });
    expect(byGlobal.body.data!.revokeApiKey).toEqual({ id: first.id, keyId: first.keyId, revokedAt: expect.any(String) });
    const byKeyId = await gql(app, admin.authorization, RevokeApiKey, { id: second.keyId });
    expect(byKeyId.body.data!.revokeApiKey).toEqual({ id: second.id, keyId: second.keyId, revokedAt: expect.any(String) });
    const wrongType = await gql(app, admin.authorization, RevokeApiKey, { id: globalId("User", "", first.keyId) });
    expect(errorCodes(wrongType.body)).toEqual(["NOT_FOUND"]);
  });

  it("§7.3: casesByIds entries name the id they requested `requestedId`, no `id` a cache would merge them by", async () => {
    const written = await gql(app, editor.authorization, CreateCase, {
      domain: "demo",
      input: { caseType: "t", caseName: "hh", ownerId: "o", externalId: "hh-001" },
    });
    const { caseId } = written.body.data!.createCase.case;
    const res = await gql(app, editor.authorization, FetchEntries, { domain: "demo", caseIds: ["hh-001"], externalIds: ["hh-001"] });
    expect(res.body.data!.casesByIds.entries).toEqual([
      { by: "case_id", requestedId: "hh-001", case: null },
      { by: "external_id", requestedId: "hh-001", case: { caseId } },
    ]);
  });

  it("§7.3: openedBy names the user by `userId`, the form's userId", async () => {
    const written = await gql(app, editor.authorization, CreateCase, { domain: "demo", input: { caseType: "t", caseName: "by", ownerId: "o" } });
    const { caseId, openedBy } = written.body.data!.createCase.case;
    const forms = await gql(app, editor.authorization, FormOfCase, { domain: "demo", caseId });
    const [form] = forms.body.data!.case!.forms;
    expect(openedBy).toEqual({ userId: form.userId, username: editor.username });
  });
});
