import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.ts";
import { globalId, parseGlobalId, type NodeFetcher, type NodeTypeName } from "../graphql/node.ts";
import {
  ApiKeyType,
  CreateOAuthClientInput,
  CreateUserInput,
  DomainType,
  MembershipType,
  NewApiKeyType,
  NewOAuthClientType,
  PermissionEnum,
  UserType,
} from "./admin.types.ts";

type ApiKeyRow = { id: string; name: string; prefix: string; createdAt: Date; revokedAt: Date | null; user: { username: string } };

/** A user or a domain as the service reads it: its row id is the key of its global id. */
type UserRow = UserType & { id: string };
type DomainRow = DomainType & { id: string };

/** An API key as its resolvers read it: the row's id is the key of its global id, and its `keyId`. */
type ApiKeyNode = ApiKeyType & { id: string };

const apiKey = (row: ApiKeyRow): ApiKeyNode => ({ ...row, keyId: row.id, username: row.user.username });

/** The key a `revokeApiKey` id names: its global id (`ApiKey.id`), or its own id (`ApiKey.keyId`, which `id` was before). */
function apiKeyIdOf(id: string): string {
  const ref = parseGlobalId(id);
  return ref?.type === "ApiKey" && ref.domain === "" ? ref.key : id;
}

const ONE_DOMAIN = "The domain's name.";

