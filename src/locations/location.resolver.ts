import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { badInput } from "../errors.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import { RELATION_LIST, boundedListCost, firstDescription, listSize } from "../graphql/list-bounds.ts";
import { globalId, type NodeFetcher, type NodeTypeName } from "../graphql/node.ts";
import { connectionCost, type ConnectionBound, type ConnectionValue } from "../graphql/connection.ts";
import { offsetConnection, type PositionedList } from "../graphql/offset-connection.ts";
import { LocationTypeType, toLocationType } from "./location-type.types.ts";
import type { LocationBulkReader, LocationFields, LocationFilter, LocationRecord } from "./location.model.ts";
import { MAX_LOCATION_LIMIT, modifiedBounds } from "./location.rules.ts";
import {
  LocationBulkItemInput,
  LocationConnectionType,
  LocationFilterInput,
  LocationInput,
  LocationOrderBy,
  LocationType,
} from "./location.types.ts";

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

/** A GraphQL filter as the service's: the date bounds checked (`Cannot parse datetime '…'`). */
function locationFilter(filter: LocationFilterInput | null): LocationFilter {
  return {
    siteCode: filter?.siteCode ?? undefined,
    name: filter?.name ?? undefined,
    typeCode: filter?.locationTypeCode ?? undefined,
    parentId: filter?.parentLocationId ?? undefined,
    modified: modifiedBounds(filter?.lastModified ?? {}),
  };
}

const bulkReader: LocationBulkReader<LocationBulkItemInput> = {
  locationId: (item) => item.locationId ?? undefined,
  fields: (item) => locationFields(item),
};

/** What `first` of `children` and `descendants` says: the rest are paged through `locations`. */
const FIRST_CHILDREN = firstDescription(RELATION_LIST, "more are not returned: page through them all with locations(filter: {parentLocationId})");
const FIRST_DESCENDANTS = firstDescription(RELATION_LIST, "the levels nearest this location come first, further ones are not returned");

/** The bounds of a page of `locations`: the REST list's default and maximum `limit`. */
const LOCATION_PAGE: ConnectionBound = { defaultSize: 20, maxSize: MAX_LOCATION_LIMIT };

