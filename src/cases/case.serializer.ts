import { caseDate } from "../util/dates.ts";
import type { CaseRecord } from "./case.record.ts";

/** The REST form of a case (CONTRACT §2 "Case serialization"), built by the REST adapter. */

export interface SerializedCase {
  domain: string;
  case_id: string;
  case_type: string;
  case_name: string;
  external_id: string | null;
  owner_id: string;
  date_opened: string;
  last_modified: string;
  server_last_modified: string;
  indexed_on: string;
  closed: boolean;
  date_closed: string | null;
  properties: Record<string, string>;
  indices: Record<string, { case_id: string; case_type: string; relationship: string }>;
}

function sortedKeys<T>(object: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(object).sort()) out[key] = object[key];
  return out;
}

/** CONTRACT §2 "Case serialization": exactly these keys in exactly this order. */
export function serializeCase(c: CaseRecord): SerializedCase {
  const indices: SerializedCase["indices"] = {};
  for (const index of [...c.indices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    indices[index.name] = {
      case_id: index.referencedId,
      case_type: index.referencedType,
      relationship: index.relationship,
    };
  }
  return {
    domain: c.domainName,
    case_id: c.id,
    case_type: c.caseType,
    case_name: c.caseName,
    external_id: c.externalId,
    owner_id: c.ownerId,
    date_opened: caseDate(c.dateOpened),
    last_modified: caseDate(c.lastModified),
    server_last_modified: caseDate(c.serverLastModified),
    indexed_on: caseDate(c.indexedOn),
    closed: c.closed,
    date_closed: c.dateClosed ? caseDate(c.dateClosed) : null,
    properties: sortedKeys(c.properties),
    indices,
  };
}