@Resolver(() => UserType)
export class AdminResolver {
  @Query(() => UserType, { description: "The authenticated caller." })
  async me(@Ctx() { principal, services }: GraphQLContext): Promise<UserRow> {
    return services.admin.me(principal);
  }

  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() user: UserRow): string {
    return globalId("User", "", user.id);
  }

  @FieldResolver(() => [MembershipType], {
    description: "The domains the user is a member of, with the permissions in each; shown to the user and to superusers, empty for anyone else.",
  })
  async memberships(@Root() user: UserRow, @Ctx() { principal, services }: GraphQLContext): Promise<MembershipType[]> {
    // A user sees their own memberships; a superuser sees everyone's.
    if (!principal.isSuperuser && principal.userId !== user.id) return [];
    const rows = await services.admin.memberships(user.id);
    return rows.map((m) => ({ domain: m.domain.name, permissions: m.permissions }));
  }

  @Query(() => [DomainType], { description: "Every domain, by name. Superuser only." })
  domains(@Ctx() { principal, services }: GraphQLContext): Promise<DomainRow[]> {
    return services.admin.listDomains(principal);
  }

  @Query(() => [UserType], { description: "Every user, or the members of `domain`, by username. Superuser only." })
  users(
    @Arg("domain", () => String, { nullable: true, description: "List only this domain's members; every user when left out." }) domain: string | null,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<UserRow[]> {
    return services.admin.listUsers(principal, domain);
  }

  @Query(() => [ApiKeyType], { description: "A user's API keys, revoked ones included, oldest first. Superuser only." })
  async apiKeys(
    @Arg("username", () => String, { description: "The user whose keys to list." }) username: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<ApiKeyNode[]> {
    return (await services.admin.listApiKeys(principal, username)).map(apiKey);
  }

  @Mutation(() => DomainType, { description: "Creates a domain. Superuser only." })
  createDomain(
    @Arg("name", () => String, { description: "1 to 63 lowercase letters, digits and `-`, not starting with `-`; unique." }) name: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<DomainRow> {
    return services.admin.createDomain(principal, name);
  }

  @Mutation(() => UserType, {
    description: "Creates the user, or sets the password of an existing one; grants exactly `permissions` in `domain`. Superuser only.",
  })
  createUser(
    @Arg("input", () => CreateUserInput, { description: "The user, password and permissions." }) input: CreateUserInput,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<UserRow> {
    return services.admin.createUser(principal, input);
  }

  @Mutation(() => MembershipType, { description: "Replaces the user's permissions in the domain (making them a member). Superuser only." })
  async setPermissions(
    @Arg("username", () => String, { description: "The user." }) username: string,
    @Arg("domain", () => String, { description: ONE_DOMAIN }) domain: string,
    @Arg("permissions", () => [PermissionEnum], {
      description: "Everything the user may do in the domain; an empty list leaves a member who may do nothing.",
    })
    permissions: string[],
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<MembershipType> {
    const membership = await services.admin.setPermissions(principal, username, domain, permissions);
    return { domain: membership.domain.name, permissions: membership.permissions };
  }

  @Mutation(() => Boolean, { description: "Removes the user from the domain; false when they were not a member. Superuser only." })
  removeMembership(
    @Arg("username", () => String, { description: "The user." }) username: string,
    @Arg("domain", () => String, { description: ONE_DOMAIN }) domain: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<boolean> {
    return services.admin.removeMembership(principal, username, domain);
  }

  @Mutation(() => UserType, { description: "Deactivates or reactivates a user; an inactive user cannot authenticate by any scheme. Superuser only." })
  setUserActive(
    @Arg("username", () => String, { description: "The user." }) username: string,
    @Arg("active", () => Boolean, { description: "false to deactivate, true to reactivate." }) active: boolean,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<UserRow> {
    return services.admin.setUserActive(principal, username, active);
  }

  @Mutation(() => NewApiKeyType, { description: "Creates an API key for the user; the key is in the answer and nowhere else. Superuser only." })
  async createApiKey(
    @Arg("username", () => String, { description: "The user the key authenticates as." }) username: string,
    @Arg("name", () => String, { nullable: true, description: "A label to tell the user's keys apart." }) name: string | null,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<NewApiKeyType> {
    const created = await services.admin.createApiKey(principal, username, name ?? "");
    return { key: created.key, apiKey: apiKey(created.apiKey) };
  }

  @Mutation(() => ApiKeyType, { description: "Revokes an API key: it stops working at once. Superuser only." })
  async revokeApiKey(
    @Arg("id", () => ID, { description: "The key's `id` (as `apiKeys` lists it), or its `keyId`." }) id: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<ApiKeyNode> {
    return apiKey(await services.admin.revokeApiKey(principal, apiKeyIdOf(id)));
  }

  @Mutation(() => NewOAuthClientType, { description: "Registers an OAuth 2.0 client; its secret is in the answer and nowhere else. Superuser only." })
  async createOAuthClient(
    @Arg("input", () => CreateOAuthClientInput, { description: "The client to register." }) input: CreateOAuthClientInput,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<NewOAuthClientType> {
    const { client, clientSecret } = await services.admin.createOAuthClient(principal, input);
    return { clientId: client.clientId, clientSecret, client };
  }

  @Mutation(() => Int, { description: "Revokes every OAuth token (access and refresh) of the user; returns how many. Superuser only." })
  revokeOAuthTokens(
    @Arg("username", () => String, { description: "The user." }) username: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<number> {
    return services.admin.revokeOAuthTokens(principal, username);
  }
}

@Resolver(() => DomainType)
export class DomainResolver {
  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() domain: DomainRow): string {
    return globalId("Domain", "", domain.id);
  }
}

@Resolver(() => ApiKeyType)
export class ApiKeyResolver {
  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it, and so does `revokeApiKey`." })
  id(@Root() key: ApiKeyNode): string {
    return globalId("ApiKey", "", key.id);
  }
}

/**
 * Users, domains and API keys for `Query.node`: a user to a superuser or to themselves, a domain to
 * a superuser or a member, an API key to a superuser (as `apiKeys` lists them).
 */
export const ADMIN_NODES: Partial<Record<NodeTypeName, NodeFetcher<GraphQLContext>>> = {
  User: (ctx, { domain, key }) => (domain === "" ? ctx.services.admin.visibleUser(ctx.principal, key) : Promise.resolve(null)),
  Domain: (ctx, { domain, key }) => (domain === "" ? ctx.services.admin.visibleDomain(ctx.principal, key) : Promise.resolve(null)),
  ApiKey: async (ctx, { domain, key }) => {
    const row = domain === "" ? await ctx.services.admin.visibleApiKey(ctx.principal, key) : null;
    return row && apiKey(row);
  },
};
