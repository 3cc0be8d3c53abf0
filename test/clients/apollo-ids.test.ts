import { ApolloClient, HttpLink, InMemoryCache, type OperationVariables, type TypedDocumentNode } from "@apollo/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";

/**
 * CONTRACT §7.3 global object identification, proven with Apollo Client 4's default
 * `InMemoryCache` (no type policies) against a running server: the cache keys every object with
 * an `id` by `__typename:id`, so an `id` that two different objects share merges them. Each test
 * reads a query's answer back from the cache and compares it with the server's own answer (the
 * same document, uncached): no entry merged into another, none lost. Once `casesByIds(caseIds:
 * ["hh-001"], externalIds: ["hh-001"])` came back from the cache as two "not found" entries.
 */

const DOMAIN = "demo";

const ByIds = graphql(`
  query ApolloIdsByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {
    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {
      matchingRecords
      missingRecords
      entries { by requestedId case { id caseId caseName openedBy { userId username } } }
    }
  }
`);

const EveryCaseRead = graphql(`
  query ApolloIdsCaseReads($domain: String!, $caseId: ID!, $externalId: String!, $id: ID!) {
    cases(domain: $domain, first: 100) { nodes { id caseId caseName openedBy { userId username } } }
    case(domain: $domain, caseId: $caseId) { id caseName openedBy { userId username } parent { id openedBy { userId username } } }
    caseByExternalId(domain: $domain, externalId: $externalId) { id caseName openedBy { userId username } }
    node(id: $id) { id ... on Case { caseName openedBy { userId username } } }
  }
`);

const CreateCase = graphql(`
  mutation ApolloIdsCreateCase($domain: String!, $input: CaseInput!) {
    createCase(domain: $domain, input: $input) { xformId case { id caseId caseName openedBy { userId username } } }
  }
`);

const ApiKeys = graphql(`
  query ApolloIdsApiKeys($first: String!, $second: String!) {
    first: apiKeys(username: $first) { id keyId username name prefix revokedAt }
    second: apiKeys(username: $second) { id keyId username name prefix revokedAt }
  }
`);

const CreateApiKey = graphql(`
  mutation ApolloIdsCreateApiKey($username: String!, $name: String) {
    createApiKey(username: $username, name: $name) { key apiKey { id keyId username name prefix revokedAt } }
  }
`);

const RevokeApiKey = graphql(`
  mutation ApolloIdsRevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) { id keyId revokedAt }
  }
`);

let app: TestApp;
let base: string;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  app = await build({ workers: 0 });
  await createDomain(app, DOMAIN);
  admin = await createUser(app, { superuser: true });
  alice = await createUser(app, { domain: DOMAIN, permissions: ["access_api", "edit_data"] });
  bob = await createUser(app, { domain: DOMAIN, permissions: ["access_api", "edit_data"] });
  base = await app.server.listen(0, "127.0.0.1");
});
afterAll(() => app?.close());

/** An Apollo Client as an app makes one: HttpLink and the default InMemoryCache. */
function apolloClient(user: TestUser): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({ uri: `${base}/graphql`, headers: { Authorization: user.authorization }, fetch }),
    cache: new InMemoryCache(),
  });
}

/**
 * The query's answer as `client` shows it (read back from its normalised cache), beside the
 * server's answer to the very same document (Apollo adds `__typename`s) fetched without a cache.
 */
async function cachedAndServed<TData, TVariables extends OperationVariables>(
  client: ApolloClient,
  query: TypedDocumentNode<TData, TVariables>,
  variables: TVariables,
): Promise<{ cached: unknown; served: unknown }> {
  const served = await client.query({ query, variables, fetchPolicy: "no-cache" });
  await client.query({ query, variables, fetchPolicy: "network-only" });
  const cached = client.readQuery({ query, variables });
  return { cached, served: served.data };
}

async function writeCase(user: TestUser, input: { caseName: string; externalId?: string; parentId?: string }): Promise<string> {
  const res = await app
    .http()
    .post(`/a/${DOMAIN}/api/case/v2/`)
    .set("Authorization", user.authorization)
    .send({
      case_type: "household",
      case_name: input.caseName,
      owner_id: "o",
      ...(input.externalId ? { external_id: input.externalId } : {}),
      ...(input.parentId ? { indices: { parent: { case_id: input.parentId, case_type: "household", relationship: "child" } } } : {}),
    });
  expect(res.status).toBe(200);
  return (res.body as { case: { case_id: string } }).case.case_id;
}

