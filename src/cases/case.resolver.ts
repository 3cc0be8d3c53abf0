import { filter, pipe } from "@graphql-yoga/subscription";
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { ListCursors, connectionCost, connectionOf, pageOf, sliceOf, type ConnectionBound, type ConnectionValue } from "../graphql/connection.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import type { DateRangeInput } from "../graphql/date-range.types.ts";
import { globalId, type NodeFetcher, type NodeTypeName } from "../graphql/node.ts";
import { RELATION_LIST, boundedListCost, firstDescription, listSize, perIdCost } from "../graphql/list-bounds.ts";
import { bulkActions, caseAction, type CaseItem } from "./case.actions.ts";
import { CASE_CHANGED, type CaseChangedEvent } from "./case.events.ts";
import { DEFAULT_LIMIT, MAX_LIMIT, RANGE_OPS, type CaseOrder, type CaseQueryFilter, type DateField, type Position } from "./case.query.ts";
import type { CaseRecord } from "./case.record.ts";
import type { WriteResult } from "./case.write.service.ts";
import type { FormView } from "./form.repository.ts";
import { isUuid } from "../util/ids.ts";
import { isStorableText } from "../util/text.ts";
import {
  ActorType,
  CaseBulkItemInput,
  CaseBulkWriteResultType,
  CaseChangeType,
  CaseConnectionType,
  CaseFetchResultType,
  CaseFilterInput,
  CaseIndexRelationship,
  CaseIndexType,
  CaseInput,
  CaseOrderBy,
  CaseType,
  CaseWriteResultType,
  FormType,
} from "./case.types.ts";

/**
 * GraphQL twin of the Case API: the same scoped services, so the same rules and messages. Filters
 * and inputs map straight into the typed `CaseQuery` and `CaseItem`s; relations go through
 * per-request loaders.
 */

/**
 * A case as the Case type's resolvers read it. It is a CaseType, because type-graphql hands any
 * other root to a field resolver (`indices`, `id`, …) as a fresh CaseType copy of it, made again for
 * every field resolver of every case of a page. (type-graphql also builds one, without arguments,
 * from a plain root such as `Query.node`'s.)
 */
class CaseNode extends CaseType {
  indices!: CaseRecord["indices"];
}

function toNode(c: CaseRecord): CaseNode {
  const node = new CaseNode();
  node.caseId = c.id;
  node.domain = c.domainName;
  node.caseType = c.caseType;
  node.caseName = c.caseName;
  node.externalId = c.externalId;
  node.ownerId = c.ownerId;
  node.dateOpened = c.dateOpened;
  node.lastModified = c.lastModified;
  node.serverLastModified = c.serverLastModified;
  node.indexedOn = c.indexedOn;
  node.closed = c.closed;
  node.dateClosed = c.dateClosed;
  node.properties = c.properties;
  node.indices = c.indices;
  return node;
}

const DATE_FILTERS = {
  lastModified: "last_modified",
  serverLastModified: "server_last_modified",
  indexedOn: "indexed_on",
  dateOpened: "date_opened",
  dateClosed: "date_closed",
} as const satisfies Record<string, DateField>;

/** Adds each value list of a filter that has values (an empty list filters nothing, as no REST parameter). */
function addValues(to: Map<string, string[]>, name: string, values: string[]): void {
  if (values.length) to.set(name, [...(to.get(name) ?? []), ...values]);
}

