import { JSONObjectScalar } from "../graphql/scalars.ts";
import { Field, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { NodeInterface } from "../graphql/node.ts";
import type { DOC_TYPES, MultimediaMap } from "./app.service.ts";

/** GraphQL shapes of applications (their multimedia fields: multimedia/multimedia.types.ts). */

/** The closed set of CONTRACT §4 "Application source" `doc_type`s, as a GraphQL enum. */
export enum AppDocType {
  APPLICATION = "Application",
  LINKED_APPLICATION = "LinkedApplication",
  REMOTE_APP = "RemoteApp",
}
// every REST doc_type has its enum value (a compile error when the two sets part)
const _sameSet: Record<(typeof DOC_TYPES)[number], AppDocType> = {
  Application: AppDocType.APPLICATION,
  LinkedApplication: AppDocType.LINKED_APPLICATION,
  RemoteApp: AppDocType.REMOTE_APP,
};
void _sameSet;

registerEnumType(AppDocType, {
  name: "AppDocType",
  description: "An application's kind: the source's `doc_type` (absent means Application).",
  valuesConfig: {
    APPLICATION: { description: "`Application`: an application built in this domain" },
    LINKED_APPLICATION: { description: "`LinkedApplication`: an application linked to one in another domain" },
    REMOTE_APP: { description: "`RemoteApp`: an application served from a remote location" },
  },
});

@ObjectType("AppVersion", { implements: NodeInterface, description: "One imported version of an application: its source as sent." })
export class AppVersionType {
  @Field(() => Int, { description: "the version number: 1 for the first import, then one more per update" })
  version!: number;

  @Field(() => String, { description: "the application's name as of this version" })
  name!: string;

  @Field(() => Date, { description: "when this version was imported" })
  createdAt!: Date;

  @Field(() => JSONObjectScalar, { description: "the source as imported" })
  source!: Record<string, unknown>;
}

@ObjectType("App", { implements: NodeInterface, description: "An application imported into a domain, with its versions and multimedia." })
export class AppType {
  @Field(() => ID, { description: "the application's id: the REST app_id" })
  appId!: string;

  @Field(() => String, { description: "the domain the application belongs to" })
  domain!: string;

  @Field(() => String, { description: "the application's name" })
  name!: string;

  @Field(() => AppDocType, { description: "the application's kind (its source's doc_type)" })
  docType!: AppDocType;

  @Field(() => Int, { description: "the current (latest) version number" })
  version!: number;

  @Field(() => Date, { description: "when the application was first imported" })
  createdAt!: Date;

  @Field(() => Date, { description: "when the application last changed (an import or a multimedia upload)" })
  updatedAt!: Date;
}

@ObjectType("ImportAppResult", { description: "What an import did: the app it created or updated, and its version." })
export class ImportAppResultType {
  @Field(() => ID, { description: "the application's id (the REST app_id)" })
  appId!: string;

  @Field(() => Boolean, { description: "true when the import created a new application, false when it added a version" })
  created!: boolean;

  @Field(() => Int, { description: "the version the import stored" })
  version!: number;

  @Field(() => [String], { description: "warnings, e.g. the number of referenced multimedia files not yet uploaded" })
  warnings!: string[];
}

/** What an App field resolves from: the type's fields, the app's multimedia map and its domain id. */
export type AppNode = Omit<AppType, "docType"> & { docType: string; map: MultimediaMap; domainId: string };

/** What an AppVersion field resolves from: the version and the app it belongs to. */
export type AppVersionNode = AppVersionType & { appId: string; domain: string; domainId: string };
