import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { badInput } from "../errors.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import { RELATION_LIST, boundedListCost, firstDescription, listSize } from "../graphql/list-bounds.ts";
import { LocationTypeType, toLocationType } from "./location-type.types.ts";
import type { LocationBulkReader, LocationFields, LocationRecord } from "./location.model.ts";
import { locationOrder, modifiedBounds } from "./location.rules.ts";
import { LocationBulkItemInput, LocationConnectionType, LocationFilterInput, LocationInput, LocationType } from "./location.types.ts";

/**
 * GraphQL twin of the Location API: the same service scopes, typed commands, rules and messages
 * as REST; relations batched.
 */

type LocationNode = LocationType & { typeId: string };

const toNode = (l: LocationRecord): LocationNode => ({
  locationId: l.id,
  domain: l.domainName,
  name: l.name,
  siteCode: l.siteCode,
  latitude: l.latitude,
  longitude: l.longitude,
  locationData: l.locationData,
  lastModified: l.lastModified,
  locationTypeCode: l.typeCode,
  locationTypeName: l.typeName,
  parentLocationId: l.parentId,
  typeId: l.typeId,
});

/** The fields of a GraphQL location input: null means "not given"; parentLocationId "" makes a root. */
function locationFields(input: LocationInput): LocationFields {
  return {
    name: input.name ?? undefined,
    typeCode: input.locationTypeCode ?? undefined,
    siteCode: input.siteCode ?? undefined,
    latitude: input.latitude ?? undefined,
    longitude: input.longitude ?? undefined,
    locationData: input.locationData ?? undefined,
    parentId: input.parentLocationId === "" ? null : (input.parentLocationId ?? undefined),
  };
}

const bulkReader: LocationBulkReader<LocationBulkItemInput> = {
  locationId: (item) => item.locationId ?? undefined,
  fields: (item) => locationFields(item),
};

/** What `first` of `children` and `descendants` says: the rest are paged through `locations`. */
const FIRST_CHILDREN = firstDescription(RELATION_LIST, "more are not returned: page through them all with locations(filter: {parentLocationId})");
const FIRST_DESCENDANTS = firstDescription(RELATION_LIST, "the levels nearest this location come first, further ones are not returned");

/** Offsets as opaque cursors. */
const encodeOffset = (offset: number) => Buffer.from(`offset:${offset}`).toString("base64url");
function decodeOffset(cursor: string): number {
  const match = /^offset:(\d+)$/.exec(Buffer.from(cursor, "base64url").toString());
  if (!match) throw badInput(`'${cursor}' is not a valid cursor.`);
  return Number(match[1]);
}