describe("CONTRACT §7.3: Apollo Client's default InMemoryCache keeps every object of every answer", () => {
  it("§7.3 casesByIds(caseIds: [hh-001], externalIds: [hh-001]): the cache keeps the not-found entry and the found case", async () => {
    const caseId = await writeCase(alice, { caseName: "household 1", externalId: "hh-001" });
    const client = apolloClient(alice);
    const variables = { domain: DOMAIN, caseIds: ["hh-001"], externalIds: ["hh-001"] };
    const { cached, served } = await cachedAndServed(client, ByIds, variables);
    expect(cached).toEqual(served);
    const entries = (cached as { casesByIds: { entries: { by: string; case: { caseId: string } | null }[] } }).casesByIds.entries;
    expect(entries.map((entry) => [entry.by, entry.case?.caseId ?? null])).toEqual([
      ["case_id", null],
      ["external_id", caseId],
    ]);
    client.stop();
  });

  it("§7.3 casesByIds with repeated and missing ids: one entry per requested id, in order, each as served", async () => {
    const first = await writeCase(alice, { caseName: "a", externalId: "ext-a" });
    const second = await writeCase(bob, { caseName: "b", externalId: "ext-b" });
    const client = apolloClient(alice);
    const variables = { domain: DOMAIN, caseIds: [first, "nope", first, second, "nope"], externalIds: ["ext-b", "nope", "ext-a", "ext-b"] };
    const { cached, served } = await cachedAndServed(client, ByIds, variables);
    expect(cached).toEqual(served);
    const { entries, matchingRecords, missingRecords } = (
      cached as { casesByIds: { entries: unknown[]; matchingRecords: number; missingRecords: number } }
    ).casesByIds;
    expect([entries.length, matchingRecords, missingRecords]).toEqual([9, 6, 3]);
    client.stop();
  });

  it("§7.3 cases, case, caseByExternalId and node: openedBy of cases opened by two users, each as served", async () => {
    const parent = await writeCase(alice, { caseName: "parent", externalId: "ext-parent" });
    const child = await writeCase(bob, { caseName: "child", parentId: parent });
    const client = apolloClient(bob);
    const { id } = (await client.query({ query: EveryCaseRead, variables: { domain: DOMAIN, caseId: child, externalId: "ext-parent", id: "x" } }))
      .data!.case!;
    const variables = { domain: DOMAIN, caseId: child, externalId: "ext-parent", id };
    const { cached, served } = await cachedAndServed(client, EveryCaseRead, variables);
    expect(cached).toEqual(served);
    const read = cached as { case: { openedBy: { username: string }; parent: { openedBy: { username: string } } } };
    expect([read.case.openedBy.username, read.case.parent.openedBy.username]).toEqual([bob.username, alice.username]);
    client.stop();
  });

  it("§7.3 createCase: the written case and its openedBy, as served, and the cached case the same object", async () => {
    const client = apolloClient(alice);
    const written = await client.mutate({
      mutation: CreateCase,
      variables: { domain: DOMAIN, input: { caseType: "household", caseName: "new", ownerId: "o" } },
    });
    const written2 = await client.mutate({
      mutation: CreateCase,
      variables: { domain: DOMAIN, input: { caseType: "household", caseName: "new 2", ownerId: "o" } },
    });
    const [one, two] = [written.data!.createCase.case, written2.data!.createCase.case];
    expect(one.id).not.toBe(two.id);
    const cached = client.cache.extract() as Record<string, unknown>;
    expect(cached[`Case:${one.id}`]).toMatchObject({ caseName: "new", openedBy: { userId: one.openedBy!.userId, username: alice.username } });
    expect(cached[`Case:${two.id}`]).toMatchObject({ caseName: "new 2" });
    client.stop();
  });

  it("§7.3 apiKeys of two users, createApiKey and revokeApiKey: each key is one cached object, updated in place", async () => {
    const client = apolloClient(admin);
    const created = await client.mutate({ mutation: CreateApiKey, variables: { username: alice.username, name: "second" } });
    const variables = { first: alice.username, second: bob.username };
    const { cached, served } = await cachedAndServed(client, ApiKeys, variables);
    expect(cached).toEqual(served);
    const keys = cached as { first: { id: string }[]; second: { id: string }[] };
    expect([keys.first.length, keys.second.length]).toEqual([2, 1]);
    expect(new Set([...keys.first, ...keys.second].map((key) => key.id)).size).toBe(3);

    // the revocation's answer updates the listed key in the cache: no refetch
    const revoked = created.data!.createApiKey.apiKey;
    await client.mutate({ mutation: RevokeApiKey, variables: { id: revoked.id } });
    const after = client.readQuery({ query: ApiKeys, variables });
    expect(after!.first.find((key) => key.id === revoked.id)?.revokedAt).toEqual(expect.any(String));
    expect(after!.first.filter((key) => key.revokedAt === null)).toHaveLength(1);
    client.stop();
  });
});