/** The filter as the list query's filters: lists OR their values, fields AND. */
function caseFilterOf(filter: CaseFilterInput | null | undefined): CaseQueryFilter {
  const query: CaseQueryFilter = { exact: {}, properties: new Map(), indices: new Map(), ranges: [] };
  if (!filter) return query;
  const exact = [
    ["external_id", filter.externalId],
    ["case_type", filter.caseType],
    ["owner_id", filter.ownerId],
    ["case_name", filter.caseName],
  ] as const;
  for (const [field, values] of exact) if (values?.length) query.exact[field] = values;
  if (filter.closed !== undefined && filter.closed !== null) query.closed = [filter.closed];
  for (const p of filter.properties ?? []) addValues(query.properties, p.name, p.values);
  for (const i of filter.indices ?? []) addValues(query.indices, i.name, i.caseIds);
  for (const [key, field] of Object.entries(DATE_FILTERS)) {
    const range = filter[key as keyof typeof DATE_FILTERS] as DateRangeInput | null | undefined;
    for (const op of RANGE_OPS) {
      const value = range?.[op];
      if (value !== undefined && value !== null) query.ranges.push({ field, op, values: [value] });
    }
  }
  return query;
}

/** Page sizes of `cases`: REST's default and maximum, with REST's message beyond it. */
const CASE_PAGES: ConnectionBound = {
  defaultSize: DEFAULT_LIMIT,
  maxSize: MAX_LIMIT,
  tooLarge: `You cannot request more than ${MAX_LIMIT} cases per request.`,
};

/**
 * The cursors of one case list: the fingerprint names the domain, the filter (value lists sorted,
 * as they OR) and the order, so that equal lists share cursors and a cursor of another list is refused.
 */
function caseCursors(domain: string, filter: CaseQueryFilter, orderBy: CaseOrderBy): ListCursors {
  const sorted = (values: readonly string[]) => [...new Set(values)].sort();
  const byName = (map: Map<string, string[]>) => [...map].map(([name, values]) => [name, sorted(values)]).sort();
  return new ListCursors(
    ListCursors.fingerprint({
      domain,
      orderBy,
      exact: Object.fromEntries(Object.entries(filter.exact).map(([field, values]) => [field, sorted(values)])),
      closed: filter.closed,
      properties: byName(filter.properties),
      indices: byName(filter.indices),
      ranges: filter.ranges,
    }),
  );
}

/** Each `orderBy` as the list's order. */
const ORDER_OF: Record<CaseOrderBy, CaseOrder> = {
  [CaseOrderBy.INDEXED_ON_ASC]: { field: "indexed_on", direction: "asc" },
  [CaseOrderBy.INDEXED_ON_DESC]: { field: "indexed_on", direction: "desc" },
  [CaseOrderBy.LAST_MODIFIED_ASC]: { field: "last_modified", direction: "asc" },
  [CaseOrderBy.LAST_MODIFIED_DESC]: { field: "last_modified", direction: "desc" },
  [CaseOrderBy.SERVER_LAST_MODIFIED_ASC]: { field: "server_last_modified", direction: "asc" },
  [CaseOrderBy.SERVER_LAST_MODIFIED_DESC]: { field: "server_last_modified", direction: "desc" },
  [CaseOrderBy.DATE_OPENED_ASC]: { field: "date_opened", direction: "asc" },
  [CaseOrderBy.DATE_OPENED_DESC]: { field: "date_opened", direction: "desc" },
  [CaseOrderBy.DATE_CLOSED_ASC]: { field: "date_closed", direction: "asc" },
  [CaseOrderBy.DATE_CLOSED_DESC]: { field: "date_closed", direction: "desc" },
  [CaseOrderBy.CASE_NAME_ASC]: { field: "case_name", direction: "asc" },
  [CaseOrderBy.CASE_NAME_DESC]: { field: "case_name", direction: "desc" },
};

const KEYSET_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A time of a cursor at microsecond precision, as the list writes it; a time PostgreSQL would refuse (2020-02-30) is not one. */
function isKeysetTime(value: string): boolean {
  if (!KEYSET_TIME.test(value)) return false;
  const parsed = new Date(value);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === value.slice(0, 19);
}

/**
 * A cursor's strings as a position in `order`: the value and the case id, or the case id alone for
 * a case without a value (an open case by dateClosed); undefined when they are not one, so that a
 * malformed cursor is refused rather than a 500.
 */
