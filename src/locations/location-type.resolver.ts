import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.ts";
import { globalId } from "../graphql/node.ts";
import { LocationTypeInput, LocationTypeType, toLocationType } from "./location-type.types.ts";

/**
 * The location types' GraphQL face, beside the REST `location_type/v1/` paths: each field opens the
 * caller's scope of the domain, which answers 401/403/404 before anything is read.
 */

@Resolver(() => LocationTypeType)
export class LocationTypeResolver {
  @Query(() => [LocationTypeType], {
    description: "The domain's location types, oldest first (the REST `location_type/v1/`). Needs `VIEW_LOCATIONS` or `EDIT_LOCATIONS`.",
  })
  async locationTypes(
    @Arg("domain", () => String, { description: "The domain whose types to list." }) domain: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<LocationTypeType[]> {
    return (await (await services.locationTypes.in(principal, domain)).list()).map(toLocationType);
  }

  @Mutation(() => LocationTypeType, { description: "Creates a location type. Superuser only." })
  async createLocationType(
    @Arg("domain", () => String, { description: "The domain to create the type in." }) domain: string,
    @Arg("input", () => LocationTypeInput, { description: "The new type." }) input: LocationTypeInput,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<LocationTypeType> {
    const types = await services.locationTypes.in(principal, domain, "admin");
    return toLocationType(await types.create({ code: input.code, name: input.name, parentCode: input.parentCode }));
  }

  @Mutation(() => LocationTypeType, {
    description: "Renames a location type or gives it another parent type (not while locations have the type). Superuser only.",
  })
  async updateLocationType(
    @Arg("domain", () => String, { description: "The domain the type belongs to." }) domain: string,
    @Arg("code", () => String, { description: "The code of the type to change (codes do not change)." }) code: string,
    @Arg("name", () => String, { nullable: true, description: "The new display name; left out or null keeps it." }) name: string | null,
    @Arg("parentCode", () => String, {
      nullable: true,
      description: 'The code of the new parent type; "" makes it a root type; left out or null keeps the parent.',
    })
    parentCode: string | null,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<LocationTypeType> {
    const types = await services.locationTypes.in(principal, domain, "admin");
    return toLocationType(await types.update(code, { name, parentCode: parentCode ?? undefined }));
  }

  @Mutation(() => Boolean, { description: "Deletes a location type that no location and no other type uses; true once deleted. Superuser only." })
  async deleteLocationType(
    @Arg("domain", () => String, { description: "The domain the type belongs to." }) domain: string,
    @Arg("code", () => String, { description: "The code of the type to delete." }) code: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<boolean> {
    return (await services.locationTypes.in(principal, domain, "admin")).delete(code);
  }

  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() type: LocationTypeType): string {
    return globalId("LocationType", type.domain, type.typeId);
  }
}
