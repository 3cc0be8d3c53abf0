import { JSONObjectScalar } from "../graphql/scalars.ts";
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { connectionTypes } from "../graphql/connection.ts";
import { DateRangeInput } from "../graphql/date-range.types.ts";
import { NodeInterface } from "../graphql/node.ts";

/**
 * GraphQL shapes of the Case API. The resolver maps the inputs straight into the typed commands
 * (case.query.ts, case.actions.ts); properties and indices of writes keep the contract's JSON shape.
 * Descriptions are written for the front-end developer: what a field is, its format, its REST name.
 */

/** What a case index says about the case holding it (REST `indices.{name}.relationship`). */
export enum CaseIndexRelationship {
  CHILD = "child",
  EXTENSION = "extension",
}

registerEnumType(CaseIndexRelationship, {
  name: "CaseIndexRelationship",
  description: "How a case relates to the case its index points at (REST `relationship`: `child` or `extension`).",
  valuesConfig: {
    CHILD: { description: "REST `child`: the case is a child of the indexed case (e.g. a visit of a patient)." },
    EXTENSION: { description: "REST `extension`: the case extends the indexed case and lives and closes with it." },
  },
});

/**
 * The orders of `Query.cases`; REST lists by the first only. The values are what a cursor's list
 * fingerprint holds: the first two keep the values they had before the other orders existed, so
 * that cursors given out then still page.
 */
export enum CaseOrderBy {
  INDEXED_ON_ASC = "asc",
  INDEXED_ON_DESC = "desc",
  LAST_MODIFIED_ASC = "last_modified asc",
  LAST_MODIFIED_DESC = "last_modified desc",
  SERVER_LAST_MODIFIED_ASC = "server_last_modified asc",
  SERVER_LAST_MODIFIED_DESC = "server_last_modified desc",
  DATE_OPENED_ASC = "date_opened asc",
  DATE_OPENED_DESC = "date_opened desc",
  DATE_CLOSED_ASC = "date_closed asc",
  DATE_CLOSED_DESC = "date_closed desc",
  CASE_NAME_ASC = "case_name asc",
  CASE_NAME_DESC = "case_name desc",
}

/** What a client sees of a case written while it pages by a time that every write moves. */
const MOVES_ON_WRITE =
  "Every write sets it to the write's time, so a case written while a client pages through the list moves to the newest end. Paging oldest first, a case already seen appears again on a later page (page on to the end and keep the last copy of each `id`). Paging newest first, it moves behind the client: it is not seen on this pull, even when the client had not reached it yet.";

registerEnumType(CaseOrderBy, {
  name: "CaseOrderBy",
  description:
    "The order of a case list. Ties are broken by caseId in the same direction, so the order is total and every edge's cursor is a stable position: paging after it continues right after that case's value and id, whatever was written since. A case whose value changes while a client pages moves to its new place in the order: ahead of the client's position it is seen there (again, when it was already seen), behind it it is not seen again on this pull. `totalCount` counts the list as it is at each page.",
  valuesConfig: {
    INDEXED_ON_ASC: { description: `Oldest indexedOn first, then caseId ascending: the REST list's order (the default). ${MOVES_ON_WRITE}` },
    INDEXED_ON_DESC: { description: `Newest indexedOn first, then caseId descending: recently changed cases first. ${MOVES_ON_WRITE}` },
    LAST_MODIFIED_ASC: { description: `Oldest lastModified (the time of the case's last write) first, then caseId ascending. ${MOVES_ON_WRITE}` },
    LAST_MODIFIED_DESC: { description: `Newest lastModified first, then caseId descending: recently modified cases first. ${MOVES_ON_WRITE}` },
    SERVER_LAST_MODIFIED_ASC: {
      description: `Oldest serverLastModified (the server's time of the case's last write) first, then caseId ascending. ${MOVES_ON_WRITE}`,
    },
    SERVER_LAST_MODIFIED_DESC: { description: `Newest serverLastModified first, then caseId descending. ${MOVES_ON_WRITE}` },
    DATE_OPENED_ASC: {
      description: "Oldest dateOpened first, then caseId ascending. A write never changes dateOpened: no case moves while a client pages.",
    },
    DATE_OPENED_DESC: {
      description: "Newest dateOpened first, then caseId descending: recently opened cases first; no case moves while a client pages.",
    },
    DATE_CLOSED_ASC: {
      description:
        "Earliest dateClosed first, then caseId ascending; open cases (no dateClosed) last, by caseId. A case closed while a client pages moves to its new place.",
    },
    DATE_CLOSED_DESC: {
      description:
        "Latest dateClosed first, then caseId descending; open cases (no dateClosed) last, by caseId descending. A case closed while a client pages moves to its new place.",
    },
    CASE_NAME_ASC: {
      description:
        "By caseName ascending (the database's collation), then caseId ascending. A case renamed while a client pages moves to its new place.",
    },
    CASE_NAME_DESC: { description: "By caseName descending, then caseId descending. A case renamed while a client pages moves to its new place." },
  },
});