const positionIn =
  (order: CaseOrder) =>
  (parts: string[]): Position | undefined => {
    const [value, caseId] = parts.length === 1 && order.field === "date_closed" ? [null, parts[0]] : parts;
    if (parts.length > 2 || value === undefined || !caseId || !isUuid(caseId)) return undefined;
    if (value === null) return { value, caseId };
    const valid = order.field === "case_name" ? isStorableText(value) : isKeysetTime(value);
    return valid ? { value, caseId } : undefined;
  };

/** A position as a cursor's strings (the inverse of `positionIn`). */
const cursorParts = (position: Position): string[] => (position.value === null ? [position.caseId] : [position.value, position.caseId]);

/** A GraphQL input as a write item (null means "not given", except for `create`, where it asks for an upsert). */
function itemOf(input: CaseInput | CaseBulkItemInput): CaseItem {
  const bulk = input as CaseBulkItemInput;
  return {
    create: bulk.create,
    caseId: bulk.caseId ?? undefined,
    temporaryId: bulk.temporaryId ?? undefined,
    caseType: input.caseType ?? undefined,
    caseName: input.caseName ?? undefined,
    ownerId: input.ownerId ?? undefined,
    externalId: input.externalId ?? undefined,
    properties: input.properties ?? undefined,
    indices: input.indices ?? undefined,
    close: input.close ?? undefined,
  };
}

/** What `first` of `children` and `extensions` says: the rest are paged through `cases`. */
const FIRST_RELATED = firstDescription(
  RELATION_LIST,
  "more are not returned: page through them all with cases(filter: {indices: [{name, caseIds}]})",
);

/** The `domain` argument of every case operation. */
const DOMAIN_ARG = { description: "The name of the domain (project space) the cases belong to." };

/** The form's device_id for writes made over GraphQL. */
const GRAPHQL_DEVICE = "graphql";

const written = (result: WriteResult): CaseWriteResultType => ({ xformId: result.formId, case: toNode(result.cases[0]) });

