import { afterEach, beforeEach, expect, it } from "vitest";
import { buildCaseApp, CASES, type CaseTestApp } from "../helpers/cases.ts";
import { domainRow } from "../helpers/rows.ts";

/** CONTRACT §2 List: following `next` yields every matching case exactly once, at the largest page size. */

let app: CaseTestApp;
beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

it("pages over 10,000 cases with limit=5000 returning each case once, in (indexed_on, case_id) order", async () => {
  const domain = await domainRow(app, "demo");
  // Seeded in SQL: 10,000 API writes would test the writer, not the pager. Many share an indexed_on
  // (every 7 in a row), so the case_id tie-break is exercised too.
  await app.db.prisma.$executeRaw`
    INSERT INTO cases (id, domain_id, case_type, case_name, owner_id, date_opened, last_modified,
                       server_last_modified, indexed_on, properties)
    SELECT gen_random_uuid(), ${domain.id}::uuid, 'bulk', 'case ' || n, 'o',
           t, t, t, t, jsonb_build_object('n', n::text)
    FROM generate_series(1, 10000) AS n,
         LATERAL (SELECT timestamptz '2024-01-01' + (n / 7) * interval '1 second' AS t) AS times`;

  const seen: string[] = [];
  const totals: number[] = [];
  let url: string | undefined = `${CASES}?limit=5000&case_type=bulk`;
  let previous = "";
  while (url) {
    const res: { status: number; body: any } = await app
      .http()
      .get(url.replace(/^https?:\/\/[^/]+/, ""))
      .set("Authorization", app.reader.authorization);
    expect(res.status).toBe(200);
    totals.push(res.body.matching_records);
    for (const c of res.body.cases as { case_id: string; indexed_on: string }[]) {
      const key = `${c.indexed_on} ${c.case_id}`;
      expect(key > previous).toBe(true);
      previous = key;
      seen.push(c.case_id);
    }
    url = res.body.next;
  }
  expect(seen).toHaveLength(10000);
  expect(new Set(seen).size).toBe(10000);
  expect(totals).toEqual([10000, 5000]);
});
