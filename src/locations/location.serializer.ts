import { naiveDate } from "../util/dates.ts";
import type { LocationRecord } from "./location.model.ts";

/** CONTRACT §3 serialization: exactly these keys in this order. */
export function serializeLocation(l: LocationRecord) {
  return {
    domain: l.domainName,
    last_modified: naiveDate(l.lastModified),
    latitude: l.latitude,
    location_data: l.locationData,
    location_id: l.id,
    location_type_code: l.typeCode,
    location_type_name: l.typeName,
    longitude: l.longitude,
    name: l.name,
    parent_location_id: l.parentId,
    site_code: l.siteCode,
  };
}

export type SerializedLocation = ReturnType<typeof serializeLocation>;
