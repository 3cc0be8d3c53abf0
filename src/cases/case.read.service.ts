import type { Principal } from "../auth/principal.ts";
import { authorize, type DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { badInput, notFound } from "../errors.ts";
import { requireJson } from "../util/json.ts";
import { CursorCodec } from "./case.cursor.ts";
import { selectFields, type FieldSelection } from "./case.fields.ts";
import { parseCaseQuery, parseSelectionOnly, type Params } from "./case.filters.ts";
import { CaseRepository } from "./case.repository.ts";
import { serializeCase, type CaseRecord } from "./case.serializer.ts";

/** Case reads of CONTRACT §2: list, single, external id, multi-id and bulk fetch. */

export interface ListResult {
  matching_records: number;
  cases: Record<string, unknown>[];
  /** the cursor of the next page, when more results exist */
  nextCursor?: string;
}

export interface BulkResult {
  matching_records: number;
  missing_records: number;
  cases: Record<string, unknown>[];
}

export interface BulkRequest {
  caseIds: string[];
  externalIds: string[];
}

export const MAX_BULK_IDS = 5000;

export interface BulkEntry {
  by: "case_id" | "external_id";
  id: string;
  record: CaseRecord | undefined;
}

export class CaseReadService {
  private readonly repository: CaseRepository;

  constructor(
    private readonly prisma: Prisma,
    private readonly cursors: CursorCodec,
  ) {
    this.repository = new CaseRepository(prisma);
  }

  private domain(principal: Principal, domainName: string) {
    return authorize(this.prisma, principal, domainName, "caseRead");
  }

  /** `params` are the request's query parameters in order; with `cursor`, the cursor's query wins. */
  async list(principal: Principal, domainName: string, params: Params): Promise<ListResult> {
    const page = await this.listRecords(principal, domainName, params);
    return {
      matching_records: page.total,
      cases: page.records.map((c) => selectFields(serializeCase(c), page.selection)),
      nextCursor: page.nextCursor,
    };
  }

  /** One page of case records: the list of REST and the connection of GraphQL. */
  async listRecords(principal: Principal, domainName: string, params: Params) {
    const domain = await this.domain(principal, domainName);
    const cursorParam = params.findLast(([key]) => key === "cursor");
    const state = cursorParam ? this.cursors.decode(cursorParam[1]) : { params, after: undefined };
    const queryParams = state.params.filter(([key]) => key !== "cursor");
    const after = state.after;
    const query = parseCaseQuery(queryParams);
    const page = await this.repository.page(domain, query, after);
    // the keyset at the column's full precision: a Date (milliseconds) would repeat the last case
    const nextCursor =
      page.hasMore && page.lastKey ? this.cursors.encode({ params: queryParams, after: page.lastKey }) : undefined;
    return { records: page.records, total: page.total, nextCursor, selection: query.selection };
  }

  async getRecord(principal: Principal, domainName: string, caseId: string): Promise<CaseRecord | undefined> {
    return this.recordById(await this.domain(principal, domainName), caseId);
  }

  async getRecordByExternalId(principal: Principal, domainName: string, externalId: string): Promise<CaseRecord | undefined> {
    return this.recordByExternalId(await this.domain(principal, domainName), externalId);
  }

  // REST reads: permission first (403), then the parameters (400), then the lookup (404).

  async get(principal: Principal, domainName: string, caseId: string, params: Params) {
    const domain = await this.domain(principal, domainName);
    const selection = parseSelectionOnly(params);
    const found = await this.recordById(domain, caseId);
    if (!found) throw notFound(`Case '${caseId}' not found`);
    return selectFields(serializeCase(found), selection);
  }

  async getByExternalId(principal: Principal, domainName: string, externalId: string, params: Params) {
    const domain = await this.domain(principal, domainName);
    const selection = parseSelectionOnly(params);
    const found = await this.recordByExternalId(domain, externalId);
    if (!found) throw notFound(`Case '${externalId}' not found`);
    return selectFields(serializeCase(found), selection);
  }

  /** `GET id1,id2,…`: the bulk-fetch envelope, never a 404. */
  async getMany(principal: Principal, domainName: string, caseIds: string[], params: Params): Promise<BulkResult> {
    const domain = await this.domain(principal, domainName);
    const selection = parseSelectionOnly(params);
    return envelope(await this.entries(domain, { caseIds, externalIds: [] }), selection);
  }

  async bulkFetch(principal: Principal, domainName: string, body: unknown, params: Params): Promise<BulkResult> {
    const domain = await this.domain(principal, domainName);
    const selection = parseSelectionOnly(params);
    const request = parseBulkRequest(requireJson(body));
    return envelope(await this.entries(domain, request), selection);
  }

  /** GraphQL's bulk fetch: one entry per requested id. */
  async fetchRecords(principal: Principal, domainName: string, request: BulkRequest): Promise<BulkEntry[]> {
    return this.entries(await this.domain(principal, domainName), request);
  }

  private async recordById(domain: DomainRef, caseId: string) {
    return (await this.repository.byIds(domain, [caseId])).get(caseId.toLowerCase());
  }

  private async recordByExternalId(domain: DomainRef, externalId: string) {
    return (await this.repository.byExternalIds(domain, [externalId])).get(externalId);
  }

  /** One entry per requested id in request order, case ids first, duplicates repeated. */
  private async entries(domain: DomainRef, request: BulkRequest): Promise<BulkEntry[]> {
    const [byId, byExternal] = await Promise.all([
      this.repository.byIds(domain, request.caseIds),
      this.repository.byExternalIds(domain, request.externalIds),
    ]);
    return [
      ...request.caseIds.map((id): BulkEntry => ({ by: "case_id", id, record: byId.get(id.toLowerCase()) })),
      ...request.externalIds.map((id): BulkEntry => ({ by: "external_id", id, record: byExternal.get(id) })),
    ];
  }
}

/** The bulk envelope: a missing id is a stub; field selection applies to found cases only. */
function envelope(entries: BulkEntry[], selection: FieldSelection): BulkResult {
  const cases = entries.map((e) => (e.record ? selectFields(serializeCase(e.record), selection) : { [e.by]: e.id, error: "not found" }));
  const missing = entries.filter((e) => !e.record).length;
  return { matching_records: entries.length - missing, missing_records: missing, cases };
}

function stringList(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw badInput(`'${key}' must be a list of strings`);
  }
  return value;
}

export function parseBulkRequest(body: unknown): BulkRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badInput("Payload must include 'case_ids' or 'external_ids' fields");
  }
  const record = body as Record<string, unknown>;
  const caseIds = stringList(record, "case_ids");
  const externalIds = stringList(record, "external_ids");
  if (!caseIds.length && !externalIds.length) throw badInput("Payload must include 'case_ids' or 'external_ids' fields");
  if (caseIds.length + externalIds.length > MAX_BULK_IDS) {
    throw badInput(`You cannot request more than ${MAX_BULK_IDS} cases per request.`);
  }
  return { caseIds, externalIds };
}