@ObjectType("CaseIndex", {
  description: "A named link from a case to another case (REST `indices.{name}`), e.g. `parent` or `host`.",
  simpleResolvers: true,
})
export class CaseIndexType {
  @Field(() => String, { description: "The index name (the REST key under `indices`), e.g. `parent` or `host`." })
  name!: string;

  @Field(() => String, { description: "The case id (UUID) the index points at (REST `case_id`); `case` resolves it." })
  caseId!: string;

  @Field(() => String, { description: "The case type of the case pointed at, as the write declared it (REST `case_type`)." })
  caseType!: string;

  @Field(() => CaseIndexRelationship, { description: "How this case relates to the case pointed at (REST `relationship`)." })
  relationship!: CaseIndexRelationship;

  /** the domain the index lives in, for resolving the referenced case */
  domain!: string;
}

const DATE = "DateTimeISO in UTC with millisecond precision (REST shows microseconds)";

@ObjectType("Case", {
  implements: NodeInterface,
  description: "A case: a record that field workers open, update, close and link to other cases (REST Case API v2 case).",
  // plain properties are read by graphql-js's default resolver, not through a type-graphql resolver per field and case
  simpleResolvers: true,
})
export class CaseType {
  @Field(() => ID, { description: "The case id, a lower-case UUID (REST `case_id`); `id` is the global id." })
  caseId!: string;

  @Field(() => String, { description: "The name of the domain (project space) the case belongs to (REST `domain`)." })
  domain!: string;

  @Field(() => String, { description: "The case type, e.g. `patient` (REST `case_type`)." })
  caseType!: string;

  @Field(() => String, { description: "The case's display name (REST `case_name`)." })
  caseName!: string;

  @Field(() => String, { nullable: true, description: "An id from another system, not unique (REST `external_id`); null when never set." })
  externalId!: string | null;

  @Field(() => String, { description: "The id of the user, group or location that owns the case (REST `owner_id`)." })
  ownerId!: string;

  @Field(() => Date, { description: `When the case was opened (REST \`date_opened\`); ${DATE}.` })
  dateOpened!: Date;

  @Field(() => Date, { description: `When the case was last changed by a form, as the device saw it (REST \`last_modified\`); ${DATE}.` })
  lastModified!: Date;

  @Field(() => Date, { description: `When the server last stored a change of the case (REST \`server_last_modified\`); ${DATE}.` })
  serverLastModified!: Date;

  @Field(() => Date, {
    description: `When the case was last indexed for listing (REST \`indexed_on\`): the order of \`cases\`; ${DATE}.`,
  })
  indexedOn!: Date;

  @Field(() => Boolean, { description: "Whether the case is closed (REST `closed`)." })
  closed!: boolean;

  @Field(() => Date, { nullable: true, description: `When the case was closed (REST \`date_closed\`); null while open; ${DATE}.` })
  dateClosed!: Date | null;

  @Field(() => JSONObjectScalar, { description: "The case properties (REST `properties`): an object of property name to string value." })
  properties!: Record<string, string>;
}

@ObjectType("Actor", {
  description: "The user a form was submitted as, as the form records them: a value of the form, with no global id of its own.",
})
export class ActorType {
  @Field(() => ID, { description: "The user's id (the form's `userId`)." })
  userId!: string;

  @Field(() => String, { description: "The user's username." })
  username!: string;
}

@ObjectType("Form", {
  implements: NodeInterface,
  description: "The form (XForm submission) a case write generated and stored: every write, REST or GraphQL, makes one.",
})
export class FormType {
  @Field(() => String, { description: "The name of the domain the form belongs to." })
  domain!: string;

  @Field(() => String, { description: "The form's XML namespace (xmlns), naming the kind of form." })
  xmlns!: string;

  @Field(() => String, { description: "The id of the user who submitted the write." })
  userId!: string;

