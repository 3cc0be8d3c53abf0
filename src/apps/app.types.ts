import { JSONObjectScalar } from "../graphql/scalars.ts";
import { Field, ID, Int, ObjectType } from "type-graphql";
import type { MultimediaMap } from "./app.service.ts";

/** GraphQL shapes of applications (their multimedia fields: multimedia/multimedia.types.ts). */

@ObjectType("AppVersion")
export class AppVersionType {
  @Field(() => Int)
  version!: number;

  @Field(() => String)
  name!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => JSONObjectScalar, { description: "the source as imported" })
  source!: Record<string, unknown>;
}

@ObjectType("App")
export class AppType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  domain!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  docType!: string;

  @Field(() => Int)
  version!: number;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;
}

@ObjectType("ImportAppResult")
export class ImportAppResultType {
  @Field(() => ID)
  appId!: string;

  @Field(() => Boolean)
  created!: boolean;

  @Field(() => Int)
  version!: number;

  @Field(() => [String])
  warnings!: string[];
}

/** What an App field resolves from: the type's fields, the app's multimedia map and its domain id. */
export type AppNode = AppType & { map: MultimediaMap; domainId: string };
