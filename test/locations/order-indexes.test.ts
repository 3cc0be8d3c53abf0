/**
 * CONTRACT §7.3 `locations(orderBy)`, served from an index: the list statement of each order by
 * name, site code and last modification is planned by PostgreSQL as a scan of its index, with no
 * sort of the matches (test/cases/plans.ts). Runs on PGlite and, with `npm run test:postgres`, on
 * PostgreSQL 15.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocationOrder } from "../../src/locations/location.model.ts";
import { LocationRepository } from "../../src/locations/location.repository.ts";
import { planOf, readsOf, recordingDb } from "../cases/plans.ts";
import { domainRow } from "../helpers/rows.ts";
import { services, type TestServices } from "../helpers/services.ts";

let t: TestServices;
let domain: { id: string; name: string };

beforeAll(async () => {
  t = await services();
  const name = await t.domain();
  domain = { id: (await domainRow(t, name)).id, name };
});
afterAll(() => t.close());

const INDEX_OF: Partial<Record<LocationOrder, string>> = {
  name: "locations_domain_id_name_id_idx",
  "-name": "locations_domain_id_name_id_idx",
  site_code: "locations_domain_id_site_code_key",
  "-site_code": "locations_domain_id_site_code_key",
  last_modified: "locations_domain_id_last_modified_id_idx",
  "-last_modified": "locations_domain_id_last_modified_id_idx",
};

describe("§7.3 locations(orderBy): each order is read from its index", () => {
  for (const [order, index] of Object.entries(INDEX_OF) as [LocationOrder, string][]) {
    it(`${order}: the first page and a page further on scan ${index} and sort no unbounded rows`, async () => {
      const { db, ordered } = recordingDb(t.db);
      const repository = new LocationRepository(db);
      await repository.page(domain, { modified: [] }, order, 20, 0);
      await repository.page(domain, { modified: [] }, order, 20, 40);
      expect(ordered).toHaveLength(2);
      for (const statement of ordered) {
        expect(readsOf(await planOf(t.db, statement), "locations"), statement.sql).toEqual({ indexes: [index], unboundedSort: false });
      }
    });
  }
});
