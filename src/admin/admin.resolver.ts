import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.ts";
import {
  ApiKeyType,
  CreateOAuthClientInput,
  CreateUserInput,
  DomainType,
  MembershipType,
  NewApiKeyType,
  NewOAuthClientType,
  UserType,
} from "./admin.types.ts";

type ApiKeyRow = { id: string; name: string; prefix: string; createdAt: Date; revokedAt: Date | null; user: { username: string } };

const apiKey = (row: ApiKeyRow): ApiKeyType => ({ ...row, username: row.user.username });

@Resolver(() => UserType)
export class AdminResolver {
  @Query(() => UserType, { description: "the authenticated caller" })
  async me(@Ctx() { principal, services }: GraphQLContext): Promise<UserType> {
    return services.admin.me(principal);
  }

  @FieldResolver(() => [MembershipType])
  async memberships(@Root() user: UserType, @Ctx() { principal, services }: GraphQLContext): Promise<MembershipType[]> {
    // A user sees their own memberships; a superuser sees everyone's.
    if (!principal.isSuperuser && principal.userId !== user.id) return [];
    const rows = await services.admin.memberships(user.id);
    return rows.map((m) => ({ domain: m.domain.name, permissions: m.permissions }));
  }

  @Query(() => [DomainType], { description: "superuser only" })
  domains(@Ctx() { principal, services }: GraphQLContext): Promise<DomainType[]> {
    return services.admin.listDomains(principal);
  }

  @Query(() => [UserType], { description: "superuser only; members of `domain` when given" })
  users(@Arg("domain", () => String, { nullable: true }) domain: string | null, @Ctx() { principal, services }: GraphQLContext): Promise<UserType[]> {
    return services.admin.listUsers(principal, domain);
  }

  @Query(() => [ApiKeyType], { description: "superuser only" })
  async apiKeys(@Arg("username", () => String) username: string, @Ctx() { principal, services }: GraphQLContext): Promise<ApiKeyType[]> {
    return (await services.admin.listApiKeys(principal, username)).map(apiKey);
  }

  @Mutation(() => DomainType)
  createDomain(@Arg("name", () => String) name: string, @Ctx() { principal, services }: GraphQLContext): Promise<DomainType> {
    return services.admin.createDomain(principal, name);
  }

  @Mutation(() => UserType, {
    description: "creates the user, or sets the password of an existing one; grants `permissions` in `domain`",
  })
  createUser(@Arg("input", () => CreateUserInput) input: CreateUserInput, @Ctx() { principal, services }: GraphQLContext): Promise<UserType> {
    return services.admin.createUser(principal, input);
  }

  @Mutation(() => MembershipType, { description: "replaces the user's permissions in the domain" })
  async setPermissions(
    @Arg("username", () => String) username: string,
    @Arg("domain", () => String) domain: string,
    @Arg("permissions", () => [String]) permissions: string[],
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<MembershipType> {
    const membership = await services.admin.setPermissions(principal, username, domain, permissions);
    return { domain: membership.domain.name, permissions: membership.permissions };
  }

  @Mutation(() => Boolean, { description: "removes the user from the domain" })
  removeMembership(
    @Arg("username", () => String) username: string,
    @Arg("domain", () => String) domain: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<boolean> {
    return services.admin.removeMembership(principal, username, domain);
  }

  @Mutation(() => UserType, { description: "an inactive user cannot authenticate by any scheme" })
  setUserActive(
    @Arg("username", () => String) username: string,
    @Arg("active", () => Boolean) active: boolean,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<UserType> {
    return services.admin.setUserActive(principal, username, active);
  }

  @Mutation(() => NewApiKeyType)
  async createApiKey(
    @Arg("username", () => String) username: string,
    @Arg("name", () => String, { nullable: true }) name: string | null,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<NewApiKeyType> {
    const created = await services.admin.createApiKey(principal, username, name ?? "");
    return { key: created.key, apiKey: apiKey(created.apiKey) };
  }

  @Mutation(() => ApiKeyType, { description: "the key stops working at once" })
  async revokeApiKey(@Arg("id", () => ID) id: string, @Ctx() { principal, services }: GraphQLContext): Promise<ApiKeyType> {
    return apiKey(await services.admin.revokeApiKey(principal, id));
  }

  @Mutation(() => NewOAuthClientType)
  async createOAuthClient(
    @Arg("input", () => CreateOAuthClientInput) input: CreateOAuthClientInput,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<NewOAuthClientType> {
    const { client, clientSecret } = await services.admin.createOAuthClient(principal, input);
    return { clientId: client.clientId, clientSecret, client };
  }

  @Mutation(() => Int, { description: "revokes every OAuth token of the user; returns how many" })
  revokeOAuthTokens(@Arg("username", () => String) username: string, @Ctx() { principal, services }: GraphQLContext): Promise<number> {
    return services.admin.revokeOAuthTokens(principal, username);
  }
}