  @Field(() => String, { description: "The username of the user who submitted the write." })
  username!: string;

  @Field(() => String, { description: "The device the write came from: the request's User-Agent for REST, `graphql` for GraphQL writes." })
  deviceId!: string;

  @Field(() => Date, { description: "When the server received the form; DateTimeISO in UTC." })
  receivedOn!: Date;

  @Field(() => String, { description: "The form's XML: the case blocks the form applied." })
  xml!: string;

  @Field(() => String, { nullable: true, description: "Why the form was refused; null when it was applied. A refused form changed no case." })
  problem!: string | null;

  @Field(() => [String], { description: "The ids (UUIDs) of the cases the form wrote, in the order it wrote them." })
  caseIds!: string[];
}

export const { ConnectionType: CaseConnectionType } = connectionTypes(CaseType, {
  type: "Case",
  items: "cases",
  totalCount:
    "How many cases the filter matches in all, the same on every page whatever `after`/`before` (REST's `matching_records` counts from its page on instead).",
});

@ObjectType("CaseFetchEntry", { description: "One requested id of a bulk fetch (`casesByIds`), found or not." })
export class CaseFetchEntryType {
  @Field(() => String, { description: "Which list the id came from: `case_id` (caseIds) or `external_id` (externalIds)." })
  by!: string;

  @Field(() => String, { description: "The id as requested." })
  requestedId!: string;

  @Field(() => CaseType, { nullable: true, description: 'The case it names; null when none (REST\'s `{"error": "not found"}` stub).' })
  case!: CaseType | null;
}

@ObjectType("CaseFetchResult", { description: "The answer of a bulk fetch (REST `POST bulk-fetch/`): one entry per requested id." })
export class CaseFetchResultType {
  @Field(() => Int, { description: "How many requested ids found a case, duplicates counted (REST `matching_records`)." })
  matchingRecords!: number;

  @Field(() => Int, { description: "How many requested ids found none (REST `missing_records`)." })
  missingRecords!: number;

  @Field(() => [CaseFetchEntryType], {
    description: "One entry per requested id: case ids first, then external ids, in request order, duplicates repeated.",
  })
  entries!: CaseFetchEntryType[];
}

@ObjectType("CaseWriteResult", { description: "The result of a single-case write: the form it stored and the case as written." })
export class CaseWriteResultType {
  @Field(() => ID, { description: "The id of the form the write stored (REST `xform_id`); `form(formId)` reads it." })
  xformId!: string;

  @Field(() => CaseType, { description: "The case as the write left it." })
  case!: CaseType;
}

@ObjectType("CaseBulkWriteResult", { description: "The result of a bulk write: the one form it stored and every case it wrote." })
export class CaseBulkWriteResultType {
  @Field(() => ID, { description: "The id of the one form the whole bulk write stored (REST `xform_id`)." })
  xformId!: string;

  @Field(() => [CaseType], { description: "The cases as written, in the order of the items." })
  cases!: CaseType[];
}

@ObjectType("CaseChange", {
  description: "A committed write to a case, as `caseChanged` pushes it: read the case itself with `case(domain, caseId)`.",
})
export class CaseChangeType {
  @Field(() => String, { description: "The name of the domain of the case." })
  domain!: string;

  @Field(() => ID, { description: "The id (UUID) of the case written." })
  caseId!: string;

  @Field(() => String, { description: "The case's type after the write." })
  caseType!: string;

  @Field(() => ID, { description: "The id of the form that made the change (the write's xformId)." })
  formId!: string;
}

@InputType("PropertyFilter", { description: "Cases whose property has one of these values (REST `properties.{name}=value`)." })
export class PropertyFilterInput {
  @Field(() => String, { description: "The property name; exact and case-sensitive." })
  name!: string;

  @Field(() => [String], {
    description:
      "Any of these values (exact, case-sensitive); an empty string matches a property that is unset as well as empty. An empty list filters nothing.",
  })
  values!: string[];
}

@InputType("IndexFilter", { description: "Cases whose index of this name points at one of these cases (REST `indices.{name}={case_id}`)." })
export class IndexFilterInput {
  @Field(() => String, { description: "The index name, e.g. `parent` or `host`." })
  name!: string;

  @Field(() => [String], { description: "Any of these case ids (UUIDs); an empty list filters nothing." })
  caseIds!: string[];
}

const ANY_OF = "Any of these values (exact, case-sensitive); omitted or empty filters nothing.";

