import { Field, InputType, ObjectType } from "type-graphql";
import { NodeInterface } from "../graphql/node.ts";
import type { LocationTypeRecord } from "./location-type.repository.ts";

@ObjectType("LocationType", {
  implements: NodeInterface,
  description: "A kind of location in a domain (country, district, clinic …); a type with no parent type makes root locations.",
})
export class LocationTypeType {
  /** the type's row id: the key of its global id, not a GraphQL field */
  typeId!: string;

  @Field(() => String, { description: "The domain the type belongs to." })
  domain!: string;

  @Field(() => String, {
    description: "The type's code, unique in the domain: what locations name as `locationTypeCode` (REST `location_type_code`).",
  })
  code!: string;

  @Field(() => String, { description: "The type's display name (REST `location_type_name`)." })
  name!: string;

  @Field(() => String, { nullable: true, description: "The code of the parent type, whose locations may hold this type's; null for a root type." })
  parentCode!: string | null;
}

@InputType("LocationTypeInput", { description: "A new location type." })
export class LocationTypeInput {
  @Field(() => String, { description: "The code, unique in the domain: 1 to 100 letters, digits, `_` or `-`." })
  code!: string;

  @Field(() => String, { description: "The display name." })
  name!: string;

  @Field(() => String, {
    nullable: true,
    description: "The code of an existing type of the domain to be the parent type; left out or null for a root type.",
  })
  parentCode?: string | null;
}

export const toLocationType = (record: LocationTypeRecord): LocationTypeType => ({
  typeId: record.id,
  domain: record.domainName,
  code: record.code,
  name: record.name,
  parentCode: record.parentCode,
});
