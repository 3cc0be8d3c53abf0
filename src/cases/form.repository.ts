import type { DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import type { Prisma as PrismaTypes } from "../generated/prisma/client.ts";
import { isUuid } from "../util/ids.ts";

/**
 * The stored forms of case writes, as GraphQL reads them (CONTRACT §2: forms are readable), always
 * scoped to one domain. The write service stores them (with its CTE statement); this only reads.
 */

const FORM_SELECT = {
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
  constructor(private readonly prisma: Pick<Prisma, "form" | "$queryRaw">) {}

  async byId(domain: DomainRef, formId: string): Promise<FormView | null> {
    if (!isUuid(formId)) return null;
    const row = await this.prisma.form.findFirst({ where: { id: formId, domainId: domain.id }, select: FORM_SELECT });
    return row ? toForm(row) : null;
  }

  /**
   * The first `perCase` forms that wrote each of these cases, oldest first, in the order of
   * `caseIds`: a case written 10,000 times costs no more to read than one written `perCase` times.
   */
  async byCases(domain: DomainRef, caseIds: string[], perCase: number): Promise<FormView[][]> {
    const ids = caseIds.filter(isUuid);
    if (!ids.length) return caseIds.map(() => []);
    const firsts = await this.prisma.$queryRaw<{ case_id: string; form_id: string }[]>`
      SELECT case_id, form_id FROM (
        SELECT fc.case_id, fc.form_id,
          row_number() OVER (PARTITION BY fc.case_id ORDER BY f.received_on, fc.form_id) AS rank
        FROM form_cases fc JOIN forms f ON f.domain_id = fc.domain_id AND f.id = fc.form_id
        WHERE fc.domain_id = ${domain.id}::uuid AND fc.case_id = ANY(${ids}::uuid[])
      ) ranked
      WHERE rank <= ${perCase}
      ORDER BY case_id, rank`;
    const rows = await this.prisma.form.findMany({
      where: { domainId: domain.id, id: { in: [...new Set(firsts.map((f) => f.form_id))] } },
      select: FORM_SELECT,
    });
    const forms = new Map(rows.map((row) => [row.id, toForm(row)]));
    const byCase = Map.groupBy(firsts, (f) => f.case_id);
    return caseIds.map((id) => (byCase.get(id) ?? []).map((f) => forms.get(f.form_id)!));
  }
}
