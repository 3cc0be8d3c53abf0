import {
  GraphQLObjectType,
  GraphQLSchema,
  isObjectType,
  lexicographicSortSchema,
  parse,
  printSchema,
  type GraphQLNamedType,
  type OperationDefinitionNode,
} from "graphql";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";
import { FEDERATION_SPEC_URL } from "../../src/graphql/federation.ts";
import { queryCost } from "../../src/graphql/limits.ts";
import { globalId } from "../../src/graphql/node.ts";
import { chargedDomains } from "../../src/graphql/rate-limit.ts";
import { buildServer, type HttpServer } from "../../src/server.ts";
import { build, createDomain, createUser, validatingRequest, type TestApp, type TestUser } from "../helpers/app.ts";
import { createApp, appSource, png, postMultimedia, zip } from "../helpers/archives.ts";
import { seedLocationTypes } from "../helpers/locations.ts";
import { connectWs, until } from "../helpers/ws.ts";

/**
 * FEDERATION=true: /graphql is also an Apollo Federation 2 subgraph. `_service { sdl }` is its SDL
 * (`@link` to the federation spec, `@key(fields: "id")` on Case, Location, App and MultimediaJob);
 * `_entities` finds each representation through `nodes`' path, so that a caller gets an entity
 * exactly when `nodes` would give it the same id: null for another domain's, a malformed or an
 * unknown id. The subgraph is the plain schema plus federation's own, under the same limits; with
 * FEDERATION unset neither field exists. Composition and query plans:
 * test/clients/federation-composition.test.ts; a real server process: test/process/federation.test.ts.
 */

const ENTITY_FIELDS = `
  __typename
  ... on Case { id caseId caseName }
  ... on Location { id locationId name }
  ... on App { id appId name }
  ... on MultimediaJob { id processingId }
`;
const ENTITIES = `query Entities($representations: [_Any!]!) { _entities(representations: $representations) { ${ENTITY_FIELDS} } }`;
const NODES = `query Nodes($ids: [ID!]!) { nodes(ids: $ids) { ${ENTITY_FIELDS} } }`;

let app: TestApp;
/** the same services and database served with FEDERATION off */
let plain: HttpServer;
let member: TestUser;
let outsider: TestUser;
/** the global id of each entity of the "demo" domain, by type */
const ids: Record<"Case" | "Location" | "App" | "MultimediaJob", string> = { Case: "", Location: "", App: "", MultimediaJob: "" };
let otherCase: string;

function post(user: TestUser | undefined, query: string, variables: Record<string, unknown> = {}, server = app.server) {
  const req = validatingRequest(server.app).post("/graphql").set("Content-Type", "application/json");
  if (user) req.set("Authorization", user.authorization);
  return req.send({ query, variables });
}

async function data<T = Record<string, any>>(user: TestUser, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await post(user, query, variables);
  expect(res.body.errors).toBeUndefined();
  return res.body.data as T;
}

const representation = (type: keyof typeof ids) => ({ __typename: type, id: ids[type] });
const entities = (user: TestUser, representations: unknown[]) => post(user, ENTITIES, { representations });

async function createCase(user: TestUser, domain: string, caseName: string): Promise<string> {
  const created = await data(user, "mutation($d: String!, $i: CaseInput!) { createCase(domain: $d, input: $i) { case { id } } }", {
    d: domain,
    i: { caseType: "visit", caseName, ownerId: "o" },
  });
  return created.createCase.case.id;
}

beforeAll(async () => {
  app = await build({ federation: true });
  plain = await buildServer({ ...app.services, config: { ...app.services.config, federation: false } });
  const permissions = ["access_api", "edit_data", "view_data", "edit_apps", "edit_locations", "view_locations"];
  for (const domain of ["demo", "other"]) {
    await createDomain(app, domain);
    await seedLocationTypes(app, domain);
  }
  member = await createUser(app, { domain: "demo", permissions });
  outsider = await createUser(app, { domain: "other", permissions });

  ids.Case = await createCase(member, "demo", "Ann");
  otherCase = await createCase(outsider, "other", "Bea");
  const location = await data(member, 'mutation($i: LocationInput!) { createLocation(domain: "demo", input: $i) { id } }', {
    i: { name: "North", locationTypeCode: "country" },
  });
  ids.Location = location.createLocation.id;
  const appId = await createApp(app, member.authorization, "demo", appSource({ paths: ["jr://file/commcare/image/a.png"] }), "Clinic");
  const upload = await postMultimedia(app, member.authorization, "demo", appId, await zip([{ name: "commcare/image/a.png", data: png(1) }]));
  expect(upload.status).toBe(200);
  const found = await data(
    member,
    'query($a: ID!, $p: ID!) { app(domain: "demo", appId: $a) { id } multimediaJob(domain: "demo", processingId: $p) { id } }',
    {
      a: appId,
      p: upload.body.processing_id,
    },
  );
  ids.App = found.app.id;
  ids.MultimediaJob = found.multimediaJob.id;
});
afterAll(async () => {
  await plain?.close();
  await app?.close();
});

