/** A case as the services read and write it (the domain value both faces shape): with its indices. */
export interface CaseRecord {
  id: string;
  domainName: string;
  caseType: string;
  caseName: string;
  externalId: string | null;
  ownerId: string;
  dateOpened: Date;
  lastModified: Date;
  serverLastModified: Date;
  indexedOn: Date;
  closed: boolean;
  dateClosed: Date | null;
  properties: Record<string, string>;
  indices: CaseIndexRecord[];
}

export interface CaseIndexRecord {
  name: string;
  referencedId: string;
  referencedType: string;
  relationship: string;
}
