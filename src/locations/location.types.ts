import { JSONObjectScalar } from "../graphql/scalars.ts";
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { DateRangeInput } from "../graphql/date-range.types.ts";

/** GraphQL shapes of the Location API; the resolver maps the inputs into the service's typed commands. */

@ObjectType("Location")
export class LocationType {
  @Field(() => ID, { description: "location_id" })
  locationId!: string;

  @Field(() => String)
  domain!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  siteCode!: string;

  @Field(() => String, { nullable: true, description: "a decimal string" })
  latitude!: string | null;

  @Field(() => String, { nullable: true, description: "a decimal string" })
  longitude!: string | null;

  @Field(() => JSONObjectScalar)
  locationData!: Record<string, string>;

  @Field(() => Date)
  lastModified!: Date;

  @Field(() => String)
  locationTypeCode!: string;

  @Field(() => String)
  locationTypeName!: string;

  @Field(() => String, { nullable: true })
  parentLocationId!: string | null;
}

@ObjectType("LocationPageInfo")
export class LocationPageInfoType {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

@ObjectType("LocationConnection")
export class LocationConnectionType {
  @Field(() => Int)
  totalCount!: number;

  @Field(() => [LocationType])
  nodes!: LocationType[];

  @Field(() => LocationPageInfoType)
  pageInfo!: LocationPageInfoType;
}

@InputType("LocationFilter", { description: "the REST list filters" })
export class LocationFilterInput {
  @Field(() => String, { nullable: true })
  siteCode?: string | null;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  locationTypeCode?: string | null;

  @Field(() => String, { nullable: true })
  parentLocationId?: string | null;

  @Field(() => DateRangeInput, { nullable: true })
  lastModified?: DateRangeInput | null;
}

@InputType("LocationInput", { description: 'a location body as in REST; parentLocationId "" makes a root' })
export class LocationInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  locationTypeCode?: string | null;

  @Field(() => String, { nullable: true })
  siteCode?: string | null;

  @Field(() => String, { nullable: true })
  latitude?: string | null;

  @Field(() => String, { nullable: true })
  longitude?: string | null;

  @Field(() => JSONObjectScalar, { nullable: true })
  locationData?: Record<string, unknown> | null;

  @Field(() => String, { nullable: true })
  parentLocationId?: string | null;
}

@InputType("LocationBulkItem", { description: "with locationId: an update; without: a create" })
export class LocationBulkItemInput extends LocationInput {
  @Field(() => ID, { nullable: true })
  locationId?: string | null;
}