describe("federation: _service { sdl }", () => {
  it('is the subgraph\'s SDL: linked to Federation 2 importing @key, with @key(fields: "id") on Case, Location, App and MultimediaJob and on no other type', async () => {
    const { _service } = await data(member, "{ _service { sdl } }");
    const sdl: string = _service.sdl;
    expect(sdl).toContain(`extend schema @link(url: "${FEDERATION_SPEC_URL}", import: ["@key"])`);
    const keyed = [...sdl.matchAll(/^type (\w+)[^{\n]* @key\(fields: "id"\)/gm)].map((match) => match[1]);
    expect(keyed.sort()).toEqual(["App", "Case", "Location", "MultimediaJob"]);
    expect(sdl.match(/@key\(fields: "id"\)/g)).toHaveLength(4);
    expect(sdl).toContain("union _Entity = App | Case | Location | MultimediaJob");
  });

  it("needs credentials, as every GraphQL request: 401 without them", async () => {
    const res = await post(undefined, "{ _service { sdl } }");
    expect(res.status).toBe(401);
  });
});

describe("federation: _entities, scoped as nodes", () => {
  it("answers the entity of each of the four types for a member of its domain, in order, exactly as nodes answers the same ids", async () => {
    const types = ["MultimediaJob", "Case", "App", "Location"] as const;
    const res = await entities(member, types.map(representation));
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data._entities.map((entity: { __typename: string }) => entity.__typename)).toEqual(types);
    expect(res.body.data._entities[1]).toEqual({ __typename: "Case", id: ids.Case, caseId: expect.any(String), caseName: "Ann" });
    const nodes = await data(member, NODES, { ids: types.map((type) => ids[type]) });
    expect(res.body.data._entities).toEqual(nodes.nodes);
  });

  it("is null for another domain's id, an unknown id and a malformed id, as nodes is for the same ids, and never an error", async () => {
    const unknown = globalId("Case", "demo", "00000000-0000-4000-8000-000000000000");
    const hidden = [otherCase, unknown, "nope", "", "W10", globalId("Case", "nodomain", "x"), "💥"];
    const res = await entities(
      member,
      hidden.map((id) => ({ __typename: "Case", id })),
    );
    expect(res.body).toEqual({ data: { _entities: hidden.map(() => null) } });
    const nodes = await data(member, NODES, { ids: hidden });
    expect(nodes.nodes).toEqual(hidden.map(() => null));
  });

  it("is null for a representation whose id is another type's, whose type is no entity, or that has no id", async () => {
    const userId = (await data(member, "{ me { id } }")).me.id;
    const representations = [
      { __typename: "Case", id: ids.Location },
      { __typename: "Location", id: ids.Case },
      { __typename: "User", id: userId },
      { __typename: "Domain", id: ids.Case },
      { __typename: "Case" },
      { __typename: "Case", id: 7 },
      { id: ids.Case },
      "Case",
    ];
    const res = await entities(member, representations);
    expect(res.body).toEqual({ data: { _entities: representations.map(() => null) } });
  });

  it("gives a member of another domain nothing of this one (null for each), and that member's own entity", async () => {
    const res = await entities(outsider, [
      ...(["Case", "Location", "App", "MultimediaJob"] as const).map(representation),
      { __typename: "Case", id: otherCase },
    ]);
    expect(res.body).toEqual({
      data: { _entities: [null, null, null, null, { __typename: "Case", id: otherCase, caseId: expect.any(String), caseName: "Bea" }] },
    });
  });

  it("takes representations written in the document as it takes variables", async () => {
    const res = await post(
      member,
      `{ _entities(representations: [{ __typename: "Case", id: "${ids.Case}" }, { __typename: "Case", id: "nope" }]) { ... on Case { caseName } } }`,
    );
    expect(res.body).toEqual({ data: { _entities: [{ caseName: "Ann" }, null] } });
  });

  it("draws on the rate limit of the domains its representations name, as nodes does", () => {
    const member = (domain: string) => domain === "demo";
    const representations = [{ __typename: "Case", id: ids.Case }];
    expect(chargedDomains(parse(ENTITIES), undefined, { representations }, member)).toEqual(["demo"]);
    const inline = parse(`{ _entities(representations: [{ __typename: "Case", id: "${ids.Case}" }]) { __typename } }`);
    expect(chargedDomains(inline, undefined, {}, member)).toEqual(["demo"]);
    expect(chargedDomains(parse(NODES), undefined, { ids: [ids.Case] }, member)).toEqual(["demo"]);
  });
});

