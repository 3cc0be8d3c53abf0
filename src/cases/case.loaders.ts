import DataLoader from "dataloader";
import type { Prisma } from "../db/client.ts";
import { CaseRepository } from "./case.repository.ts";
import type { CaseRecord } from "./case.serializer.ts";

/**
 * Per-request batching of case relations for GraphQL: a page of cases with their parents, children
 * or forms costs a constant number of queries, whatever its size.
 */

const SEP = "\u0000";
export const caseKey = (domain: string, caseId: string) => `${domain}${SEP}${caseId}`;

import { toForm, FORM_SELECT, type FormView } from "./form.service.ts";

export function createCaseLoaders(prisma: Prisma, domainIds: DataLoader<string, string | null>) {
  const repository = new CaseRepository(prisma);


  /** Groups `domain\0id` keys by domain and loads each domain's cases in one query. */
  const byKey = new DataLoader<string, CaseRecord | null>(async (keys) => {
    const byDomain = new Map<string, string[]>();
    for (const key of keys) {
      const [domain, id] = key.split(SEP);
      byDomain.set(domain, [...(byDomain.get(domain) ?? []), id]);
    }
    const found = new Map<string, CaseRecord>();
    await Promise.all(
      [...byDomain].map(async ([name, ids]) => {
        const id = await domainIds.load(name);
        if (!id) return;
        for (const record of (await repository.byIds({ id, name }, ids)).values()) found.set(caseKey(name, record.id), record);
      }),
    );
    return keys.map((key) => found.get(key.toLowerCase()) ?? found.get(key) ?? null);
  });

  /** Cases whose index points at a case with the given relationship (children or extensions). */
  const related = new DataLoader<string, CaseRecord[]>(async (keys) => {
    const parsed = keys.map((k) => k.split(SEP) as [string, string, string]);
    const ids = [...new Set(parsed.map(([, id]) => id))];
    const rows = await prisma.caseIndex.findMany({
      where: { referencedId: { in: ids } },
      select: { caseId: true, referencedId: true, relationship: true },
      orderBy: { caseId: "asc" },
    });
    const records = await byKey.loadMany(
      parsed.flatMap(([domain, id, rel]) =>
        rows.filter((r) => r.referencedId === id && r.relationship === rel).map((r) => caseKey(domain, r.caseId)),
      ),
    );
    const byId = new Map<string, CaseRecord>();
    for (const r of records) if (r && !(r instanceof Error)) byId.set(r.id, r);
    return parsed.map(([, id, rel]) =>
      rows.filter((r) => r.referencedId === id && r.relationship === rel).flatMap((r) => byId.get(r.caseId) ?? []),
    );
  });

  const forms = new DataLoader<string, FormView[]>(async (caseIds) => {
    const rows = await prisma.formCase.findMany({
      where: { caseId: { in: [...caseIds] } },
      select: { caseId: true, form: { select: FORM_SELECT } },
      orderBy: [{ form: { receivedOn: "asc" } }, { formId: "asc" }],
    });
    return caseIds.map((id) => rows.filter((r) => r.caseId === id).map((r) => toForm(r.form)));
  });

  return {
    case: (domain: string, caseId: string) => byKey.load(caseKey(domain, caseId)),
    related: (domain: string, caseId: string, relationship: string) => related.load(`${domain}${SEP}${caseId}${SEP}${relationship}`),
    forms: (caseId: string) => forms.load(caseId),
  };
}

export type CaseLoaders = ReturnType<typeof createCaseLoaders>;
