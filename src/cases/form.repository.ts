import type { DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import type { Prisma as PrismaTypes } from "../generated/prisma/client.ts";
import { isUuid } from "../util/ids.ts";

/**
 * The stored forms of case writes, as GraphQL reads them (CONTRACT §2: forms are readable), always
 * scoped to one domain. The write service stores them (with its CTE statement); this only reads.
 */

export const FORM_SELECT = {
  id: true,
  xmlns: true,
  userId: true,
  username: true,
  deviceId: true,
  receivedOn: true,
  xml: true,
  problem: true,
  domain: { select: { name: true } },
  formCases: { select: { caseId: true }, orderBy: { position: "asc" } },
} as const;

type FormRow = PrismaTypes.FormGetPayload<{ select: typeof FORM_SELECT }>;

/** A form as GraphQL shows it: the domain by name, the cases it wrote by id. */
export type FormView = Omit<FormRow, "domain" | "formCases"> & { domain: string; caseIds: string[] };

function toForm(row: FormRow): FormView {
  const { domain, formCases, ...rest } = row;
  return { ...rest, domain: domain.name, caseIds: formCases.map((f) => f.caseId) };
}

export class FormRepository {
  constructor(private readonly prisma: Pick<Prisma, "form" | "formCase">) {}

  async byId(domain: DomainRef, formId: string): Promise<FormView | null> {
    if (!isUuid(formId)) return null;
    const row = await this.prisma.form.findFirst({ where: { id: formId, domainId: domain.id }, select: FORM_SELECT });
    return row ? toForm(row) : null;
  }

  /** The forms that wrote each of these cases, oldest first, in the order of `caseIds`. */
  async byCases(domain: DomainRef, caseIds: string[]): Promise<FormView[][]> {
    const rows = await this.prisma.formCase.findMany({
      where: { caseId: { in: caseIds.filter(isUuid) }, form: { domainId: domain.id } },
      select: { caseId: true, form: { select: FORM_SELECT } },
      orderBy: [{ form: { receivedOn: "asc" } }, { formId: "asc" }],
    });
    const byCase = Map.groupBy(rows, (r) => r.caseId);
    return caseIds.map((id) => (byCase.get(id) ?? []).map((r) => toForm(r.form)));
  }
}