describe("federation: the limits of the plain schema", () => {
  it("more than 1000 representations: BAD_USER_INPUT, as more than 1000 ids to nodes", async () => {
    const many = Array.from({ length: 1001 }, () => representation("Case"));
    const res = await post(member, "query($r: [_Any!]!) { _entities(representations: $r) { __typename } }", { r: many });
    expect(res.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(["BAD_USER_INPUT"]);
    expect(res.body.errors[0].message).toBe("'representations' must hold at most 1000 ids.");
    const nodes = await post(member, "query($ids: [ID!]!) { nodes(ids: $ids) { __typename } }", { ids: many.map((r) => r.id) });
    expect(nodes.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(["BAD_USER_INPUT"]);
  });

  it("the cost estimate multiplies what each representation selects: 1000 cases with 1000 children each is QUERY_TOO_COMPLEX, as with nodes", async () => {
    const many = Array.from({ length: 1000 }, () => representation("Case"));
    const res = await post(member, "query($r: [_Any!]!) { _entities(representations: $r) { ... on Case { children(first: 1000) { caseId } } } }", {
      r: many,
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe("QUERY_TOO_COMPLEX");
    const nodes = await post(member, "query($ids: [ID!]!) { nodes(ids: $ids) { ... on Case { children(first: 1000) { caseId } } } }", {
      ids: many.map((r) => r.id),
    });
    expect([nodes.status, nodes.body.errors[0].extensions.code]).toEqual([400, "QUERY_TOO_COMPLEX"]);
  });

  it("a selection deeper than GRAPHQL_MAX_DEPTH is refused (GRAPHQL_VALIDATION_FAILED)", async () => {
    const deep = `${"children { ".repeat(13)}caseId${" }".repeat(13)}`;
    const res = await post(member, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Case { ${deep} } } }`, {
      r: [representation("Case")],
    });
    expect([res.status, res.body.errors[0].extensions.code]).toEqual([400, "GRAPHQL_VALIDATION_FAILED"]);
  });
});

describe("federation: the same schema, plus federation's own", () => {
  it("without the federation types, directives and root fields, the subgraph prints exactly as schema.graphql", async () => {
    const subgraph = await buildGatewaySchema({ federation: true });
    const committed = await readFile(path.resolve(import.meta.dirname, "../../schema.graphql"), "utf8");
    expect(`${printSchema(lexicographicSortSchema(withoutFederation(subgraph)))}\n`).toBe(committed);
  });

  it("§7.3: federation's root fields, their argument and its types are described too", async () => {
    const subgraph = await buildGatewaySchema({ federation: true });
    const query = subgraph.getQueryType()!.getFields();
    const described = [
      query._service!.description,
      query._entities!.description,
      query._entities!.args[0]!.description,
      ...["_Service", "_Any", "_Entity"].map((name) => subgraph.getType(name)?.description),
      (subgraph.getType("_Service") as GraphQLObjectType).getFields().sdl!.description,
    ];
    for (const description of described) expect(description).toMatch(/\w{3,}/);
  });

  it("every field resolves, subscribes and is priced as in the plain schema", async () => {
    const [subgraph, schema] = await Promise.all([buildGatewaySchema({ federation: true }), buildGatewaySchema()]);
    const shape = (type: GraphQLNamedType | undefined | null) =>
      isObjectType(type)
        ? Object.values(type.getFields()).map((f) => [f.name, typeof f.resolve, typeof f.subscribe, Object.keys(f.extensions ?? {}).sort()])
        : [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name === "Query") {
        const fields = shape(subgraph.getType("Query")).filter(([name]) => name !== "_service" && name !== "_entities");
        expect(fields, type.name).toEqual(shape(type));
      } else expect(shape(subgraph.getType(type.name)), type.name).toEqual(shape(type));
    }
    const documents = [
      `{ cases(domain: "demo", first: 50) { edges { node { id properties children(first: 20) { caseId properties } } } } }`,
      `{ locations(domain: "demo") { nodes { name children { name descendants { name } } } } }`,
      `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Case { forms { formId } } } }`,
      `{ multimediaJobs(domain: "demo", first: 10) { nodes { restStatus result { matchedFiles { path } } } } }`,
    ];
    for (const source of documents) {
      const document = parse(source);
      const operation = document.definitions[0] as OperationDefinitionNode;
      const variables = { ids: [ids.Case, ids.Case] };
      expect(queryCost(subgraph, document, operation, variables), source).toBe(queryCost(schema, document, operation, variables));
    }
  });

  it("queries run as on the plain schema: the same answers, enum defaults and enum values included", async () => {
    const queries = [
      `{ cases(domain: "demo") { totalCount edges { cursor node { id caseId caseName } } } }`,
      `{ locations(domain: "demo") { nodes { id name locationType { code } } } }`,
      `{ multimediaJobs(domain: "demo") { nodes { id processingId app { appId } } } }`,
      `query($ids: [ID!]!) { nodes(ids: $ids) { ${ENTITY_FIELDS} } }`,
      "{ me { username memberships { domain permissions } } }",
    ];
    for (const query of queries) {
      const variables = { ids: Object.values(ids) };
      const [federated, unfederated] = await Promise.all([post(member, query, variables), post(member, query, variables, plain)]);
      expect(federated.body.errors, query).toBeUndefined();
      expect(federated.body, query).toEqual(unfederated.body);
    }
  });
});

describe("federation: over WebSocket", () => {
  it("subscriptions run on the subgraph, and _entities answers there as over HTTP", async () => {
    const ws = await connectWs(app, member.authorization);
    try {
      const changes = ws.subscribe('subscription { caseChanged(domain: "demo") { caseType } }');
      await until(
        () => changes.ended || changes.events.length > 0,
        () => createCase(member, "demo", "Cy"),
      );
      expect(changes.errors).toEqual([]);
      expect(changes.events[0]).toEqual({ caseChanged: { caseType: "visit" } });
      const outcome = await ws.run(
        `{ _entities(representations: [{ __typename: "Case", id: "${ids.Case}" }, { __typename: "Case", id: "${otherCase}" }]) { ... on Case { caseName } } }`,
      );
      expect(outcome).toEqual({ data: { _entities: [{ caseName: "Ann" }, null] } });
    } finally {
      await ws.dispose();
    }
  });
});

describe("federation: FEDERATION unset", () => {
  it("_service and _entities do not exist: a query naming them is the usual validation error", async () => {
    for (const [query, field] of [
      ["{ _service { sdl } }", "_service"],
      ["{ _entities(representations: []) { __typename } }", "_entities"],
    ]) {
      const res = await post(member, query!, {}, plain);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        expect.objectContaining({ message: `Cannot query field "${field}" on type "Query".`, extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }),
      ]);
    }
    // as a router sends it: its variable's type is unknown too
    const routers = await post(member, ENTITIES, { representations: [representation("Case")] }, plain);
    expect(routers.status).toBe(400);
    expect(routers.body.errors.map((e: { message: string }) => e.message)).toEqual([
      'Unknown type "_Any".',
      'Cannot query field "_entities" on type "Query".',
    ]);
    const introspected = await post(member, '{ __type(name: "Query") { fields { name } } }', {}, plain);
    expect(introspected.body.data.__type.fields.map((f: { name: string }) => f.name)).not.toContain("_service");
  });
});

/** The subgraph without what federation added: its types, directives and the two root fields. */
function withoutFederation(subgraph: GraphQLSchema): GraphQLSchema {
  const added = new Set(["_Service", "_Any", "_Entity", "link__Import", "link__Purpose", "federation__FieldSet"]);
  const config = subgraph.toConfig();
  const queryConfig = subgraph.getQueryType()!.toConfig();
  const { _service, _entities, ...fields } = queryConfig.fields;
  const query = new GraphQLObjectType({ ...queryConfig, fields });
  return new GraphQLSchema({
    ...config,
    query,
    types: config.types.filter((type) => !added.has(type.name) && type.name !== "Query"),
    directives: config.directives.filter(
      (directive) => directive.name !== "link" && directive.name !== "key" && !directive.name.startsWith("federation__"),
    ),
  });
}
