import { Field, ID, InputType, ObjectType } from "type-graphql";

@ObjectType("Domain", { description: "A project space; all data belongs to exactly one domain." })
export class DomainType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => Date)
  createdAt!: Date;
}

@ObjectType("Membership", { description: "A user's permissions in one domain." })
export class MembershipType {
  @Field(() => String)
  domain!: string;

  @Field(() => [String], { description: "access_api, view_data, edit_data, view_locations, edit_locations, edit_apps" })
  permissions!: string[];
}

@ObjectType("User")
export class UserType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  username!: string;

  @Field(() => Boolean)
  isSuperuser!: boolean;

  @Field(() => Boolean)
  isActive!: boolean;

  @Field(() => Date)
  createdAt!: Date;
}

@ObjectType("ApiKey", { description: "An API key; the key itself is shown only once, at creation." })
export class ApiKeyType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  username!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: "the first characters of the key, to tell keys apart" })
  prefix!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  revokedAt!: Date | null;
}

@ObjectType("NewApiKey")
export class NewApiKeyType {
  @Field(() => String, { description: "the key: store it now, it cannot be shown again" })
  key!: string;

  @Field(() => ApiKeyType)
  apiKey!: ApiKeyType;
}

@ObjectType("OAuthClient")
export class OAuthClientType {
  @Field(() => String)
  clientId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => [String])
  grants!: string[];

  @Field(() => Date)
  createdAt!: Date;
}

@ObjectType("NewOAuthClient")
export class NewOAuthClientType {
  @Field(() => String)
  clientId!: string;

  @Field(() => String, { description: "the client secret: store it now, it cannot be shown again" })
  clientSecret!: string;

  @Field(() => OAuthClientType)
  client!: OAuthClientType;
}

@InputType("CreateUserInput")
export class CreateUserInput {
  @Field(() => String)
  username!: string;

  @Field(() => String)
  password!: string;

  @Field(() => String, { nullable: true, description: "the domain to grant `permissions` in" })
  domain?: string | null;

  @Field(() => [String], { nullable: true, description: "access_api, view_data, edit_data, view_locations, edit_locations, edit_apps" })
  permissions?: string[] | null;

  @Field(() => Boolean, { nullable: true })
  superuser?: boolean | null;
}

@InputType("CreateOAuthClientInput")
export class CreateOAuthClientInput {
  @Field(() => String)
  name!: string;

  @Field(() => [String], { nullable: true, description: "password, refresh_token, client_credentials" })
  grants?: string[] | null;

  @Field(() => String, { nullable: true, description: "the user a client_credentials token acts as" })
  username?: string | null;
}