@InputType("CaseFilter", {
  description:
    "The REST list filters (CONTRACT §2): a list ORs its values, different fields AND. Omitted fields filter nothing. Each filter takes at most 100 values, and at most 20 property and index filters are given in all: more is BAD_USER_INPUT.",
})
export class CaseFilterInput {
  @Field(() => [String], { nullable: true, description: `Cases with one of these external ids (REST \`external_id\`). ${ANY_OF}` })
  externalId?: string[] | null;

  @Field(() => [String], { nullable: true, description: `Cases of one of these types (REST \`case_type\`). ${ANY_OF}` })
  caseType?: string[] | null;

  @Field(() => [String], { nullable: true, description: `Cases owned by one of these owner ids (REST \`owner_id\`). ${ANY_OF}` })
  ownerId?: string[] | null;

  @Field(() => [String], { nullable: true, description: `Cases with one of these names (REST \`case_name\`). ${ANY_OF}` })
  caseName?: string[] | null;

  @Field(() => Boolean, { nullable: true, description: "Only closed (true) or only open (false) cases (REST `closed`); omitted: both." })
  closed?: boolean | null;

  @Field(() => [PropertyFilterInput], { nullable: true, description: "Property filters, each one ANDed (REST `properties.{name}`)." })
  properties?: PropertyFilterInput[] | null;

  @Field(() => [IndexFilterInput], { nullable: true, description: "Index filters, each one ANDed (REST `indices.{name}`)." })
  indices?: IndexFilterInput[] | null;

  @Field(() => DateRangeInput, { nullable: true, description: "Bounds on lastModified (REST `last_modified.gt/gte/lt/lte`)." })
  lastModified?: DateRangeInput | null;

  @Field(() => DateRangeInput, {
    nullable: true,
    description: "Bounds on serverLastModified (REST `server_last_modified.gt/gte/lt/lte`).",
  })
  serverLastModified?: DateRangeInput | null;

  @Field(() => DateRangeInput, { nullable: true, description: "Bounds on indexedOn (REST `indexed_on.gt/gte/lt/lte`)." })
  indexedOn?: DateRangeInput | null;

  @Field(() => DateRangeInput, { nullable: true, description: "Bounds on dateOpened (REST `date_opened.gt/gte/lt/lte`)." })
  dateOpened?: DateRangeInput | null;

  @Field(() => DateRangeInput, { nullable: true, description: "Bounds on dateClosed (REST `date_closed.gt/gte/lt/lte`); open cases never match." })
  dateClosed?: DateRangeInput | null;
}

@InputType("CaseInput", {
  description: "A case write (REST payload): omitted or null fields are left as they are on update; properties and indices keep REST's JSON shape.",
})
export class CaseInput {
  @Field(() => String, { nullable: true, description: "The case type (REST `case_type`); required to create." })
  caseType?: string | null;

  @Field(() => String, { nullable: true, description: "The case name (REST `case_name`); required to create." })
  caseName?: string | null;

  @Field(() => String, { nullable: true, description: "The owner id (REST `owner_id`); required to create." })
  ownerId?: string | null;

  @Field(() => String, { nullable: true, description: "An id from another system (REST `external_id`)." })
  externalId?: string | null;

  @Field(() => JSONObjectScalar, {
    nullable: true,
    description: "Properties to set (REST `properties`): property name (an XML identifier) to string value; others are kept.",
  })
  properties?: Record<string, unknown> | null;

  @Field(() => JSONObjectScalar, {
    nullable: true,
    description:
      'Indices to set (REST `indices`): index name to `{"case_id" | "external_id" | "temporary_id": …, "case_type": …, "relationship": "child" | "extension"}`.',
  })
  indices?: Record<string, unknown> | null;

  @Field(() => Boolean, { nullable: true, description: "True closes the case (REST `close`)." })
  close?: boolean | null;
}

@InputType("CaseBulkItem", { description: "One item of a bulk write (an element of REST's list payload): CaseInput plus what says which case." })
export class CaseBulkItemInput extends CaseInput {
  @Field(() => Boolean, { nullable: true, description: "True: create; false: update caseId; null: upsert by externalId (REST `create`)." })
  create?: boolean | null;

  @Field(() => String, { nullable: true, description: "The case to update (REST `case_id`), for `create: false`." })
  caseId?: string | null;

  @Field(() => String, {
    nullable: true,
    description: "A name for a case created by this request, which other items' indices may point at (REST `temporary_id`).",
  })
  temporaryId?: string | null;
}
