import { JSONObjectScalar } from "../graphql/scalars.ts";
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { DateRangeInput } from "../graphql/date-range.types.ts";
import { NodeInterface } from "../graphql/node.ts";

/**
 * GraphQL shapes of the Case API. The resolver maps the inputs straight into the typed commands
 * (case.query.ts, case.actions.ts); properties and indices keep the contract's JSON shape.
 */

@ObjectType("CaseIndex", { description: "A named link from a case to another case (parent, host, …)." })
export class CaseIndexType {
  @Field(() => String)
  name!: string;

  @Field(() => String)
  caseId!: string;

  @Field(() => String)
  caseType!: string;

  @Field(() => String, { description: "child or extension" })
  relationship!: string;

  /** the domain the index lives in, for resolving the referenced case */
  domain!: string;
}

@ObjectType("Case", { implements: NodeInterface, description: "A case: a record that field workers open, update, close and link to other cases." })
export class CaseType {
  @Field(() => ID, { description: "case_id" })
  caseId!: string;

  @Field(() => String)
  domain!: string;

  @Field(() => String)
  caseType!: string;

  @Field(() => String)
  caseName!: string;

  @Field(() => String, { nullable: true })
  externalId!: string | null;

  @Field(() => String)
  ownerId!: string;

  @Field(() => Date)
  dateOpened!: Date;

  @Field(() => Date)
  lastModified!: Date;

  @Field(() => Date)
  serverLastModified!: Date;

  @Field(() => Date)
  indexedOn!: Date;

  @Field(() => Boolean)
  closed!: boolean;

  @Field(() => Date, { nullable: true })
  dateClosed!: Date | null;

  @Field(() => JSONObjectScalar, { description: "case properties: name to string value" })
  properties!: Record<string, string>;
}

@ObjectType("Actor", { description: "The user a form was submitted as." })
export class ActorType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  username!: string;
}

@ObjectType("Form", { implements: NodeInterface, description: "The form generated and submitted for a case write." })
export class FormType {
  @Field(() => String)
  domain!: string;

  @Field(() => String)
  xmlns!: string;

  @Field(() => String)
  userId!: string;

  @Field(() => String)
  username!: string;

  @Field(() => String, { description: "the User-Agent of the request" })
  deviceId!: string;

  @Field(() => Date)
  receivedOn!: Date;

  @Field(() => String, { description: "the case blocks the form applied" })
  xml!: string;

  @Field(() => String, { nullable: true, description: "why the form was refused; no case changed" })
  problem!: string | null;

  @Field(() => [String])
  caseIds!: string[];
}

// the one PageInfo of every connection (bridge until the cases connection moves onto src/graphql/connection.ts)
import { PageInfoType } from "../graphql/connection.ts";

@ObjectType("CaseEdge")
export class CaseEdgeType {
  @Field(() => String, { description: "a cursor after this page (the same for every edge of a page)" })
  cursor!: string;

  @Field(() => CaseType)
  node!: CaseType;
}

@ObjectType("CaseConnection")
export class CaseConnectionType {
  @Field(() => Int, { description: "cases matching the filter from this page on" })
  totalCount!: number;

  @Field(() => [CaseEdgeType])
  edges!: CaseEdgeType[];

  @Field(() => [CaseType])
  nodes!: CaseType[];

  @Field(() => PageInfoType)
  pageInfo!: PageInfoType;
}

@ObjectType("CaseFetchEntry", { description: "One requested id of a bulk fetch, found or not." })
export class CaseFetchEntryType {
  @Field(() => String, { description: "case_id or external_id" })
  by!: string;

  @Field(() => String)
  id!: string;

  @Field(() => CaseType, { nullable: true })
  case!: CaseType | null;
}

@ObjectType("CaseFetchResult")
export class CaseFetchResultType {
  @Field(() => Int)
  matchingRecords!: number;

  @Field(() => Int)
  missingRecords!: number;

  @Field(() => [CaseFetchEntryType])
  entries!: CaseFetchEntryType[];
}

@ObjectType("CaseWriteResult")
export class CaseWriteResultType {
  @Field(() => ID)
  xformId!: string;

  @Field(() => CaseType)
  case!: CaseType;
}

@ObjectType("CaseBulkWriteResult")
export class CaseBulkWriteResultType {
  @Field(() => ID)
  xformId!: string;

  @Field(() => [CaseType])
  cases!: CaseType[];
}

@ObjectType("CaseChange", { description: "A committed write to a case." })
export class CaseChangeType {
  @Field(() => String)
  domain!: string;

  @Field(() => ID)
  caseId!: string;

  @Field(() => String)
  caseType!: string;

  @Field(() => ID)
  formId!: string;
}

@InputType("PropertyFilter")
export class PropertyFilterInput {
  @Field(() => String)
  name!: string;

  @Field(() => [String], { description: "any of these values; an empty string matches unset too" })
  values!: string[];
}

@InputType("IndexFilter")
export class IndexFilterInput {
  @Field(() => String, { description: "index name, e.g. parent or host" })
  name!: string;

  @Field(() => [String])
  caseIds!: string[];
}

@InputType("CaseFilter", { description: "the REST list filters: lists OR their values, fields AND" })
export class CaseFilterInput {
  @Field(() => [String], { nullable: true })
  externalId?: string[] | null;

  @Field(() => [String], { nullable: true })
  caseType?: string[] | null;

  @Field(() => [String], { nullable: true })
  ownerId?: string[] | null;

  @Field(() => [String], { nullable: true })
  caseName?: string[] | null;

  @Field(() => Boolean, { nullable: true })
  closed?: boolean | null;

  @Field(() => [PropertyFilterInput], { nullable: true })
  properties?: PropertyFilterInput[] | null;

  @Field(() => [IndexFilterInput], { nullable: true })
  indices?: IndexFilterInput[] | null;

  @Field(() => DateRangeInput, { nullable: true })
  lastModified?: DateRangeInput | null;

  @Field(() => DateRangeInput, { nullable: true })
  serverLastModified?: DateRangeInput | null;

  @Field(() => DateRangeInput, { nullable: true })
  indexedOn?: DateRangeInput | null;

  @Field(() => DateRangeInput, { nullable: true })
  dateOpened?: DateRangeInput | null;

  @Field(() => DateRangeInput, { nullable: true })
  dateClosed?: DateRangeInput | null;
}

@InputType("CaseInput", { description: "a case write payload; properties and indices as in REST" })
export class CaseInput {
  @Field(() => String, { nullable: true })
  caseType?: string | null;

  @Field(() => String, { nullable: true })
  caseName?: string | null;

  @Field(() => String, { nullable: true })
  ownerId?: string | null;

  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => JSONObjectScalar, { nullable: true, description: "property name to string value" })
  properties?: Record<string, unknown> | null;

  @Field(() => JSONObjectScalar, {
    nullable: true,
    description: "index name to {case_id | external_id | temporary_id, case_type, relationship}",
  })
  indices?: Record<string, unknown> | null;

  @Field(() => Boolean, { nullable: true })
  close?: boolean | null;
}

@InputType("CaseBulkItem", { description: "one item of a bulk write, as in REST" })
export class CaseBulkItemInput extends CaseInput {
  @Field(() => Boolean, { nullable: true, description: "true: create; false: update; null: upsert by externalId" })
  create?: boolean | null;

  @Field(() => String, { nullable: true })
  caseId?: string | null;

  @Field(() => String, { nullable: true })
  temporaryId?: string | null;
}
