import { filter, pipe } from "@graphql-yoga/subscription";
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { authorize } from "../auth/permissions.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import type { Params } from "./case.filters.ts";
import { parseBulkRequest } from "./case.read.service.ts";
import type { CaseRecord } from "./case.serializer.ts";
import { CASE_CHANGED, type CaseChangedEvent } from "./case.events.ts";
import type { WriteRequest } from "./case.write.service.ts";
import {
  ActorType,
  CaseBulkItemInput,
  CaseBulkWriteResultType,
  CaseChangeType,
  CaseConnectionType,
  CaseFetchResultType,
  CaseFilterInput,
  CaseIndexType,
  CaseInput,
  CaseType,
  CaseWriteResultType,
  FormType,
} from "./case.types.ts";
import type { DateRangeInput } from "../graphql/date-range.types.ts";

/**
 * GraphQL twin of the Case API: the same services, so the same rules and messages. Filters and
 * inputs are turned into the REST parameters and payloads; relations go through per-request loaders.
 */

type CaseNode = CaseType & { indices: CaseRecord["indices"] };

const toNode = (c: CaseRecord): CaseNode => ({ ...c, caseId: c.id, domain: c.domainName, indices: c.indices });

const DATE_FILTERS = {
  lastModified: "last_modified",
  serverLastModified: "server_last_modified",
  indexedOn: "indexed_on",
  dateOpened: "date_opened",
  dateClosed: "date_closed",
} as const;

export function filterParams(filter: CaseFilterInput | null | undefined): Params {
  const params: Params = [];
  if (!filter) return params;
  const each = (key: string, values: string[] | null | undefined) => values?.forEach((v) => params.push([key, v]));
  each("external_id", filter.externalId);
  each("case_type", filter.caseType);
  each("owner_id", filter.ownerId);
  each("case_name", filter.caseName);
  if (filter.closed !== undefined && filter.closed !== null) params.push(["closed", String(filter.closed)]);
  filter.properties?.forEach((p) => each(`properties.${p.name}`, p.values));
  filter.indices?.forEach((i) => each(`indices.${i.name}`, i.caseIds));
  for (const [field, param] of Object.entries(DATE_FILTERS)) {
    const range = filter[field as keyof typeof DATE_FILTERS] as DateRangeInput | null | undefined;
    for (const op of ["gt", "gte", "lt", "lte"] as const) {
      const value = range?.[op];
      if (value !== undefined && value !== null) params.push([`${param}.${op}`, value]);
    }
  }
  return params;
}

/** A GraphQL input as the REST payload it stands for (nulls mean "not given", except `create`). */
export function restPayload(input: CaseInput | CaseBulkItemInput): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  const names: [keyof CaseBulkItemInput, string][] = [
    ["create", "create"],
    ["caseId", "case_id"],
    ["temporaryId", "temporary_id"],
    ["caseType", "case_type"],
    ["caseName", "case_name"],
    ["ownerId", "owner_id"],
    ["externalId", "external_id"],
    ["properties", "properties"],
    ["indices", "indices"],
    ["close", "close"],
  ];
  for (const [from, to] of names) {
    const value = (input as CaseBulkItemInput)[from];
    if (value !== undefined && (value !== null || from === "create")) payload[to] = value;
  }
  return payload;
}

function writeRequest(ctx: GraphQLContext, domain: string): WriteRequest {
  return { principal: ctx.principal, domain, deviceId: "graphql", params: [] };
}