@Resolver(() => LocationType)
export class LocationResolver {
  @Query(() => LocationConnectionType, { complexity: ({ args, childComplexity }) => 1 + Math.min(args.first ?? 20, 5000) * childComplexity })
  async locations(
    @Arg("domain", () => String) domain: string,
    @Arg("filter", () => LocationFilterInput, { nullable: true }) filter: LocationFilterInput | null,
    @Arg("orderBy", () => String, { nullable: true, description: "last_modified or -last_modified" }) orderBy: string | null,
    @Arg("first", () => Int, { nullable: true, defaultValue: 20 }) first: number,
    @Arg("after", () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationConnectionType> {
    if (first < 1 || first > 5000) throw badInput("'first' must be between 1 and 5000.");
    const offset = after ? decodeOffset(after) : 0;
    const scope = await ctx.loaders.locations.reads(domain);
    // an empty orderBy is the default order, as it always was; refused before the dates, as in REST
    const order = locationOrder(orderBy || undefined);
    const page = await scope.list({
      order,
      filter: {
        siteCode: filter?.siteCode ?? undefined,
        name: filter?.name ?? undefined,
        typeCode: filter?.locationTypeCode ?? undefined,
        parentId: filter?.parentLocationId ?? undefined,
        modified: modifiedBounds(filter?.lastModified ?? {}),
      },
      limit: first,
      offset,
    });
    const next = offset + page.records.length < page.total ? encodeOffset(offset + page.records.length) : null;
    return { totalCount: page.total, nodes: page.records.map(toNode), pageInfo: { hasNextPage: next !== null, endCursor: next } };
  }

  @Query(() => LocationType, { nullable: true })
  async location(
    @Arg("domain", () => String) domain: string,
    @Arg("locationId", () => ID) locationId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode | null> {
    await ctx.loaders.locations.reads(domain);
    const found = await ctx.loaders.locations.location(domain, locationId);
    return found ? toNode(found) : null;
  }

  @Query(() => LocationType, { nullable: true })
  async locationBySiteCode(
    @Arg("domain", () => String) domain: string,
    @Arg("siteCode", () => String) siteCode: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode | null> {
    const found = await (await ctx.loaders.locations.reads(domain)).bySiteCode(siteCode);
    return found ? toNode(found) : null;
  }

  @Mutation(() => LocationType)
  async createLocation(
    @Arg("domain", () => String) domain: string,
    @Arg("input", () => LocationInput) input: LocationInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode> {
    const scope = await ctx.services.locations.in(ctx.principal, domain, "write");
    return toNode(await scope.create(locationFields(input)));
  }

  @Mutation(() => LocationType)
  async updateLocation(
    @Arg("domain", () => String) domain: string,
    @Arg("locationId", () => ID) locationId: string,
    @Arg("input", () => LocationInput) input: LocationInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode> {
    const scope = await ctx.services.locations.in(ctx.principal, domain, "write");
    return toNode(await scope.update(locationId, locationFields(input)));
  }

  @Mutation(() => [ID], { description: "creates and updates up to 100 locations, all or nothing; ids in order" })
  async bulkLocations(
    @Arg("domain", () => String) domain: string,
    @Arg("items", () => [LocationBulkItemInput]) items: LocationBulkItemInput[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<string[]> {
    return (await ctx.services.locations.in(ctx.principal, domain, "write")).bulk(items, bulkReader);
  }

  @FieldResolver(() => LocationType, { nullable: true })
  async parent(@Root() l: LocationNode, @Ctx() ctx: GraphQLContext): Promise<LocationNode | null> {
    if (!l.parentLocationId) return null;
    const parent = await ctx.loaders.locations.location(l.domain, l.parentLocationId);
    return parent ? toNode(parent) : null;
  }

  @FieldResolver(() => [LocationType], { description: "by name", complexity: boundedListCost(RELATION_LIST) })
  async children(
    @Root() l: LocationNode,
    @Arg("first", () => Int, { nullable: true, defaultValue: RELATION_LIST.defaultSize, description: FIRST_CHILDREN }) first: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode[]> {
    const size = listSize(first, RELATION_LIST);
    return (await ctx.loaders.locations.children(l.domain, l.locationId, size)).map(toNode);
  }

  @FieldResolver(() => [LocationType], { description: "nearest first, up to the root", complexity: ({ childComplexity }) => 5 * childComplexity })
  async ancestors(@Root() l: LocationNode, @Ctx() ctx: GraphQLContext): Promise<LocationNode[]> {
    return (await ctx.loaders.locations.ancestors(l.domain, l.locationId)).map(toNode);
  }

  @FieldResolver(() => [LocationType], {
    description: "breadth first, to `depth` levels (all when omitted)",
    complexity: boundedListCost(RELATION_LIST),
  })
  async descendants(
    @Root() l: LocationNode,
    @Arg("depth", () => Int, { nullable: true }) depth: number | null,
    @Arg("first", () => Int, { nullable: true, defaultValue: RELATION_LIST.defaultSize, description: FIRST_DESCENDANTS }) first: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode[]> {
    if (depth !== null && depth < 1) throw badInput("'depth' must be at least 1.");
    const size = listSize(first, RELATION_LIST);
    return (await ctx.loaders.locations.descendants(l.domain, l.locationId, depth, size)).map(toNode);
  }

  @FieldResolver(() => LocationTypeType)
  async locationType(@Root() l: LocationNode, @Ctx() ctx: GraphQLContext): Promise<LocationTypeType> {
    return toLocationType((await ctx.loaders.locations.type(l.domain, l.typeId))!);
  }
}
