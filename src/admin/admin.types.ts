import { Field, ID, InputType, ObjectType, registerEnumType } from "type-graphql";
import { NodeInterface } from "../graphql/node.ts";

/** GraphQL shapes of administration (CONTRACT §6); the permission and grant names are the stored ones. */

/** The permissions of CONTRACT §1: GraphQL names in upper case, values the names the services store. */
export enum PermissionEnum {
  ACCESS_API = "access_api",
  VIEW_DATA = "view_data",
  EDIT_DATA = "edit_data",
  VIEW_LOCATIONS = "view_locations",
  EDIT_LOCATIONS = "edit_locations",
  EDIT_APPS = "edit_apps",
}

registerEnumType(PermissionEnum, {
  name: "Permission",
  description: "What a user may do in a domain (a superuser may do everything everywhere).",
  valuesConfig: {
    ACCESS_API: { description: "Use the API at all: needed, with the ones below, for every REST `/api/` path and GraphQL case and location field." },
    VIEW_DATA: { description: "Read cases and forms." },
    EDIT_DATA: { description: "Read and write cases." },
    VIEW_LOCATIONS: { description: "Read locations and location types." },
    EDIT_LOCATIONS: { description: "Read and write locations." },
    EDIT_APPS: { description: "Import apps and upload their multimedia (needs no `ACCESS_API`)." },
  },
});

/** The OAuth 2.0 grant types a client may use at `POST /oauth/token`; values as the token endpoint names them. */
enum OAuthGrantEnum {
  PASSWORD = "password",
  REFRESH_TOKEN = "refresh_token",
  CLIENT_CREDENTIALS = "client_credentials",
}

registerEnumType(OAuthGrantEnum, {
  name: "OAuthGrant",
  description: "An OAuth 2.0 grant type a client may use at `POST /oauth/token` (its `grant_type`).",
  valuesConfig: {
    PASSWORD: { description: "`grant_type=password`: a user's username and password for a token." },
    REFRESH_TOKEN: { description: "`grant_type=refresh_token`: a refresh token for a new access token." },
    CLIENT_CREDENTIALS: { description: "`grant_type=client_credentials`: the client's own secret for a token acting as the client's user." },
  },
});

@ObjectType("Domain", { implements: NodeInterface, description: "A project space; all data belongs to exactly one domain." })
export class DomainType {
  @Field(() => String, { description: "The domain's name: the `{domain}` of REST paths and the `domain` argument of GraphQL fields." })
  name!: string;

  @Field(() => Date, { description: "When the domain was created (ISO 8601, UTC)." })
  createdAt!: Date;
}

@ObjectType("Membership", { description: "A user's permissions in one domain." })
export class MembershipType {
  @Field(() => String, { description: "The domain's name." })
  domain!: string;

  @Field(() => [PermissionEnum], { description: "What the user may do in the domain." })
  permissions!: string[];
}

@ObjectType("User", { implements: NodeInterface, description: "Someone who calls the API, with a password, API keys and OAuth tokens." })
export class UserType {
  @Field(() => String, {
    description: "The login name (1 to 150 letters, digits and `. @ + - _`): what credentials and admin fields name the user by.",
  })
  username!: string;

  @Field(() => Boolean, { description: "Whether the user may do everything in every domain, administration included." })
  isSuperuser!: boolean;

  @Field(() => Boolean, { description: "Whether the user may authenticate at all: an inactive user is refused by every scheme." })
  isActive!: boolean;

  @Field(() => Date, { description: "When the user was created (ISO 8601, UTC)." })
  createdAt!: Date;
}

@ObjectType("ApiKey", {
  implements: NodeInterface,
  description: "An API key of a user (`Authorization: ApiKey {username}:{key}`); the key itself is shown only once, at creation.",
})
export class ApiKeyType {
  @Field(() => ID, { description: "The key's own id (a UUID, not the key); `revokeApiKey` takes it as well as the global `id`." })
  keyId!: string;

  @Field(() => String, { description: "The username of the key's user." })
  username!: string;

  @Field(() => String, { description: "A label given at creation, to tell keys apart; may be empty." })
  name!: string;

  @Field(() => String, { description: "The first 6 characters of the key, to tell keys apart." })
  prefix!: string;

  @Field(() => Date, { description: "When the key was created (ISO 8601, UTC)." })
  createdAt!: Date;

  @Field(() => Date, { nullable: true, description: "When the key was revoked (it no longer works); null while it works." })
  revokedAt!: Date | null;
}

@ObjectType("NewApiKey", { description: "A key just created: the only time the key itself is shown." })
export class NewApiKeyType {
  @Field(() => String, { description: "The key: store it now, it cannot be shown again. Use it as `Authorization: ApiKey {username}:{key}`." })
  key!: string;

  @Field(() => ApiKeyType, { description: "The key's record, as `apiKeys` lists it." })
  apiKey!: ApiKeyType;
}

@ObjectType("OAuthClient", { description: "An application registered to obtain OAuth 2.0 tokens at `POST /oauth/token`." })
export class OAuthClientType {
  @Field(() => String, { description: "The client's id: the `client_id` at the token endpoint." })
  clientId!: string;

  @Field(() => String, { description: "A label given at registration." })
  name!: string;

  @Field(() => [OAuthGrantEnum], { description: "The grant types the client may use." })
  grants!: string[];

  @Field(() => Date, { description: "When the client was registered (ISO 8601, UTC)." })
  createdAt!: Date;
}

@ObjectType("NewOAuthClient", { description: "A client just registered: the only time its secret is shown." })
export class NewOAuthClientType {
  @Field(() => String, { description: "The client's id: the `client_id` at the token endpoint." })
  clientId!: string;

  @Field(() => String, { description: "The client secret (`client_secret`): store it now, it cannot be shown again." })
  clientSecret!: string;

  @Field(() => OAuthClientType, { description: "The client's record." })
  client!: OAuthClientType;
}

@InputType("CreateUserInput", { description: "A user to create, or an existing user's new password, with permissions in one domain." })
export class CreateUserInput {
  @Field(() => String, { description: "The login name: 1 to 150 letters, digits and `. @ + - _`." })
  username!: string;

  @Field(() => String, { description: "The password (Basic, Digest and the OAuth password grant); at least one character." })
  password!: string;

  @Field(() => String, { nullable: true, description: "The domain to grant `permissions` in; left out, no membership changes." })
  domain?: string | null;

  @Field(() => [PermissionEnum], { nullable: true, description: "Exactly what the user may do in `domain` (replaces what was granted there)." })
  permissions?: string[] | null;

  @Field(() => Boolean, {
    nullable: true,
    description: "Make the user a superuser (true) or not (false); left out, it stays as it is (false for a new user).",
  })
  superuser?: boolean | null;
}

@InputType("CreateOAuthClientInput", { description: "An OAuth 2.0 client to register." })
export class CreateOAuthClientInput {
  @Field(() => String, { description: "A label for the client." })
  name!: string;

  @Field(() => [OAuthGrantEnum], {
    nullable: true,
    description: "The grant types it may use; `PASSWORD` and `REFRESH_TOKEN` when left out or empty.",
  })
  grants?: string[] | null;

  @Field(() => String, { nullable: true, description: "The user a `CLIENT_CREDENTIALS` token acts as (required with that grant)." })
  username?: string | null;
}
