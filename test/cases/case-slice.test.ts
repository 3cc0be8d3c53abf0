/**
 * A GraphQL connection page's cases, read as one JSON array per case that PostgreSQL writes
 * (src/cases/case.slice.repository.ts), are the records the column read makes, value for value:
 * the same strings, dates (microseconds truncated to the JS Date's milliseconds), properties in
 * the same key order, indices in name order. Over awkward text, dates the API does not write,
 * properties it does not write, closed and open, several indices; through the repository (against
 * REST's page, which reads columns) and on the wire (a connection's nodes against `casesByIds`,
 * whose records are read as columns). Where the two could differ, the page is read as columns.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../src/generated/prisma/client.ts";
import { ListOrder } from "../../src/cases/case.order.repository.ts";
import { CaseRepository } from "../../src/cases/case.repository.ts";
import { readSliceAsJson } from "../../src/cases/case.slice.repository.ts";
import type { CaseFilter, CaseSlice } from "../../src/cases/case.query.ts";
import type { CaseRecord } from "../../src/cases/case.record.ts";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";
import { domainRow } from "../helpers/rows.ts";
import { AWKWARD_VALUES, createAwkwardCases } from "../helpers/awkward-text.ts";

let app: CaseTestApp;
let domain: { id: string; name: string };
let repository: CaseRepository;

const EVERY_CASE: CaseFilter = { exact: {}, properties: new Map(), indices: new Map(), ranges: [] };
const REST_ORDER: CaseSlice["order"] = { field: "indexed_on", direction: "asc" };

beforeAll(async () => {
  app = await buildCaseApp();
  const row = await domainRow(app, "demo");
  domain = { id: row.id, name: "demo" };
  repository = new CaseRepository(app.db.prisma);
  await createAwkwardCases(app);
  // Dates the API does not write: microseconds (a JS Date keeps milliseconds, truncated, also
  // before 1970), a day's first and last instant, a closing date set in SQL.
  await app.db.prisma.$executeRaw`UPDATE cases SET
      date_opened = timestamptz '2024-02-29 23:59:59.999999+00',
      last_modified = timestamptz '1969-12-31 23:59:59.999500+00',
      server_last_modified = timestamptz '2024-06-01 12:34:56.123456+00',
      date_closed = timestamptz '0999-01-01 00:00:00.5+00'
    WHERE domain_id = ${domain.id}::uuid AND case_name LIKE 'awkward back%'`;
  await app.db.prisma.$executeRaw`UPDATE cases SET date_opened = timestamptz '0001-01-01 00:00:00.000999+00',
      last_modified = timestamptz '9999-12-31 23:59:59.999999+00'
    WHERE domain_id = ${domain.id}::uuid AND case_name LIKE 'awkward say%'`;
  // properties the API does not write: integer-like names (JavaScript puts them first), numbers, lists, objects, none
  const setInSql = [
    `jsonb_build_object('zz', 'a', '10', 'b', '2', 'c', '-1', 'd', '01', 'e')`,
    `jsonb_build_object('n', 1.50, 'big', 12345678901234567890, 'list', jsonb_build_array(1, 'two'), 'obj', jsonb_build_object('k', 'v'))`,
    `'{}'::jsonb`,
  ];
  for (const properties of setInSql) {
    const made = await app.createCase({ case_name: `set in SQL ${properties.slice(0, 20)}` });
    await app.db.prisma.$executeRawUnsafe(`UPDATE cases SET properties = ${properties} WHERE id = $1::uuid`, made.case_id);
  }
});
afterAll(() => app.close());

/** A record's every value in a comparable text: key order of the properties included, dates to the millisecond. */
const asText = (records: CaseRecord[]) =>
  JSON.stringify(records.map((r) => ({ ...r, dates: [r.dateOpened, r.lastModified, r.dateClosed].map(String) })));

/** The column read's indices, in name order ("C" collation: code points), which that read does not promise. */
const byName = (records: CaseRecord[]) =>
  records.map((r) => ({ ...r, indices: r.indices.toSorted((a, b) => (Buffer.from(a.name) < Buffer.from(b.name) ? -1 : 1)) }));

