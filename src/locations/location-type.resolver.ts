import { Arg, Ctx, Mutation, Query, Resolver } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.ts";
import { LocationTypeInput, LocationTypeType, toLocationType } from "./location-type.types.ts";

@Resolver(() => LocationTypeType)
export class LocationTypeResolver {
  @Query(() => [LocationTypeType])
  async locationTypes(@Arg("domain", () => String) domain: string, @Ctx() { principal, services }: GraphQLContext): Promise<LocationTypeType[]> {
    return (await (await services.locationTypes.in(principal, domain)).list()).map(toLocationType);
  }

  @Mutation(() => LocationTypeType, { description: "superuser only" })
  async createLocationType(
    @Arg("domain", () => String) domain: string,
    @Arg("input", () => LocationTypeInput) input: LocationTypeInput,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<LocationTypeType> {
    const types = await services.locationTypes.in(principal, domain, "admin");
    return toLocationType(await types.create({ code: input.code, name: input.name, parentCode: input.parentCode }));
  }

  @Mutation(() => LocationTypeType, { description: 'superuser only; parentCode "" makes a root type' })
  async updateLocationType(
    @Arg("domain", () => String) domain: string,
    @Arg("code", () => String) code: string,
    @Arg("name", () => String, { nullable: true }) name: string | null,
    @Arg("parentCode", () => String, { nullable: true }) parentCode: string | null,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<LocationTypeType> {
    const types = await services.locationTypes.in(principal, domain, "admin");
    return toLocationType(await types.update(code, { name, parentCode: parentCode ?? undefined }));
  }

  @Mutation(() => Boolean, { description: "superuser only; only a type no location or type uses" })
  async deleteLocationType(
    @Arg("domain", () => String) domain: string,
    @Arg("code", () => String) code: string,
    @Ctx() { principal, services }: GraphQLContext,
  ): Promise<boolean> {
    return (await services.locationTypes.in(principal, domain, "admin")).delete(code);
  }
}