@Resolver(() => LocationType)
export class LocationResolver {
  @Query(() => LocationConnectionType, {
    description: "The domain's locations the filter matches, a page at a time (the REST location list). Needs `VIEW_LOCATIONS` or `EDIT_LOCATIONS`.",
    complexity: connectionCost(LOCATION_PAGE),
  })
  async locations(
    @Arg("domain", () => String, { description: "The domain to list." }) domain: string,
    @Arg("filter", () => LocationFilterInput, { nullable: true, description: "Which locations to list; all when left out." })
    filter: LocationFilterInput | null,
    @Arg("orderBy", () => LocationOrderBy, { nullable: true, defaultValue: LocationOrderBy.CREATED_ASC, description: "The list's order." })
    orderBy: LocationOrderBy,
    @Arg("first", () => Int, {
      nullable: true,
      description: `The first this many after \`after\` (0 to ${MAX_LOCATION_LIMIT}; 20 when neither \`first\` nor \`last\` is given; not with \`last\`).`,
    })
    first: number | null,
    @Arg("after", () => String, {
      nullable: true,
      description: "Start right after the edge with this cursor (from the same domain, filter and order).",
    })
    after: string | null,
    @Arg("last", () => Int, { nullable: true, description: `The last this many before \`before\` (0 to ${MAX_LOCATION_LIMIT}; not with \`first\`).` })
    last: number | null,
    @Arg("before", () => String, {
      nullable: true,
      description: "End right before the edge with this cursor (from the same domain, filter and order).",
    })
    before: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConnectionValue<LocationNode>> {
    const scope = await ctx.loaders.locations.reads(domain);
    const query = { filter: locationFilter(filter), order: orderBy };
    const list: PositionedList<LocationRecord> = {
      slice: async (offset, limit) => {
        const page = await scope.list({ ...query, limit, offset });
        return { rows: page.records, total: page.total };
      },
      count: () => scope.count(query.filter),
    };
    return offsetConnection({ first, after, last, before }, LOCATION_PAGE, [scope.domain.id, query], list, toNode);
  }

  @Query(() => LocationType, {
    nullable: true,
    description:
      "One location by its `locationId` (the REST detail), or null when the domain has none with it. Needs `VIEW_LOCATIONS` or `EDIT_LOCATIONS`.",
  })
  async location(
    @Arg("domain", () => String, { description: "The domain the location belongs to." }) domain: string,
    @Arg("locationId", () => ID, { description: "The location's `locationId` (the REST `location_id`)." }) locationId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode | null> {
    await ctx.loaders.locations.reads(domain);
    const found = await ctx.loaders.locations.location(domain, locationId);
    return found ? toNode(found) : null;
  }

  @Query(() => LocationType, {
    nullable: true,
    description: "One location by its site code, in any case, or null when the domain has none with it. Needs `VIEW_LOCATIONS` or `EDIT_LOCATIONS`.",
  })
  async locationBySiteCode(
    @Arg("domain", () => String, { description: "The domain the location belongs to." }) domain: string,
    @Arg("siteCode", () => String, { description: "The location's site code (compared case-insensitively)." }) siteCode: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode | null> {
    const found = await (await ctx.loaders.locations.reads(domain)).bySiteCode(siteCode);
    return found ? toNode(found) : null;
  }

  @Mutation(() => LocationType, {
    description: "Creates a location with the REST create's rules and messages (`name` and `locationTypeCode` required). Needs `EDIT_LOCATIONS`.",
  })
  async createLocation(
    @Arg("domain", () => String, { description: "The domain to create the location in." }) domain: string,
    @Arg("input", () => LocationInput, { description: "The new location's fields." }) input: LocationInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode> {
    const scope = await ctx.services.locations.in(ctx.principal, domain, "write");
    return toNode(await scope.create(locationFields(input)));
  }

  @Mutation(() => LocationType, {
    description: "Changes the given fields of a location (the REST `PUT`); what is left out stays. Needs `EDIT_LOCATIONS`.",
  })
  async updateLocation(
    @Arg("domain", () => String, { description: "The domain the location belongs to." }) domain: string,
    @Arg("locationId", () => ID, { description: "The location to change (its `locationId`)." }) locationId: string,
    @Arg("input", () => LocationInput, { description: "The fields to change." }) input: LocationInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode> {
    const scope = await ctx.services.locations.in(ctx.principal, domain, "write");
    return toNode(await scope.update(locationId, locationFields(input)));
  }

  @Mutation(() => [ID], {
    description:
      "Creates and updates up to 100 locations, all or nothing (the REST bulk `PATCH`); returns their `locationId`s in the items' order. Needs `EDIT_LOCATIONS`.",
  })
  async bulkLocations(
    @Arg("domain", () => String, { description: "The domain to write in." }) domain: string,
    @Arg("items", () => [LocationBulkItemInput], { description: "The locations to create (no `locationId`) or update (with one), at most 100." })
    items: LocationBulkItemInput[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<string[]> {
    return (await ctx.services.locations.in(ctx.principal, domain, "write")).bulk(items, bulkReader);
  }

  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() l: LocationNode): string {
    return globalId("Location", l.domain, l.locationId);
  }

  @FieldResolver(() => LocationType, { nullable: true, description: "The parent location; null for a root." })
  async parent(@Root() l: LocationNode, @Ctx() ctx: GraphQLContext): Promise<LocationNode | null> {
    if (!l.parentLocationId) return null;
    const parent = await ctx.loaders.locations.location(l.domain, l.parentLocationId);
    return parent ? toNode(parent) : null;
  }

  @FieldResolver(() => [LocationType], { description: "The location's children, by name.", complexity: boundedListCost(RELATION_LIST) })
  async children(
    @Root() l: LocationNode,
    @Arg("first", () => Int, { nullable: true, defaultValue: RELATION_LIST.defaultSize, description: FIRST_CHILDREN }) first: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode[]> {
    const size = listSize(first, RELATION_LIST);
    return (await ctx.loaders.locations.children(l.domain, l.locationId, size)).map(toNode);
  }

  @FieldResolver(() => [LocationType], {
    description: "The location's ancestors, nearest first, up to the root.",
    complexity: ({ childComplexity }) => 5 * childComplexity,
  })
  async ancestors(@Root() l: LocationNode, @Ctx() ctx: GraphQLContext): Promise<LocationNode[]> {
    return (await ctx.loaders.locations.ancestors(l.domain, l.locationId)).map(toNode);
  }

  @FieldResolver(() => [LocationType], {
    description: "The location's descendants, breadth first (children, then grandchildren, …), to `depth` levels.",
    complexity: boundedListCost(RELATION_LIST),
  })
  async descendants(
    @Root() l: LocationNode,
    @Arg("depth", () => Int, { nullable: true, description: "How many levels down to go (1: the children); all levels when left out." }) depth:
      | number
      | null,
    @Arg("first", () => Int, { nullable: true, defaultValue: RELATION_LIST.defaultSize, description: FIRST_DESCENDANTS }) first: number,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LocationNode[]> {
    if (depth !== null && depth < 1) throw badInput("'depth' must be at least 1.");
    const size = listSize(first, RELATION_LIST);
    return (await ctx.loaders.locations.descendants(l.domain, l.locationId, depth, size)).map(toNode);
  }

  @FieldResolver(() => LocationTypeType, { description: "The location's type." })
  async locationType(@Root() l: LocationNode, @Ctx() ctx: GraphQLContext): Promise<LocationTypeType> {
    return toLocationType((await ctx.loaders.locations.type(l.domain, l.typeId))!);
  }
}

/** Locations and location types for `Query.node`: read through the caller's location read scope of the id's domain. */
export const LOCATION_NODES: Partial<Record<NodeTypeName, NodeFetcher<GraphQLContext>>> = {
  Location: async (ctx, { domain, key }) => {
    const record = await ctx.loaders.locations.location(domain, key);
    return record && toNode(record);
  },
  LocationType: async (ctx, { domain, key }) => {
    const record = await ctx.loaders.locations.type(domain, key);
    return record && toLocationType(record);
  },
};
