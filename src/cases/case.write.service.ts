import type { Principal } from "../auth/principal.ts";
import { authorize, type DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { Prisma as Sql } from "../generated/prisma/client.ts";
import { badInput, DomainError } from "../errors.ts";
import type { PubSub } from "../events/bus.ts";
import { CASE_CHANGED, type CaseChangedEvent } from "./case.events.ts";
import { newUuid } from "../util/ids.ts";
import { CASE_API_XMLNS, formXml, type CaseBlock, type FormMeta } from "./case.form.ts";
import type { CaseAction, CaseFields, IndexRef } from "./case.actions.ts";
import type { CaseRecord } from "./case.record.ts";
import { CaseRepository, indicesByCase, type IndexRow } from "./case.repository.ts";

/**
 * Case writes of CONTRACT §2: every request is validated whole (the rules of case.actions.ts), then
 * applied in one transaction together with the one form generated for it. Upserts take a lock on
 * (domain, external_id), so concurrent upserts of one external id end as one case.
 */

/** What a write request carries besides its actions. */
export interface WriteOptions {
  /** stored as the form's device_id: the request's User-Agent over REST */
  deviceId: string;
  /** a list request: an error found while applying names its 1-based row */
  bulk: boolean;
}

/** The written cases in the order of the actions, and the id of the form that wrote them. */
export interface WriteResult {
  formId: string;
  cases: CaseRecord[];
}

/** The principal's case writes in one domain (permission already checked). */
export interface CaseWriteScope {
  readonly domain: DomainRef;
  write(actions: CaseAction[], options: WriteOptions): Promise<WriteResult>;
}

/** A failure found while applying a form: the form is kept as an error form, no case changes. */
class SubmissionError extends Error {}

/** A transaction, or the client itself when a write needs no reads (then it is one statement). */
type Db = Pick<Prisma, "$queryRaw" | "$executeRaw">;

const { sql, join } = Sql;

interface Planned {
  caseId: string;
  created: boolean;
  fields: CaseFields;
  /** row number in a bulk request (1-based) */
  row: number;
}

export class CaseWrites {
  constructor(
    private readonly prisma: Prisma,
    private readonly pubsub: PubSub,
  ) {}

  /**
   * The principal's case writes in the domain, or the 401/403/404 to answer. Permission comes
   * before any look at the payload (CONTRACT §1 Permissions): a user who may not write gets 403
   * whatever the body, never a validation message.
   */
  async in(principal: Principal, domainName: string): Promise<CaseWriteScope> {
    const domain = await authorize(this.prisma, principal, domainName, "caseWrite");
    return { domain, write: (actions, options) => this.apply(principal, domain, actions, options) };
  }

  private async apply(principal: Principal, domain: DomainRef, actions: CaseAction[], options: WriteOptions): Promise<WriteResult> {
    const meta: FormMeta = {
      formId: newUuid(),
      userId: principal.userId,
      username: principal.username,
      deviceId: options.deviceId,
      receivedOn: new Date(),
    };
    const rowError = (row: number, message: string) => (options.bulk ? `Error in row ${row}: ${message}` : message);
    try {
      // A request of creates that name no existing case reads nothing: its one statement is atomic
      // by itself, so it needs no interactive transaction (two round trips fewer).
      const cases = needsReads(actions)
        ? await this.prisma.$transaction((tx) => this.applyInTransaction(tx, domain, actions, meta, rowError), { timeout: 60_000, maxWait: 30_000 })
        : await this.applyInTransaction(this.prisma, domain, actions, meta, rowError);
      for (const c of cases) {
        const event: CaseChangedEvent = { domain: domain.name, caseId: c.id, caseType: c.caseType, formId: meta.formId };
        this.pubsub.publish(CASE_CHANGED, event);
      }
      return { formId: meta.formId, cases };
    } catch (error) {
      if (!(error instanceof SubmissionError)) throw error;
      await this.prisma.form.create({ data: { ...formRow(domain, meta), xml: "", problem: error.message } });
      throw badInput(error.message, { xform_id: meta.formId });
    }
  }

  private async applyInTransaction(
    tx: Db,
    domain: DomainRef,
    actions: CaseAction[],
    meta: FormMeta,
    rowError: (row: number, message: string) => string,
  ): Promise<CaseRecord[]> {
    const repository = new CaseRepository(tx);
    const upsertKeys = [...new Set(actions.flatMap((a) => (a.action === "upsert" ? [a.externalId] : [])))].sort();
    if (upsertKeys.length) {
      // one statement takes every lock, in key order (so that concurrent requests cannot deadlock)
      const lockKeys = upsertKeys.map((key) => `${domain.id}:${key}`);
      await tx.$executeRaw`SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))
        FROM (SELECT k FROM unnest(${lockKeys}::text[]) AS k ORDER BY k) AS keys`;
    }

    // The cases the request may change are read and locked at once (the indices of those it
    // changes come back with the write); the cases its indices point at only looked up, unlocked,
    // so that concurrent writes adding children to one case do not queue behind each other.
    const writtenIds = actions.flatMap((a) => (a.action === "update" && a.by === "case_id" ? [a.caseId] : []));
    const writtenExternal = actions.flatMap((a) =>
      a.action === "upsert" || (a.action === "update" && a.by === "external_id") ? [a.externalId] : [],
    );
    const named = await repository.lockNamed(domain, writtenIds, writtenExternal);
    const existingIds = new Map<string, { id: string }>(named.byId);
    const byExternal = new Map([...named.oldestByExternalId].map(([externalId, id]) => [externalId, { id }]));
    const lockedIds = new Set(writtenIds.map((id) => id.toLowerCase()));
    const lockedExternal = new Set(writtenExternal);
    const targetIds = actions.flatMap((a) =>
      a.fields.indices.flatMap((i) =>
        i.target?.ref.by === "case_id" && !lockedIds.has(i.target.ref.value.toLowerCase()) ? [i.target.ref.value] : [],
      ),
    );
    const targetExternal = actions.flatMap((a) =>
      a.fields.indices.flatMap((i) => (i.target?.ref.by === "external_id" && !lockedExternal.has(i.target.ref.value) ? [i.target.ref.value] : [])),
    );
    const targets = await repository.namedIds(domain, targetIds, targetExternal);
    for (const id of targets.ids) existingIds.set(id, { id });
    for (const [externalId, id] of targets.oldestByExternalId) byExternal.set(externalId, { id });

    const errors: string[] = [];
    const plan = this.plan(actions, existingIds, byExternal, errors, rowError);
    if (errors.length) throw badInput(errors.join("; "));

    const updatedIds = [...new Set(plan.filter((p) => !p.created).map((p) => p.caseId))].sort();
    const current = new Map(updatedIds.map((id) => [id, named.byId.get(id)!]));

    const createdIds = new Set(plan.filter((p) => p.created).map((p) => p.caseId));
    const temporary = new Map<string, string>();
    const createdByExternal = new Map<string, string>();
    actions.forEach((a, i) => {
      if (a.action === "create" && a.temporaryId !== undefined) temporary.set(a.temporaryId, plan[i].caseId);
    });
    for (const p of plan) {
      if (p.created && p.fields.externalId && !createdByExternal.has(p.fields.externalId)) {
        createdByExternal.set(p.fields.externalId, p.caseId);
      }
    }
    const resolve = (ref: IndexRef): string => {
      switch (ref.by) {
        case "case_id": {
          const id = ref.value.toLowerCase();
          if (existingIds.has(id) || createdIds.has(id)) return id;
          throw new SubmissionError(`Index refers to case '${ref.value}', which does not exist in this domain`);
        }
        case "external_id": {
          const id = createdByExternal.get(ref.value) ?? byExternal.get(ref.value)?.id;
          if (id) return id;
          throw badInput(`Could not find a case with external_id '${ref.value}'`);
        }
        case "temporary_id": {
          const id = temporary.get(ref.value);
          if (id) return id;
          throw badInput(`Could not find a case with temporary_id '${ref.value}'`);
        }
      }
    };

    const state = new Map<string, CaseRecord>(current);
    const blocks: CaseBlock[] = [];
    const submissionErrors: string[] = [];
    for (const p of plan) {
      try {
        const indices: CaseBlock["indices"] = new Map();
        for (const change of p.fields.indices) {
          indices.set(
            change.name,
            change.target ? { caseId: resolve(change.target.ref), caseType: change.target.caseType, relationship: change.target.relationship } : null,
          );
        }
        state.set(p.caseId, applyChange(state.get(p.caseId), p, indices, domain.name, meta.receivedOn));
        blocks.push({ caseId: p.caseId, created: p.created && !blocks.some((b) => b.caseId === p.caseId), fields: p.fields, indices });
      } catch (error) {
        if (error instanceof SubmissionError) submissionErrors.push(rowError(p.row, error.message));
        else if (error instanceof DomainError) errors.push(rowError(p.row, error.message));
        else throw error;
      }
    }
    if (errors.length) throw badInput(errors.join("; "));
    if (submissionErrors.length) throw new SubmissionError(submissionErrors.join("; "));

    const storedIndices = await this.persist(tx, domain, [...createdIds], updatedIds, state, meta, blocks);
    keepUnnamedIndices(state, updatedIds, storedIndices, blocks);
    return plan.map((p) => state.get(p.caseId)!);
  }

  /** Decides which case each action writes: an existing one, or a new id. */
  private plan(
    actions: CaseAction[],
    existingIds: Map<string, { id: string }>,
    byExternal: Map<string, { id: string }>,
    errors: string[],
    rowError: (row: number, message: string) => string,
  ): Planned[] {
    const createdByExternal = new Map<string, string>();
    const requireCreateFields = (fields: CaseFields) => {
      for (const [key, value] of [
        ["case_type", fields.caseType],
        ["case_name", fields.caseName],
        ["owner_id", fields.ownerId],
      ] as const) {
        if (value === undefined) throw badInput(`Property ${key} is required.`);
      }
    };
    return actions.map((a, i) => {
      const row = i + 1;
      try {
        switch (a.action) {
          case "create": {
            const caseId = newUuid();
            if (a.fields.externalId && !createdByExternal.has(a.fields.externalId)) createdByExternal.set(a.fields.externalId, caseId);
            return { caseId, created: true, fields: a.fields, row };
          }
          case "update": {
            if (a.by === "case_id") {
              const found = existingIds.get(a.caseId.toLowerCase());
              if (!found) throw badInput(`No case found with ID '${a.caseId}'`);
              return { caseId: found.id, created: false, fields: a.fields, row };
            }
            const id = createdByExternal.get(a.externalId) ?? byExternal.get(a.externalId)?.id;
            if (!id) throw badInput(`Could not find a case with external_id '${a.externalId}'`);
            return { caseId: id, created: false, fields: a.fields, row };
          }
          default: {
            // upsert
            const fields = { ...a.fields, externalId: a.fields.externalId ?? a.externalId };
            const earlier = createdByExternal.get(a.externalId);
            if (earlier) return { caseId: earlier, created: true, fields, row };
            const existing = byExternal.get(a.externalId);
            if (existing) return { caseId: existing.id, created: false, fields, row };
            requireCreateFields(fields);
            const caseId = newUuid();
            createdByExternal.set(a.externalId, caseId);
            return { caseId, created: true, fields, row };
          }
        }
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        errors.push(rowError(row, error.message));
        return { caseId: "", created: false, fields: a.fields, row };
      }
    });
  }

  /**
   * Writes the cases, their changed indices, the form and its form_cases rows in one statement
   * (data-modifying CTEs over parameter arrays): one round trip whatever the size of the request.
   * The same statement reads the indices the updated cases held before it (its snapshot, taken once
   * their row locks were held, sees none of its own changes), which the response keeps where the
   * request did not name them.
   */
  private async persist(
    tx: Db,
    domain: DomainRef,
    createdIds: string[],
    updatedIds: string[],
    state: Map<string, CaseRecord>,
    meta: FormMeta,
    blocks: CaseBlock[],
  ): Promise<IndexRow[]> {
    const cases = (ids: string[]) => ids.map((id) => state.get(id)!);
    const iso = (d: Date | null) => (d ? d.toISOString() : null);
    const columns = (rows: CaseRecord[]) => ({
      ids: rows.map((c) => c.id),
      types: rows.map((c) => c.caseType),
      names: rows.map((c) => c.caseName),
      externals: rows.map((c) => c.externalId),
      owners: rows.map((c) => c.ownerId),
      modified: rows.map((c) => iso(c.lastModified)),
      closed: rows.map((c) => c.closed),
      dateClosed: rows.map((c) => iso(c.dateClosed)),
      properties: rows.map((c) => JSON.stringify(c.properties)),
    });
    const steps: Sql.Sql[] = [];
    if (createdIds.length) {
      const created = cases(createdIds);
      const c = columns(created);
      steps.push(sql`created AS (
        INSERT INTO cases (id, domain_id, case_type, case_name, external_id, owner_id, date_opened, last_modified,
                           server_last_modified, indexed_on, closed, date_closed, properties, opened_by_user_id)
        SELECT v.id, ${domain.id}::uuid, v.case_type, v.case_name, v.external_id, v.owner_id, v.opened, v.modified,
               v.modified, v.modified, v.closed, v.date_closed, v.properties, ${meta.userId}::uuid
        FROM unnest(${c.ids}::uuid[], ${c.types}::text[], ${c.names}::text[], ${c.externals}::text[], ${c.owners}::text[],
                    ${created.map((x) => iso(x.dateOpened))}::timestamptz[], ${c.modified}::timestamptz[],
                    ${c.closed}::boolean[], ${c.dateClosed}::timestamptz[], ${c.properties}::jsonb[])
             AS v(id, case_type, case_name, external_id, owner_id, opened, modified, closed, date_closed, properties))`);
    }
    if (updatedIds.length) {
      const c = columns(cases(updatedIds));
      steps.push(sql`updated AS (
        UPDATE cases SET case_type = v.case_type, case_name = v.case_name, external_id = v.external_id,
               owner_id = v.owner_id, last_modified = v.modified, server_last_modified = v.modified,
               indexed_on = v.modified, closed = v.closed, date_closed = v.date_closed, properties = v.properties
        FROM unnest(${c.ids}::uuid[], ${c.types}::text[], ${c.names}::text[], ${c.externals}::text[], ${c.owners}::text[],
                    ${c.modified}::timestamptz[], ${c.closed}::boolean[], ${c.dateClosed}::timestamptz[], ${c.properties}::jsonb[])
             AS v(id, case_type, case_name, external_id, owner_id, modified, closed, date_closed, properties)
        WHERE cases.id = v.id AND cases.domain_id = ${domain.id}::uuid)`);
    }

    // Each index a block named ends either removed or set to the case's final target; the two sets
    // are disjoint, so one DELETE and one INSERT … ON CONFLICT can run side by side.
    const changed = new Map<string, { caseId: string; name: string }>();
    for (const b of blocks) for (const name of b.indices.keys()) changed.set(`${b.caseId}\u0000${name}`, { caseId: b.caseId, name });
    const removed: { caseId: string; name: string }[] = [];
    const set: ({ caseId: string } & CaseRecord["indices"][number])[] = [];
    for (const { caseId, name } of changed.values()) {
      const target = state.get(caseId)!.indices.find((i) => i.name === name);
      if (target) set.push({ caseId, ...target });
      else removed.push({ caseId, name });
    }
    if (removed.length) {
      steps.push(sql`removed_indices AS (
        DELETE FROM case_indices WHERE domain_id = ${domain.id}::uuid AND (case_id, name) IN
          (SELECT * FROM unnest(${removed.map((k) => k.caseId)}::uuid[], ${removed.map((k) => k.name)}::text[])))`);
    }
    if (set.length) {
      steps.push(sql`set_indices AS (
        INSERT INTO case_indices (case_id, name, domain_id, referenced_id, referenced_type, relationship)
        SELECT v.case_id, v.name, ${domain.id}::uuid, v.referenced_id, v.referenced_type, v.relationship
        FROM unnest(${set.map((r) => r.caseId)}::uuid[], ${set.map((r) => r.name)}::text[],
                    ${set.map((r) => r.referencedId)}::uuid[], ${set.map((r) => r.referencedType)}::text[],
                    ${set.map((r) => r.relationship)}::text[])
             AS v(case_id, name, referenced_id, referenced_type, relationship)
        ON CONFLICT (case_id, name, domain_id) DO UPDATE SET referenced_id = EXCLUDED.referenced_id,
           referenced_type = EXCLUDED.referenced_type, relationship = EXCLUDED.relationship)`);
    }

    const form = formRow(domain, meta);
    steps.push(sql`form AS (
      INSERT INTO forms (id, domain_id, xmlns, user_id, username, device_id, received_on, xml)
      VALUES (${form.id}::uuid, ${form.domainId}::uuid, ${form.xmlns}, ${form.userId}::uuid, ${form.username},
              ${form.deviceId}, ${form.receivedOn.toISOString()}::timestamptz, ${formXml(blocks, meta)})
      RETURNING id)`);
    const touched = [...createdIds, ...updatedIds];
    const formCases = sql`INSERT INTO form_cases (form_id, case_id, domain_id, position)
      SELECT form.id, v.case_id, ${domain.id}::uuid, v.position::int - 1
      FROM form, unnest(${touched}::uuid[]) WITH ORDINALITY AS v(case_id, position)`;
    if (!updatedIds.length) {
      await tx.$executeRaw`WITH ${join(steps, ", ")} ${formCases}`;
      return [];
    }
    return tx.$queryRaw<IndexRow[]>`WITH ${join(steps, ", ")}, form_rows AS (${formCases})
      SELECT case_id::text AS case_id, name, referenced_id::text AS referenced_id, referenced_type, relationship FROM case_indices
      WHERE domain_id = ${domain.id}::uuid AND case_id = ANY(${updatedIds}::uuid[])`;
  }
}

/**
 * Whether a request must read before it writes: anything but creates, or an index naming a case
 * by case_id or external_id (a temporary_id names a case of the same request).
 */
function needsReads(actions: CaseAction[]): boolean {
  return actions.some((a) => a.action !== "create" || a.fields.indices.some((i) => i.target !== null && i.target.ref.by !== "temporary_id"));
}

/**
 * Puts back, on each updated case, the indices it held before the write and that no block of the
 * request named (the blocks' own start from none: see lockNamed), first, as a merge would keep them.
 */
function keepUnnamedIndices(state: Map<string, CaseRecord>, updatedIds: string[], stored: IndexRow[], blocks: CaseBlock[]): void {
  if (!updatedIds.length) return;
  const before = indicesByCase(stored);
  const namedOf = new Map<string, Set<string>>();
  for (const b of blocks) {
    const names = namedOf.get(b.caseId) ?? new Set<string>();
    for (const name of b.indices.keys()) names.add(name);
    namedOf.set(b.caseId, names);
  }
  for (const id of updatedIds) {
    const kept = (before.get(id) ?? []).filter((i) => !namedOf.get(id)?.has(i.name));
    if (!kept.length) continue;
    const record = state.get(id)!;
    state.set(id, { ...record, indices: [...kept, ...record.indices] });
  }
}

/** The stored form of a write, applied or refused (the caller adds the XML, or the problem). */
function formRow(domain: DomainRef, meta: FormMeta) {
  return {
    id: meta.formId,
    domainId: domain.id,
    xmlns: CASE_API_XMLNS,
    userId: meta.userId,
    username: meta.username,
    deviceId: meta.deviceId,
    receivedOn: meta.receivedOn,
  };
}

/** The case after one action: created fresh, or the previous state with the changes merged in. */
function applyChange(previous: CaseRecord | undefined, p: Planned, indices: CaseBlock["indices"], domainName: string, now: Date): CaseRecord {
  const f = p.fields;
  const base: CaseRecord = previous ?? {
    id: p.caseId,
    domainName,
    caseType: f.caseType!,
    caseName: f.caseName!,
    externalId: null,
    ownerId: f.ownerId!,
    dateOpened: now,
    lastModified: now,
    serverLastModified: now,
    indexedOn: now,
    closed: false,
    dateClosed: null,
    properties: {},
    indices: [],
  };
  const next: CaseRecord = {
    ...base,
    caseType: f.caseType ?? base.caseType,
    caseName: f.caseName ?? base.caseName,
    ownerId: f.ownerId ?? base.ownerId,
    externalId: f.externalId === undefined ? base.externalId : f.externalId === "" ? null : f.externalId,
    lastModified: now,
    serverLastModified: now,
    indexedOn: now,
    properties: { ...base.properties, ...f.properties },
  };
  if (f.close && !base.closed) {
    next.closed = true;
    next.dateClosed = now;
  }
  const kept = base.indices.filter((i) => !indices.has(i.name));
  const added = [...indices].flatMap(([name, t]) =>
    t ? [{ name, referencedId: t.caseId, referencedType: t.caseType, relationship: t.relationship }] : [],
  );
  next.indices = [...kept, ...added];
  return next;
}
