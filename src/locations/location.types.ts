import { JSONObjectScalar } from "../graphql/scalars.ts";
import { Field, ID, InputType, ObjectType, registerEnumType } from "type-graphql";
import { DateRangeInput } from "../graphql/date-range.types.ts";
import { NodeInterface } from "../graphql/node.ts";
import { connectionTypes } from "../graphql/connection.ts";

/** GraphQL shapes of the Location API; the resolver maps the inputs into the service's typed commands. */

@ObjectType("Location", {
  implements: NodeInterface,
  description: "A place in a domain's location hierarchy (a country, a district, a clinic …): the REST Location API's location.",
})
export class LocationType {
  @Field(() => ID, { description: "The location's own id (a UUID): the REST `location_id`, which REST paths and `location(locationId)` take." })
  locationId!: string;

  @Field(() => String, { description: "The domain the location belongs to: the REST `domain`." })
  domain!: string;

  @Field(() => String, { description: "The location's name, unique among its siblings (at most 255 characters): the REST `name`." })
  name!: string;

  @Field(() => String, {
    description:
      "A short code unique in the domain, lowercase letters, digits, `_` and `-`; generated from the name when not given: the REST `site_code`.",
  })
  siteCode!: string;

  @Field(() => String, { nullable: true, description: 'The latitude as a decimal string (e.g. "-1.2921"), or null: the REST `latitude`.' })
  latitude!: string | null;

  @Field(() => String, { nullable: true, description: 'The longitude as a decimal string (e.g. "36.8219"), or null: the REST `longitude`.' })
  longitude!: string | null;

  @Field(() => JSONObjectScalar, { description: "Free custom data: an object whose values are all strings; the REST `location_data`." })
  locationData!: Record<string, string>;

  @Field(() => Date, { description: "When the location last changed (an ISO 8601 date-time in UTC): the REST `last_modified`." })
  lastModified!: Date;

  @Field(() => String, { description: "The code of the location's type: the REST `location_type_code`." })
  locationTypeCode!: string;

  @Field(() => String, { description: "The name of the location's type: the REST `location_type_name`." })
  locationTypeName!: string;

  @Field(() => String, { nullable: true, description: "The `locationId` of the parent location; null for a root: the REST `parent_location_id`." })
  parentLocationId!: string | null;
}

/** `LocationConnection` and `LocationEdge`: the pages of `Query.locations`. */
export const { ConnectionType: LocationConnectionType } = connectionTypes(LocationType, {
  type: "Location",
  items: "locations",
  totalCount: "How many locations the filter matches in all: the same on every page (the REST `meta.total_count`).",
});

/** The orders of a location list; the values are the service's `LocationOrder`s. */
export enum LocationOrderBy {
  CREATED_ASC = "default",
  LAST_MODIFIED_ASC = "last_modified",
  LAST_MODIFIED_DESC = "-last_modified",
  NAME_ASC = "name",
  NAME_DESC = "-name",
  SITE_CODE_ASC = "site_code",
  SITE_CODE_DESC = "-site_code",
}

registerEnumType(LocationOrderBy, {
  name: "LocationOrderBy",
  description:
    "The order of a location list (the first three are the REST `order_by`). The cursors hold positions in the list: a location created, deleted or moved by a write before a client's position while it pages shifts the rest by one, so one location may be seen twice or not at all on that pull.",
  valuesConfig: {
    CREATED_ASC: { description: "Oldest created first: the default (REST: no `order_by`)." },
    LAST_MODIFIED_ASC: {
      description:
        "Least recently modified first (REST: `order_by=last_modified`). A location updated while a client pages moves to the end: seen again later when already seen.",
    },
    LAST_MODIFIED_DESC: {
      description: "Most recently modified first (REST: `order_by=-last_modified`). A location updated while a client pages moves to the start.",
    },
    NAME_ASC: {
      description:
        "By name ascending (the database's collation), then by `locationId`. A location renamed while a client pages moves to its new place.",
    },
    NAME_DESC: {
      description: "By name descending, then by `locationId` descending. A location renamed while a client pages moves to its new place.",
    },
    SITE_CODE_ASC: {
      description: "By site code ascending (unique in the domain). A location whose site code changes while a client pages moves to its new place.",
    },
    SITE_CODE_DESC: { description: "By site code descending. A location whose site code changes while a client pages moves to its new place." },
  },
});

@InputType("LocationFilter", { description: "Which locations to list: the REST list filters; every given one must match." })
export class LocationFilterInput {
  @Field(() => String, { nullable: true, description: "Exactly this site code, in any case (REST `site_code`)." })
  siteCode?: string | null;

  @Field(() => String, { nullable: true, description: "Exactly this name, case-sensitive (REST `name`)." })
  name?: string | null;

  @Field(() => String, { nullable: true, description: "Locations of the type with this code (REST `location_type_code`)." })
  locationTypeCode?: string | null;

  @Field(() => String, { nullable: true, description: "The children of the location with this `locationId` (REST `parent_location_id`)." })
  parentLocationId?: string | null;

  @Field(() => DateRangeInput, {
    nullable: true,
    description: "`lastModified` within these bounds (REST `last_modified.gt/gte/lt/lte`): a date `YYYY-MM-DD` or an ISO 8601 date-time.",
  })
  lastModified?: DateRangeInput | null;
}

@InputType("LocationInput", {
  description: "The fields of a location to create or change (the REST body): on an update, what is left out stays as it is.",
})
export class LocationInput {
  @Field(() => String, {
    nullable: true,
    description: "The name, unique among its siblings, at most 255 characters; required to create (REST `name`).",
  })
  name?: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The code of the location's type, a valid child type of the parent's type; required to create (REST `location_type_code`).",
  })
  locationTypeCode?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      "Letters, digits, `_` and `-`, stored lowercased, unique in the domain; generated from the name when left out on create (REST `site_code`).",
  })
  siteCode?: string | null;

  @Field(() => String, { nullable: true, description: 'A decimal string such as "-1.2921" (REST `latitude`).' })
  latitude?: string | null;

  @Field(() => String, { nullable: true, description: 'A decimal string such as "36.8219" (REST `longitude`).' })
  longitude?: string | null;

  @Field(() => JSONObjectScalar, {
    nullable: true,
    description: "Custom data: an object whose values are all strings; replaces the old one (REST `location_data`).",
  })
  locationData?: Record<string, unknown> | null;

  @Field(() => String, {
    nullable: true,
    description: 'The parent\'s `locationId`, in the same domain; "" makes the location a root (REST `parent_location_id`).',
  })
  parentLocationId?: string | null;
}

@InputType("LocationBulkItem", { description: "One location of a bulk write: with `locationId` it updates that location, without it creates one." })
export class LocationBulkItemInput extends LocationInput {
  @Field(() => ID, { nullable: true, description: "The location to update (REST `location_id`); leave it out to create a location." })
  locationId?: string | null;
}