describe("§5 GraphQL case connection: the page's cases read as JSON are the records the column read makes", () => {
  it("every slice of `first` n forward and `last` n backward, at several sizes, against REST's page of the same cases", async () => {
    // properties that are not an object (which GraphQL's JSONObject refuses on the wire)
    const text = await app.createCase({ case_name: "properties not an object" });
    await app.db.prisma.$executeRaw`UPDATE cases SET properties = '"just text"'::jsonb WHERE id = ${text.case_id}::uuid`;
    try {
      // the page is read as JSON here, not as columns
      const order = new ListOrder(REST_ORDER);
      const filter = Prisma.sql`c.domain_id = ${domain.id}::uuid`;
      const json = await readSliceAsJson(app.db.prisma, domain, filter, order, order.window({}), false, 5000, Prisma.sql`'0'`);
      expect(json?.cases.length).toBe(AWKWARD_VALUES.length + 6);
      await everySlice(AWKWARD_VALUES.length + 6);
    } finally {
      await app.db.prisma.$executeRaw`DELETE FROM cases WHERE id = ${text.case_id}::uuid`;
    }
  });

  async function everySlice(count: number) {
    const columns = (await repository.page(domain, EVERY_CASE, 5000)).records;
    expect(columns.length).toBe(count);
    for (const size of [1, 4, 5000]) {
      const read: CaseRecord[] = [];
      let after: CaseSlice["after"];
      for (;;) {
        const slice = await repository.slice(domain, EVERY_CASE, { size, backward: false, after, order: REST_ORDER });
        const page = slice.read.slice(0, size);
        read.push(...page.map((c) => c.record));
        if (slice.read.length <= size) break;
        after = page[page.length - 1]!.key;
      }
      expect(asText(read), `first ${size}`).toBe(asText(byName(columns)));
      const backward = await repository.slice(domain, EVERY_CASE, { size, backward: true, order: REST_ORDER });
      const last = backward.read.slice(0, size).map((c) => c.record);
      expect(asText(last), `last ${size}`).toBe(asText(byName(columns).slice(-size).reverse()));
    }
  }

  it("on the wire: a connection's nodes are `casesByIds`' cases (read as columns), text for text", async () => {
    const fields = `caseId caseType caseName externalId ownerId dateOpened lastModified serverLastModified indexedOn
      closed dateClosed properties indices { name caseId caseType relationship }`;
    const post = async (query: string, variables: object) => {
      const res = await app
        .http()
        .post("/graphql")
        .set("Content-Type", "application/json")
        .set("Authorization", app.editor.authorization)
        .send({ query, variables });
      expect(res.status).toBe(200);
      return res.text;
    };
    const connection = JSON.parse(
      await post(`query ($domain: String!) { cases(domain: $domain, first: 5000) { nodes { ${fields} } } }`, { domain: "demo" }),
    );
    const nodes: { caseId: string }[] = connection.data.cases.nodes;
    const fetched = JSON.parse(
      await post(`query ($domain: String!, $ids: [String!]) { casesByIds(domain: $domain, caseIds: $ids) { entries { case { ${fields} } } } }`, {
        domain: "demo",
        ids: nodes.map((n) => n.caseId),
      }),
    );
    type Node = { indices: { name: string }[] };
    const sorted = (node: Node) => ({ ...node, indices: node.indices.toSorted((a, b) => (Buffer.from(a.name) < Buffer.from(b.name) ? -1 : 1)) });
    const columns = fetched.data.casesByIds.entries.map((e: { case: Node }) => sorted(e.case));
    expect(nodes.length).toBe(AWKWARD_VALUES.length + 5);
    expect(nodes.map((n) => JSON.stringify(n))).toEqual(columns.map((n: Node) => JSON.stringify(n)));
  });

  it("a date outside the years 0001–9999 reads the page as columns", async () => {
    const made = await app.createCase({ case_name: "odd date" });
    await app.db.prisma.$executeRaw`UPDATE cases SET date_closed = timestamptz '10000-01-01 00:00:00+00' WHERE id = ${made.case_id}::uuid`;
    try {
      const slice = await repository.slice(domain, EVERY_CASE, { size: 5000, backward: false, order: REST_ORDER });
      const columns = (await repository.page(domain, EVERY_CASE, 5000)).records;
      expect(slice.read.map((c) => c.record)).toEqual(columns);
      expect(slice.read.find((c) => c.record.id === made.case_id)!.record.dateClosed!.getTime()).toBeNaN();
    } finally {
      await app.db.prisma.$executeRaw`DELETE FROM cases WHERE id = ${made.case_id}::uuid`;
    }
  });
});
