/**
 * The values of the Location feature: the record every read returns, and the typed commands its
 * service takes. Each face turns its own grammar into these (REST: `location.request.rest.ts`;
 * GraphQL: `location.resolver.ts`) and its wire format out of the records.
 */

/** A location as read, with its type. */
export interface LocationRecord {
  id: string;
  domainName: string;
  name: string;
  siteCode: string;
  latitude: string | null;
  longitude: string | null;
  locationData: Record<string, string>;
  parentId: string | null;
  lastModified: Date;
  typeId: string;
  typeCode: string;
  typeName: string;
}

/** What a list matches: each given value exactly (a site code in any case), last_modified within its bounds. */
export interface LocationFilter {
  siteCode?: string;
  name?: string;
  typeCode?: string;
  parentId?: string;
  modified: { op: ">" | ">=" | "<" | "<="; at: string }[];
}

/** The orders of a location list: REST's `order_by` values (the first three), and GraphQL's by name and by site code. */
export type LocationOrder = "default" | "last_modified" | "-last_modified" | "name" | "-name" | "site_code" | "-site_code";

/**
 * A list query. Its order and date bounds are made by the rules (`locationOrder`, `modifiedBounds`
 * in `location.rules.ts`), which own their messages; `limit` is 1 to MAX_LOCATION_LIMIT.
 */
export interface LocationQuery {
  filter: LocationFilter;
  order: LocationOrder;
  limit: number;
  offset: number;
}

/** One page of a list: the records and how many match in all. */
export interface LocationPage {
  records: LocationRecord[];
  total: number;
}

/**
 * The fields of a create or an update (a patch: what is undefined stays). Unchecked: the service
 * applies the value rules (`checkFields`) to every face's input alike.
 */
export interface LocationFields {
  name?: string;
  typeCode?: string;
  siteCode?: string;
  /** a decimal string; null clears it */
  latitude?: string | null;
  /** a decimal string; null clears it */
  longitude?: string | null;
  /** an object of string values */
  locationData?: Record<string, unknown>;
  /** null makes the location a root */
  parentId?: string | null;
}

/**
 * How the service reads the items of a bulk write, each when its turn comes, so that the answer is
 * the first failure in request order (a face's own input mistakes included). An item with a
 * location id updates that location, one without creates a location.
 */
export interface LocationBulkReader<T> {
  /** the location the item updates; undefined when it creates one */
  locationId(item: T): string | undefined;
  fields(item: T, creating: boolean): LocationFields;
}
