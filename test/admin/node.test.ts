import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphql } from "../generated/gql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { gql } from "../helpers/graphql.ts";
import { globalId } from "../../src/graphql/node.ts";

/** CONTRACT §7.3: User and Domain are Nodes; a user is seen by a superuser or by themselves, a domain by a superuser or a member. */

const Me = graphql(`
  query AdminNodeMe {
    me { id username }
  }
`);
const Domains = graphql(`
  query AdminNodeDomains {
    domains { id name }
  }
`);
const NodeById = graphql(`
  query AdminNodeById($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on User { username memberships { domain permissions } }
      ... on Domain { name }
    }
  }
`);

let app: TestApp;
let admin: TestUser;
let member: TestUser;
let stranger: TestUser;
let memberId: string;
let demoId: string;

beforeAll(async () => {
  app = await build();
  await createDomain(app, "demo");
  await createDomain(app, "other");
  admin = await createUser(app, { superuser: true });
  member = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
  stranger = await createUser(app, { domain: "other", permissions: ["access_api", "view_data"] });
  memberId = (await gql(app, member.authorization, Me)).body.data!.me.id;
  demoId = (await gql(app, admin.authorization, Domains)).body.data!.domains.find((d) => d.name === "demo")!.id;
});
afterAll(() => app.close());

const node = async (user: TestUser, id: string) => (await gql(app, user.authorization, NodeById, { id })).body;

describe("CONTRACT §7.3 User and Domain nodes", () => {
  it("a user's id is an opaque global id; node(id) gives the user to themselves and to a superuser, permissions as the enum", async () => {
    expect(memberId).not.toContain(member.username);
    const self = {
      __typename: "User",
      id: memberId,
      username: member.username,
      memberships: [{ domain: "demo", permissions: ["ACCESS_API", "VIEW_DATA"] }],
    };
    expect(await node(member, memberId)).toEqual({ data: { node: self } });
    expect(await node(admin, memberId)).toEqual({ data: { node: self } });
  });

  it("a domain's id is an opaque global id; node(id) gives the domain to a member and to a superuser", async () => {
    const demo = { data: { node: { __typename: "Domain", id: demoId, name: "demo" } } };
    expect(await node(member, demoId)).toEqual(demo);
    expect(await node(admin, demoId)).toEqual(demo);
  });

  it("node is null, never an error, for another user, a domain the caller is not in, and ids that name nothing", async () => {
    expect(await node(stranger, memberId)).toEqual({ data: { node: null } });
    expect(await node(stranger, demoId)).toEqual({ data: { node: null } });
    for (const id of [
      globalId("User", "", "00000000-0000-4000-8000-000000000000"),
      globalId("User", "", member.username),
      globalId("Domain", "", "demo"),
      globalId("User", "demo", JSON.parse(Buffer.from(memberId, "base64url").toString())[2]),
    ]) {
      expect([id, await node(admin, id)]).toEqual([id, { data: { node: null } }]);
    }
  });
});
