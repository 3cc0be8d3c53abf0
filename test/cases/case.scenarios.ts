/**
 * Named scenario data for the case service tier (test/cases/case.service.test.ts): the queries and
 * writes that each contract rule refuses, with the DomainError it refuses them with, and the small
 * data set the reads run over. Each scenario is named after the rule it pins.
 */
import type { CaseQuery } from "../../src/cases/case.query.ts";
import { caseAction, type CaseItem, type WriteTarget } from "../../src/cases/case.actions.ts";
import type { CaseAction } from "../../src/cases/case.actions.ts";
import { badInput, type Refusal } from "../helpers/errors.ts";

const values = (n: number, prefix = "v") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** A list query with no filter and the default page size, changed by `change`. */
export function caseQuery(change: (query: CaseQuery) => void = () => {}): CaseQuery {
  const query: CaseQuery = { limit: 20, exact: {}, properties: new Map(), indices: new Map(), ranges: [] };
  change(query);
  return query;
}

const namedFilters = (properties: number, indices: number) => (q: CaseQuery) => {
  for (let i = 0; i < properties; i++) q.properties.set(`p${i}`, ["x"]);
  for (let i = 0; i < indices; i++) q.indices.set(`i${i}`, ["x"]);
};

export interface QueryScenario {
  query: CaseQuery;
  refused: Refusal;
}

/** CONTRACT §2 "List": a query each rule refuses, by rule. */
export const REFUSED_QUERIES: Record<string, QueryScenario> = {
  "limit 0 is not a valid value": { query: caseQuery((q) => (q.limit = 0)), refused: badInput("'0' is not a valid value for 'limit'") },
  "a fractional limit is not a valid value": {
    query: caseQuery((q) => (q.limit = 1.5)),
    refused: badInput("'1.5' is not a valid value for 'limit'"),
  },
  "at most 5000 cases per request": {
    query: caseQuery((q) => (q.limit = 5001)),
    refused: badInput("You cannot request more than 5000 cases per request."),
  },
  "a property filter needs a name": {
    query: caseQuery((q) => q.properties.set("", ["x"])),
    refused: badInput("'properties.' is not a valid parameter."),
  },
  "an index filter needs a name": {
    query: caseQuery((q) => q.indices.set("", ["x"])),
    refused: badInput("'indices.' is not a valid parameter."),
  },
  "at most 100 values of one exact filter": {
    query: caseQuery((q) => (q.exact.owner_id = values(101))),
    refused: badInput("You cannot give more than 100 values to one filter."),
  },
  "at most 100 values of closed": {
    query: caseQuery((q) => (q.closed = Array.from({ length: 101 }, (_, i) => i % 2 === 0))),
    refused: badInput("You cannot give more than 100 values to one filter."),
  },
  "at most 100 values of one property": {
    query: caseQuery((q) => q.properties.set("n", values(101))),
    refused: badInput("You cannot give more than 100 values to one filter."),
  },
  "at most 100 values of one date range": {
    query: caseQuery((q) => q.ranges.push({ field: "last_modified", op: "gte", values: values(101).map(() => "2024-01-01") })),
    refused: badInput("You cannot give more than 100 values to one filter."),
  },
  "at most 20 property and index filters": {
    query: caseQuery(namedFilters(11, 10)),
    refused: badInput("You cannot filter on more than 20 properties and indices per request."),
  },
  "a date range's value is a date or a datetime": {
    query: caseQuery((q) => q.ranges.push({ field: "date_opened", op: "lt", values: ["yesterday"] })),
    refused: badInput("Cannot parse datetime 'yesterday'"),
  },
  "a date that does not exist is not a date": {
    query: caseQuery((q) => q.ranges.push({ field: "indexed_on", op: "gt", values: ["2023-02-29"] })),
    refused: badInput("Cannot parse datetime '2023-02-29'"),
  },
  "a datetime's time is within the day": {
    query: caseQuery((q) => q.ranges.push({ field: "last_modified", op: "lte", values: ["2024-01-01T24:00:00"] })),
    refused: badInput("Cannot parse datetime '2024-01-01T24:00:00'"),
  },
  // the contract reports filter names, then sizes, then the page size, then dates
  "a nameless filter is answered before the filters' sizes": {
    query: caseQuery((q) => (q.properties.set("", ["x"]), (q.exact.owner_id = values(101)))),
    refused: badInput("'properties.' is not a valid parameter."),
  },
  "the filters' sizes are answered before the page size": {
    query: caseQuery((q) => (namedFilters(21, 0)(q), (q.limit = 5001))),
    refused: badInput("You cannot filter on more than 20 properties and indices per request."),
  },
  "the page size is answered before a bad date": {
    query: caseQuery((q) => ((q.limit = 0), q.ranges.push({ field: "date_closed", op: "gte", values: ["x"] }))),
    refused: badInput("'0' is not a valid value for 'limit'"),
  },
};

/** Queries at each bound, which the rules let through. */
export const ACCEPTED_QUERIES: Record<string, CaseQuery> = {
  "5000 cases per request": caseQuery((q) => (q.limit = 5000)),
  "100 values of one filter": caseQuery((q) => (q.exact.case_type = values(100))),
  "20 property and index filters": caseQuery(namedFilters(10, 10)),
  "a day, a naive datetime and one with an offset": caseQuery((q) =>
    q.ranges.push({ field: "last_modified", op: "gte", values: ["2024-01-01", "2024-01-01T10:00:00", "2024-01-01T10:00:00.123456+05:30"] }),
  ),
};

/** A create of one case, as both faces make it (the rules of case.actions.ts). */
export function create(fields: Partial<CaseItem> = {}): CaseAction {
  return caseAction({ caseType: "patient", caseName: "Ana", ownerId: "owner-1", ...fields }, { kind: "create" });
}

/** A row of a list request (REST's list body, GraphQL's bulkWriteCases). */
export function bulkRow(item: CaseItem): CaseAction {
  return caseAction(item, { kind: "bulk" });
}

export function action(item: CaseItem, target: WriteTarget): CaseAction {
  return caseAction(item, target);
}

/** An index to a parent case of the same request, by its temporary id. */
export const parentIndex = (temporaryId: string) => ({ parent: { temporary_id: temporaryId, case_type: "household", relationship: "child" } });

/** The household of the reads: a parent, two children indexed to it, one closed, one with an external id. */
export const HOUSEHOLD: CaseAction[] = [
  create({ caseType: "household", caseName: "The Silvas", temporaryId: "home", properties: { village: "Alto" } }),
  create({ caseName: "Ana", externalId: "ana-1", properties: { age: "34" }, indices: parentIndex("home") }),
  create({ caseName: "Rui", properties: { age: "9" }, indices: parentIndex("home"), close: true }),
];