@Resolver(() => CaseType)
export class CaseResolver {
  @Query(() => CaseConnectionType, {
    description:
      "The cases of a domain (REST `GET /a/{domain}/api/case/v2/`) as a Relay connection: filtered as REST filters, in `orderBy` order, paged with `first`/`after` forward or `last`/`before` backward. Every edge has its own cursor.",
    complexity: connectionCost(CASE_PAGES),
  })
  async cases(
    @Arg("domain", () => String, { description: "The name of the domain whose cases to list." }) domain: string,
    @Arg("filter", () => CaseFilterInput, { nullable: true, description: "Which cases to list; omitted: all of the domain's." })
    filter: CaseFilterInput | null,
    @Arg("orderBy", () => CaseOrderBy, {
      nullable: true,
      defaultValue: CaseOrderBy.INDEXED_ON_ASC,
      description:
        "The order of the list (default INDEXED_ON_ASC, REST's order): by one column, either way, ties broken by caseId. A case written while a client pages may move (see CaseOrderBy).",
    })
    orderBy: CaseOrderBy,
    @Arg("first", () => Int, {
      nullable: true,
      description: `Page forward: at most this many cases from the start of the list, or right after \`after\` (0 to ${MAX_LIMIT}; default ${DEFAULT_LIMIT} when neither first nor last is given). Not with \`last\`.`,
    })
    first: number | null,
    @Arg("after", () => String, {
      nullable: true,
      description:
        "A cursor (an edge's `cursor` or `pageInfo.endCursor`): the page starts right after that edge. Only with the filter and orderBy that made it.",
    })
    after: string | null,
    @Arg("last", () => Int, {
      nullable: true,
      description: `Page backward: at most this many cases from the end of the list, or right before \`before\` (0 to ${MAX_LIMIT}). Not with \`first\`.`,
    })
    last: number | null,
    @Arg("before", () => String, {
      nullable: true,
      description:
        "A cursor (an edge's `cursor` or `pageInfo.startCursor`): the page ends right before that edge. Only with the filter and orderBy that made it.",
    })
    before: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConnectionValue<CaseNode>> {
    const scope = await ctx.loaders.cases.reads(domain);
    const query = caseFilterOf(filter);
    const cursors = caseCursors(domain, query, orderBy);
    const order = ORDER_OF[orderBy];
    const slice = sliceOf({ first, after, last, before }, CASE_PAGES, (cursor, argument) => cursors.decode(cursor, argument, positionIn(order)));
    const { read, total, outside } = await scope.slice(query, { ...slice, order });
    return connectionOf(
      pageOf(slice, read, outside),
      total,
      (c) => toNode(c.record),
      (c) => cursors.encode(cursorParts(c.key)),
    );
  }

  @Query(() => CaseType, {
    nullable: true,
    description: "The case with this id (REST `GET {case_id}`); null when there is none in the domain.",
  })
  async case(
    @Arg("domain", () => String, DOMAIN_ARG) domain: string,
    @Arg("caseId", () => ID, { description: "The case id (UUID, REST `case_id`); any letter case." }) caseId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseNode | null> {
    const record = await (await ctx.loaders.cases.reads(domain)).byId(caseId);
    return record ? toNode(record) : null;
  }

  @Query(() => CaseType, {
    nullable: true,
    description:
      "The case with this external id (REST `GET ext/{ext_id}/`); when several have it, the oldest (by dateOpened, then caseId); null when none.",
  })
  async caseByExternalId(
    @Arg("domain", () => String, DOMAIN_ARG) domain: string,
    @Arg("externalId", () => String, { description: "The external id, exact and case-sensitive." }) externalId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseNode | null> {
    const record = await (await ctx.loaders.cases.reads(domain)).byExternalId(externalId);
    return record ? toNode(record) : null;
  }

  @Query(() => CaseFetchResultType, {
    description:
      "Bulk fetch (REST `POST bulk-fetch/`): one entry per requested id, case ids first, in request order; at least one id, at most 5000 in all.",
    complexity: perIdCost("caseIds", "externalIds"),
  })
  async casesByIds(
    @Arg("domain", () => String, DOMAIN_ARG) domain: string,
    @Arg("caseIds", () => [String], { nullable: true, description: "Case ids (UUIDs) to fetch (REST `case_ids`); duplicates repeat their entry." })
    caseIds: string[] | null,
    @Arg("externalIds", () => [String], {
      nullable: true,
      description: "External ids to fetch (REST `external_ids`), each giving its oldest case; duplicates repeat their entry.",
    })
    externalIds: string[] | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseFetchResultType> {
    // through the request's loaders, so that aliased bulk fetches share their queries
    const entries = await ctx.loaders.cases.fetch(domain, { caseIds: caseIds ?? [], externalIds: externalIds ?? [] });
    const missing = entries.filter((e) => !e.record).length;
    return {
      matchingRecords: entries.length - missing,
      missingRecords: missing,
      entries: entries.map((e) => ({ by: e.by, requestedId: e.id, case: e.record ? toNode(e.record) : null })),
    };
  }

  @Query(() => FormType, { nullable: true, description: "The form a write stored, by its id (the write's xformId)." })
  async form(
    @Arg("domain", () => String, { description: "The name of the domain the form belongs to." }) domain: string,
    @Arg("formId", () => ID, { description: "The form's id: a write's xformId." }) formId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FormView | null> {
    return (await ctx.loaders.cases.reads(domain)).form(formId);
  }

  @Mutation(() => CaseWriteResultType, {
    description: "Creates a case (REST `POST` with an object), with the same validation and messages; stores one form.",
  })
  async createCase(
    @Arg("domain", () => String, DOMAIN_ARG) domain: string,
    @Arg("input", () => CaseInput, { description: "The new case; caseType, caseName and ownerId are required." }) input: CaseInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseWriteResultType> {
    const scope = await ctx.services.caseWrites.in(ctx.principal, domain);
    return written(await scope.write([caseAction(itemOf(input), { kind: "create" })], { deviceId: GRAPHQL_DEVICE, bulk: false }));
  }

  @Mutation(() => CaseWriteResultType, {
    description: "Updates the case with this id (REST `PUT {case_id}`): only the fields given change; stores one form.",
  })
  async updateCase(
    @Arg("domain", () => String, DOMAIN_ARG) domain: string,
    @Arg("caseId", () => ID, { description: "The id (UUID) of the case to update." }) caseId: string,
    @Arg("input", () => CaseInput, { description: "The fields to change." }) input: CaseInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseWriteResultType> {
    const scope = await ctx.services.caseWrites.in(ctx.principal, domain);
    return written(await scope.write([caseAction(itemOf(input), { kind: "update", caseId })], { deviceId: GRAPHQL_DEVICE, bulk: false }));
  }

  @Mutation(() => CaseWriteResultType, {
    description: "Updates the case with this external id, or creates it when there is none (REST `PUT ext/{ext_id}/`); stores one form.",
  })
  async upsertCase(
    @Arg("domain", () => String, DOMAIN_ARG) domain: string,
    @Arg("externalId", () => String, { description: "The external id that names the case (exact, case-sensitive)." }) externalId: string,
    @Arg("input", () => CaseInput, { description: "The fields to set; to create, caseType, caseName and ownerId are required." })
    input: CaseInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseWriteResultType> {
    const scope = await ctx.services.caseWrites.in(ctx.principal, domain);
    const action = caseAction(itemOf(input), { kind: "upsert", externalId });
    return written(await scope.write([action], { deviceId: GRAPHQL_DEVICE, bulk: false }));
  }

  @Mutation(() => CaseBulkWriteResultType, {
    description: "Up to 100 creates, updates and upserts in one form (REST `POST`/`PUT` with a list): all are written or, on any error, none.",
  })
  async bulkWriteCases(
    @Arg("domain", () => String, DOMAIN_ARG) domain: string,
    @Arg("items", () => [CaseBulkItemInput], { description: "The writes, 1 to 100; errors name their row (from 1)." }) items: CaseBulkItemInput[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseBulkWriteResultType> {
    const scope = await ctx.services.caseWrites.in(ctx.principal, domain);
    const result = await scope.write(bulkActions(items, itemOf), { deviceId: GRAPHQL_DEVICE, bulk: true });
    return { xformId: result.formId, cases: result.cases.map(toNode) };
  }

  @Subscription(() => CaseChangeType, {
    description:
      "Pushes every committed write to a case of the domain (of caseType, when given), from any process; read permission is checked when it starts.",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      // the permission to read the domain's cases, checked once when the subscription starts
      await ctx.loaders.cases.reads(args.domain);
      return pipe(
        ctx.services.pubsub.subscribe(CASE_CHANGED),
        filter((e: CaseChangedEvent) => e.domain === args.domain && (!args.caseType || e.caseType === args.caseType)),
      );
    },
  })
  caseChanged(
    @Root() event: CaseChangedEvent,
    @Arg("domain", () => String, DOMAIN_ARG) _domain: string,
    @Arg("caseType", () => String, { nullable: true, description: "Only writes that leave a case of this type; omitted: all." }) _caseType:
      | string
      | null,
  ): CaseChangeType {
    return event;
  }

  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() c: CaseNode): string {
    return globalId("Case", c.domain, c.caseId);
  }

  @FieldResolver(() => [CaseIndexType], {
    description: "The case's indices (REST `indices`, as a list): its links to other cases, e.g. `parent`; empty when none.",
  })
  indices(@Root() c: CaseNode): CaseIndexType[] {
    return c.indices.map((i) => ({
      name: i.name,
      caseId: i.referencedId,
      caseType: i.referencedType,
      relationship: i.relationship as CaseIndexRelationship,
      domain: c.domain,
    }));
  }

  @FieldResolver(() => CaseType, {
    nullable: true,
    description: "The case its `parent` index points at; null when it has none or that case is gone.",
  })
  async parent(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<CaseNode | null> {
    return indexTarget(c, "parent", ctx);
  }

  @FieldResolver(() => CaseType, { nullable: true, description: "The case its `host` index points at; null when it has none or that case is gone." })
  async host(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<CaseNode | null> {
    return indexTarget(c, "host", ctx);
  }

  @FieldResolver(() => [CaseType], {
    description: "The cases that index this one with relationship CHILD, by case id.",
    complexity: boundedListCost(RELATION_LIST),
  })
  async children(
    @Root() c: CaseNode,
    @Arg("first", () => Int, { nullable: true, defaultValue: RELATION_LIST.defaultSize, description: FIRST_RELATED }) first: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseNode[]> {
    return (await ctx.loaders.cases.related(c.domain, c.caseId, "child", listSize(first, RELATION_LIST))).map(toNode);
  }

  @FieldResolver(() => [CaseType], {
    description: "The cases that index this one with relationship EXTENSION, by case id.",
    complexity: boundedListCost(RELATION_LIST),
  })
  async extensions(
    @Root() c: CaseNode,
    @Arg("first", () => Int, { nullable: true, defaultValue: RELATION_LIST.defaultSize, description: FIRST_RELATED }) first: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseNode[]> {
    return (await ctx.loaders.cases.related(c.domain, c.caseId, "extension", listSize(first, RELATION_LIST))).map(toNode);
  }

  @FieldResolver(() => [FormType], {
    description: "The forms that wrote this case, oldest first.",
    complexity: boundedListCost(RELATION_LIST),
  })
  async forms(
    @Root() c: CaseNode,
    @Arg("first", () => Int, {
      nullable: true,
      defaultValue: RELATION_LIST.defaultSize,
      description: firstDescription(RELATION_LIST, "later forms are not returned"),
    })
    first: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FormView[]> {
    const size = listSize(first, RELATION_LIST);
    return ctx.loaders.cases.forms(c.domain, c.caseId, size);
  }

  @FieldResolver(() => ActorType, { nullable: true, description: "Who submitted the form that created the case; null when that form is not stored." })
  async openedBy(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<ActorType | null> {
    const [first] = await ctx.loaders.cases.forms(c.domain, c.caseId, 1);
    return first ? { userId: first.userId, username: first.username } : null;
  }
}

async function indexTarget(c: CaseNode, name: string, ctx: GraphQLContext): Promise<CaseNode | null> {
  const index = c.indices.find((i) => i.name === name);
  if (!index) return null;
  const target = await ctx.loaders.cases.case(c.domain, index.referencedId);
  return target ? toNode(target) : null;
}

@Resolver(() => FormType)
export class FormResolver {
  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() form: FormView): string {
    return globalId("Form", form.domain, form.id);
  }

  @FieldResolver(() => ID, { description: "The form's id: the xformId (REST `xform_id`) of the write that stored it." })
  formId(@Root() form: FormView): string {
    return form.id;
  }
}

/** Cases and forms for `Query.node`: read through the caller's scope of the id's domain. */
export const CASE_NODES: Partial<Record<NodeTypeName, NodeFetcher<GraphQLContext>>> = {
  Case: async (ctx, { domain, key }) => {
    const record = await ctx.loaders.cases.case(domain, key);
    return record && toNode(record);
  },
  Form: async (ctx, { domain, key }) => (await ctx.loaders.cases.reads(domain)).form(key),
};

@Resolver(() => CaseIndexType)
export class CaseIndexResolver {
  @FieldResolver(() => CaseType, {
    nullable: true,
    name: "case",
    description: "The case the index points at; null when it is not (or no longer) in the domain.",
  })
  async referencedCase(@Root() index: CaseIndexType, @Ctx() ctx: GraphQLContext): Promise<CaseNode | null> {
    const target = await ctx.loaders.cases.case(index.domain, index.caseId);
    return target ? toNode(target) : null;
  }
}
