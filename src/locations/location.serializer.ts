import { nullable, serialize, string, stringMap, type KeyTable, type Serialized } from "../openapi/schema.ts";
import { naiveDate } from "../util/dates.ts";
import type { LocationRecord } from "./location.model.ts";

/**
 * CONTRACT §3 serialization: exactly these keys in this order, each with its schema, from which
 * the OpenAPI document's `Location` is built (location.openapi.ts).
 */
export const LOCATION_KEYS = {
  domain: { schema: string("the project space"), of: (l: LocationRecord) => l.domainName },
  last_modified: {
    schema: string("ISO 8601 without timezone suffix (UTC)", { pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}$" }),
    of: (l: LocationRecord) => naiveDate(l.lastModified),
  },
  latitude: { schema: nullable(string("a decimal number")), of: (l: LocationRecord) => l.latitude },
  location_data: { schema: stringMap("custom data, name to string value"), of: (l: LocationRecord) => l.locationData },
  location_id: { schema: string("the location's id"), of: (l: LocationRecord) => l.id },
  location_type_code: { schema: string("the type's code"), of: (l: LocationRecord) => l.typeCode },
  location_type_name: { schema: string("the type's name"), of: (l: LocationRecord) => l.typeName },
  longitude: { schema: nullable(string("a decimal number")), of: (l: LocationRecord) => l.longitude },
  name: { schema: string("the name, unique among siblings"), of: (l: LocationRecord) => l.name },
  parent_location_id: { schema: nullable(string("the direct parent; null for a root")), of: (l: LocationRecord) => l.parentId },
  site_code: {
    schema: string("lowercase letters (any script), digits, `_` and `-`; unique in the domain", { pattern: "^[-_\\p{L}\\p{M}\\p{N}\\p{Pc}]+$" }),
    of: (l: LocationRecord) => l.siteCode,
  },
} satisfies KeyTable<LocationRecord>;

export type SerializedLocation = Serialized<typeof LOCATION_KEYS>;

export const serializeLocation = (l: LocationRecord): SerializedLocation => serialize(LOCATION_KEYS, l);
