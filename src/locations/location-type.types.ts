import { Field, ID, InputType, ObjectType } from "type-graphql";
import type { LocationTypeRecord } from "./location-type.repository.ts";

@ObjectType("LocationType", { description: "A kind of location; a type with no parent makes root locations." })
export class LocationTypeType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  domain!: string;

  @Field(() => String)
  code!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true })
  parentCode!: string | null;
}

@InputType("LocationTypeInput")
export class LocationTypeInput {
  @Field(() => String)
  code!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true })
  parentCode?: string | null;
}

export const toLocationType = (record: LocationTypeRecord): LocationTypeType => ({
  id: record.id,
  domain: record.domainName,
  code: record.code,
  name: record.name,
  parentCode: record.parentCode,
});