@Resolver(() => CaseType)
export class CaseResolver {
  @Query(() => CaseConnectionType, { complexity: ({ args, childComplexity }) => 1 + Math.min(args.first ?? 20, 5000) * childComplexity })
  async cases(
    @Arg("domain", () => String) domain: string,
    @Arg("filter", () => CaseFilterInput, { nullable: true }) filter: CaseFilterInput | null,
    @Arg("first", () => Int, { nullable: true, defaultValue: 20 }) first: number,
    @Arg("after", () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseConnectionType> {
    const params: Params = [...filterParams(filter), ["limit", String(first)]];
    if (after) params.push(["cursor", after]);
    const page = await ctx.services.caseReads.listRecords(ctx.principal, domain, params);
    const nodes = page.records.map(toNode);
    const cursor = page.nextCursor ?? after ?? "";
    return {
      totalCount: page.total,
      nodes,
      edges: nodes.map((node) => ({ cursor, node })),
      pageInfo: { hasNextPage: Boolean(page.nextCursor), endCursor: page.nextCursor ?? null },
    };
  }

  @Query(() => CaseType, { nullable: true })
  async case(
    @Arg("domain", () => String) domain: string,
    @Arg("caseId", () => ID) caseId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseNode | null> {
    const record = await ctx.services.caseReads.getRecord(ctx.principal, domain, caseId);
    return record ? toNode(record) : null;
  }

  @Query(() => CaseType, { nullable: true, description: "the oldest case with this external id" })
  async caseByExternalId(
    @Arg("domain", () => String) domain: string,
    @Arg("externalId", () => String) externalId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseNode | null> {
    const record = await ctx.services.caseReads.getRecordByExternalId(ctx.principal, domain, externalId);
    return record ? toNode(record) : null;
  }

  @Query(() => CaseFetchResultType, { description: "bulk fetch: one entry per requested id, case ids first" })
  async casesByIds(
    @Arg("domain", () => String) domain: string,
    @Arg("caseIds", () => [String], { nullable: true }) caseIds: string[] | null,
    @Arg("externalIds", () => [String], { nullable: true }) externalIds: string[] | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseFetchResultType> {
    const request = parseBulkRequest({ case_ids: caseIds ?? [], external_ids: externalIds ?? [] });
    const entries = await ctx.services.caseReads.fetchRecords(ctx.principal, domain, request);
    const missing = entries.filter((e) => !e.record).length;
    return {
      matchingRecords: entries.length - missing,
      missingRecords: missing,
      entries: entries.map((e) => ({ by: e.by, id: e.id, case: e.record ? toNode(e.record) : null })),
    };
  }

  @Query(() => FormType, { nullable: true })
  async form(
    @Arg("domain", () => String) domain: string,
    @Arg("id", () => ID) id: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<FormType | null> {
    return ctx.services.caseForms.get(ctx.principal, domain, id);
  }

  @Mutation(() => CaseWriteResultType)
  async createCase(
    @Arg("domain", () => String) domain: string,
    @Arg("input", () => CaseInput) input: CaseInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseWriteResultType> {
    const result = await ctx.services.caseWrites.writeRecords(writeRequest(ctx, domain), restPayload(input), { kind: "create" });
    return { xformId: result.formId, case: toNode(result.cases[0]) };
  }

  @Mutation(() => CaseWriteResultType)
  async updateCase(
    @Arg("domain", () => String) domain: string,
    @Arg("caseId", () => ID) caseId: string,
    @Arg("input", () => CaseInput) input: CaseInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseWriteResultType> {
    const result = await ctx.services.caseWrites.writeRecords(writeRequest(ctx, domain), restPayload(input), { kind: "update", caseId });
    return { xformId: result.formId, case: toNode(result.cases[0]) };
  }

  @Mutation(() => CaseWriteResultType, { description: "updates the case with this external id, or creates it" })
  async upsertCase(
    @Arg("domain", () => String) domain: string,
    @Arg("externalId", () => String) externalId: string,
    @Arg("input", () => CaseInput) input: CaseInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseWriteResultType> {
    const result = await ctx.services.caseWrites.writeRecords(writeRequest(ctx, domain), restPayload(input), {
      kind: "upsertExternal",
      externalId,
    });
    return { xformId: result.formId, case: toNode(result.cases[0]) };
  }

  @Mutation(() => CaseBulkWriteResultType, { description: "up to 100 creates, updates and upserts in one form" })
  async bulkWriteCases(
    @Arg("domain", () => String) domain: string,
    @Arg("items", () => [CaseBulkItemInput]) items: CaseBulkItemInput[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<CaseBulkWriteResultType> {
    const result = await ctx.services.caseWrites.writeRecords(writeRequest(ctx, domain), items.map(restPayload));
    return { xformId: result.formId, cases: result.cases.map(toNode) };
  }

  @Subscription(() => CaseChangeType, {
    description: "every committed write to a case of the domain (of caseType, when given)",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      await ctx.services.domains.authorize(ctx.principal, args.domain, "caseRead");
      return pipe(
        ctx.services.pubsub.subscribe(CASE_CHANGED),
        filter((e: CaseChangedEvent) => e.domain === args.domain && (!args.caseType || e.caseType === args.caseType)),
      );
    },
  })
  caseChanged(
    @Root() event: CaseChangedEvent,
    @Arg("domain", () => String) _domain: string,
    @Arg("caseType", () => String, { nullable: true }) _caseType: string | null,
  ): CaseChangeType {
    return event;
  }

  @FieldResolver(() => [CaseIndexType])
  indices(@Root() c: CaseNode): CaseIndexType[] {
    return c.indices.map((i) => ({
      name: i.name,
      caseId: i.referencedId,
      caseType: i.referencedType,
      relationship: i.relationship,
      domain: c.domain,
    }));
  }

  @FieldResolver(() => CaseType, { nullable: true, description: "the case its `parent` index points at" })
  async parent(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<CaseNode | null> {
    return indexTarget(c, "parent", ctx);
  }

  @FieldResolver(() => CaseType, { nullable: true, description: "the case its `host` index points at" })
  async host(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<CaseNode | null> {
    return indexTarget(c, "host", ctx);
  }

  @FieldResolver(() => [CaseType], { description: "cases that index this one with relationship child", complexity: ({ childComplexity }) => 10 * childComplexity })
  async children(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<CaseNode[]> {
    return (await ctx.loaders.cases.related(c.domain, c.caseId, "child")).map(toNode);
  }

  @FieldResolver(() => [CaseType], { description: "cases that index this one with relationship extension", complexity: ({ childComplexity }) => 10 * childComplexity })
  async extensions(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<CaseNode[]> {
    return (await ctx.loaders.cases.related(c.domain, c.caseId, "extension")).map(toNode);
  }

  @FieldResolver(() => [FormType], { description: "the forms that wrote this case, oldest first", complexity: ({ childComplexity }) => 5 * childComplexity })
  async forms(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<FormType[]> {
    return ctx.loaders.cases.forms(c.caseId);
  }

  @FieldResolver(() => ActorType, { nullable: true, description: "who submitted the form that created the case" })
  async openedBy(@Root() c: CaseNode, @Ctx() ctx: GraphQLContext): Promise<ActorType | null> {
    const [first] = await ctx.loaders.cases.forms(c.caseId);
    return first ? { id: first.userId, username: first.username } : null;
  }
}

async function indexTarget(c: CaseNode, name: string, ctx: GraphQLContext): Promise<CaseNode | null> {
  const index = c.indices.find((i) => i.name === name);
  if (!index) return null;
  const target = await ctx.loaders.cases.case(c.domain, index.referencedId);
  return target ? toNode(target) : null;
}

@Resolver(() => CaseIndexType)
export class CaseIndexResolver {
  @FieldResolver(() => CaseType, { nullable: true, name: "case" })
  async referencedCase(@Root() index: CaseIndexType, @Ctx() ctx: GraphQLContext): Promise<CaseNode | null> {
    const target = await ctx.loaders.cases.case(index.domain, index.caseId);
    return target ? toNode(target) : null;
  }
}

