import { Arg, Ctx, Mutation, Query, Resolver } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.ts";
import { LocationTypeInput, LocationTypeType } from "./location-type.types.ts";

type Row = { id: string; code: string; name: string; domain: { name: string }; parent: { code: string } | null };

export const toLocationType = (row: Row): LocationTypeType => ({
  id: row.id,
  domain: row.domain.name,
  code: row.code,
  name: row.name,
  parentCode: row.parent?.code ?? null,
});

@Resolver(() => LocationTypeType)
export class LocationTypeResolver {
  @Query(() => [LocationTypeType])
  async locationTypes(
    @Arg("domain", () => String) domain: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<LocationTypeType[]> {
    return (await services.locationTypes.list(principal, domain)).map(toLocationType);
  }

  @Mutation(() => LocationTypeType, { description: "superuser only" })
  async createLocationType(
    @Arg("domain", () => String) domain: string,
    @Arg("input", () => LocationTypeInput) input: LocationTypeInput,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<LocationTypeType> {
    return toLocationType(await services.locationTypes.create(principal, domain, input));
  }

  @Mutation(() => LocationTypeType, { description: "superuser only; parentCode \"\" makes a root type" })
  async updateLocationType(
    @Arg("domain", () => String) domain: string,
    @Arg("code", () => String) code: string,
    @Arg("name", () => String, { nullable: true }) name: string | null,
    @Arg("parentCode", () => String, { nullable: true }) parentCode: string | null,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<LocationTypeType> {
    return toLocationType(await services.locationTypes.update(principal, domain, code, { name, parentCode: parentCode ?? undefined }));
  }

  @Mutation(() => Boolean, { description: "superuser only; only a type no location or type uses" })
  deleteLocationType(
    @Arg("domain", () => String) domain: string,
    @Arg("code", () => String) code: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<boolean> {
    return services.locationTypes.delete(principal, domain, code);
  }
}
