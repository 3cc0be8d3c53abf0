import type { Principal } from "../auth/principal.ts";
import { authorize, type DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { badInput } from "../errors.ts";
import type { CursorCodec } from "./case.cursor.ts";
import { checkFilter, checkQuery, type CaseQuery, type CaseQueryFilter, type CaseSlice, type Keyset } from "./case.query.ts";
import type { CaseRecord } from "./case.record.ts";
import { CaseRepository, type KeyedCase } from "./case.repository.ts";
import { serializeCase } from "./case.serializer.ts";
import { FormRepository, type FormView } from "./form.repository.ts";

/**
 * Case reads of CONTRACT §2 (list, single, external id, multi-id and bulk fetch) and the forms of
 * case writes. `in()` checks the permission first (401/403/404 before any input is looked at);
 * every read then runs in the domain of that scope and returns records, which each face shapes.
 */

export const MAX_BULK_IDS = 5000;

export interface BulkRequest {
  caseIds: string[];
  externalIds: string[];
}

/** One requested id of a bulk read: found or not. */
export interface BulkEntry {
  by: "case_id" | "external_id";
  id: string;
  record: CaseRecord | undefined;
}

interface CasePage {
  records: CaseRecord[];
  /** how many cases match the query from this page on */
  total: number;
  /** where the next page starts, when more cases match */
  next?: Keyset;
}

/** A page of the list as JSON text: see `listJson`. */
interface CaseJsonPage {
  /** the JSON array of the page's cases in their REST form */
  cases: string;
  total: number;
  next?: Keyset;
}

/** A page of records as the page of their REST JSON texts. */
function toJsonPage<P extends { records: CaseRecord[] }>(page: P): Omit<P, "records"> & { records: string[] } {
  return { ...page, records: page.records.map((c) => JSON.stringify(serializeCase(c))) };
}

/** What a slice read: see `slice`. */
interface CaseSliceRead {
  read: KeyedCase[];
  total: number;
  outside: { beforeAfter: boolean; afterBefore: boolean };
}

export const noIdsRequested = () => badInput("Payload must include 'case_ids' or 'external_ids' fields");

/** The rules of a bulk fetch: some ids, and at most MAX_BULK_IDS. */
export function checkBulkRequest(request: BulkRequest): void {
  if (!request.caseIds.length && !request.externalIds.length) throw noIdsRequested();
  if (request.caseIds.length + request.externalIds.length > MAX_BULK_IDS) {
    throw badInput(`You cannot request more than ${MAX_BULK_IDS} cases per request.`);
  }
}

/**
 * The bulk fetch's answer (REST and GraphQL): one entry per requested id, case ids first, in request
 * order, duplicates repeated; `byCaseId`/`byExternalId` hold what each id found, in the same order.
 */
export function bulkEntries(
  request: BulkRequest,
  byCaseId: readonly (CaseRecord | undefined)[],
  byExternalId: readonly (CaseRecord | undefined)[],
): BulkEntry[] {
  return [
    ...request.caseIds.map((id, i): BulkEntry => ({ by: "case_id", id, record: byCaseId[i] })),
    ...request.externalIds.map((id, i): BulkEntry => ({ by: "external_id", id, record: byExternalId[i] })),
  ];
}

export class CaseReads {
  private readonly cases: CaseRepository;
  private readonly forms: FormRepository;

  constructor(
    private readonly prisma: Prisma,
    /** the signed cursors of the REST list's `next` links (GraphQL's connections have their own) */
    readonly cursors: CursorCodec,
  ) {
    this.cases = new CaseRepository(prisma);
    this.forms = new FormRepository(prisma);
  }

  /** The principal's case reads in the domain, or the 401/403/404 to answer. */
  async in(principal: Principal, domainName: string): Promise<CaseReadScope> {
    const domain = await authorize(this.prisma, principal, domainName, "caseRead");
    return new ReadScope(domain, this.cases, this.forms);
  }
}

/** A case index that points at a case of the scope: the case holding it, its target and relationship. */
export interface CaseLink {
  caseId: string;
  referencedId: string;
  relationship: string;
}

/** The principal's case reads in one domain (permission already checked): made only by `CaseReads.in`. */
export type CaseReadScope = ReadScope;

class ReadScope {
  constructor(
    readonly domain: DomainRef,
    private readonly cases: CaseRepository,
    private readonly forms: FormRepository,
  ) {}

  /** One page of the list in keyset order, after `after` when given (REST). */
  async list(query: CaseQuery, after?: Keyset): Promise<CasePage> {
    const page = await this.cases.page(this.domain, checkQuery(query), query.limit, after);
    // the keyset at the column's full precision: a Date (milliseconds) would repeat the last case
    return { records: page.records, total: page.total, next: page.hasMore ? page.lastKey : undefined };
  }

  /**
   * `list`'s page with its cases as the REST JSON array of them (case.serializer.ts), as text:
   * written by PostgreSQL (case.json.repository.ts), or by the serializer for a page PostgreSQL
   * cannot write byte for byte as the serializer does. A 5,000-case page is never read into records.
   */
  async listJson(query: CaseQuery, after?: Keyset): Promise<CaseJsonPage> {
    const checked = checkQuery(query);
    const page =
      (await this.cases.pageJson(this.domain, checked, query.limit, after)) ??
      toJsonPage(await this.cases.page(this.domain, checked, query.limit, after));
    return { cases: `[${page.records.join(",")}]`, total: page.total, next: page.hasMore ? page.lastKey : undefined };
  }

  /**
   * One slice of the filtered list (a GraphQL connection page): up to `size + 1` cases of the
   * window in reading order (so that the face can tell whether more follow), everything the filter
   * matches, and whether cases lie at or before `after` / at or after `before`.
   */
  async slice(filter: CaseQueryFilter, slice: CaseSlice): Promise<CaseSliceRead> {
    return this.cases.slice(this.domain, checkFilter(filter), slice);
  }

  async byId(caseId: string): Promise<CaseRecord | undefined> {
    return (await this.cases.byIds(this.domain, [caseId])).get(caseId.toLowerCase());
  }

  /** The oldest case (by date_opened, then case_id) with this external id. */
  async byExternalId(externalId: string): Promise<CaseRecord | undefined> {
    return (await this.cases.byExternalIds(this.domain, [externalId])).get(externalId);
  }

  /** `GET id1,id2,…`: one entry per id, in order, duplicates repeated; no limit but the URL's. */
  async many(caseIds: string[]): Promise<BulkEntry[]> {
    return this.entries({ caseIds, externalIds: [] });
  }

  /** The bulk fetch: one entry per requested id, case ids first, in request order, duplicates repeated. */
  async fetch(request: BulkRequest): Promise<BulkEntry[]> {
    checkBulkRequest(request);
    return this.entries(request);
  }

  async form(formId: string): Promise<FormView | null> {
    return this.forms.byId(this.domain, formId);
  }

  // ---- batches of GraphQL's per-request loaders (case.loaders.ts): one query each, whatever the count

  /** The cases of the domain with these ids, by lower-case id (ids that name none are left out). */
  async byIds(caseIds: string[]): Promise<Map<string, CaseRecord>> {
    return this.cases.byIds(this.domain, caseIds);
  }

  /** The oldest case of the domain with each of these external ids (ids that name none are left out). */
  async byExternalIds(externalIds: string[]): Promise<Map<string, CaseRecord>> {
    return this.cases.byExternalIds(this.domain, externalIds);
  }

  /** The indices of the domain that point at these cases, ordered by the indexing case's id. */
  async referencing(caseIds: string[]): Promise<CaseLink[]> {
    return this.cases.referencing(this.domain, caseIds);
  }

  /** The first `perCase` forms that wrote each of these cases, oldest first, in the order of `caseIds`. */
  async formsOf(caseIds: string[], perCase: number): Promise<FormView[][]> {
    return this.forms.byCases(this.domain, caseIds, perCase);
  }

  private async entries(request: BulkRequest): Promise<BulkEntry[]> {
    const [byId, byExternal] = await Promise.all([
      this.cases.byIds(this.domain, request.caseIds),
      this.cases.byExternalIds(this.domain, request.externalIds),
    ]);
    return bulkEntries(
      request,
      request.caseIds.map((id) => byId.get(id.toLowerCase())),
      request.externalIds.map((id) => byExternal.get(id)),
    );
  }
}
