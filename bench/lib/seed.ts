/** Data the parts measure, written straight into the database through the service process. */
import type { Service } from "./harness.ts";

/** The cases of `seedCases`: parameters domain id, count, and the number already seeded. */
export const SEED_CASES_SQL = `
    INSERT INTO cases (id, domain_id, case_type, case_name, owner_id, external_id, date_opened, last_modified,
                       server_last_modified, indexed_on, properties)
    SELECT gen_random_uuid(), $1::uuid, CASE WHEN n % 4 = 0 THEN 'household' ELSE 'patient' END, 'case ' || n,
           'owner-' || (n % 50), 'ext-' || n, t, t, t, t,
           jsonb_build_object('p0', md5(n::text), 'p1', 'value ' || n, 'p2', (n % 97)::text, 'p3', 'district-' || (n % 13),
                              'p4', 'yes', 'p5', '2024-01-01', 'p6', repeat('x', 20), 'p7', (n * 7)::text,
                              'p8', 'lorem ipsum dolor', 'p9', md5((n * 3)::text))
    FROM generate_series($3::int + 1, $3::int + $2::int) AS n,
         LATERAL (SELECT timestamptz '2024-01-01' + n * interval '1 millisecond' AS t) AS times`;

/** The parent indices of `seedCases` (one case in three): parameters domain id, and the number already seeded. */
export const SEED_INDICES_SQL = `
    INSERT INTO case_indices (case_id, name, domain_id, referenced_id, referenced_type, relationship)
    SELECT c.id, 'parent', c.domain_id, p.id, p.case_type, 'child'
    FROM (SELECT id, domain_id, row_number() OVER (ORDER BY indexed_on, id) AS n FROM cases WHERE domain_id = $1::uuid) c
    JOIN (SELECT id, case_type, row_number() OVER (ORDER BY indexed_on, id) AS n FROM cases WHERE domain_id = $1::uuid) p
      ON p.n = c.n - 1
    WHERE c.n % 3 = 0 AND c.n > $2`;

/**
 * `count` cases of realistic size: 10 properties each, a third with a parent index, three in four
 * of type `patient` (the rest `household`), one millisecond apart in every date. `from` continues a
 * domain already seeded with that many (the 1,000,000-case measurement tops the domain up).
 */
export async function seedCases(service: Service, count: number, from = 0): Promise<void> {
  const { domainId } = service.ready;
  await service.call("sql", SEED_CASES_SQL, [domainId, count, from]);
  await service.call("sql", SEED_INDICES_SQL, [domainId, from]);
  // as autovacuum leaves a table after bulk inserts (visibility map set, statistics current): without
  // it, autovacuum's insert threshold starts a vacuum at an arbitrary moment of the measurements
  await service.call("sql", "VACUUM ANALYZE cases, case_indices");
}

/**
 * A tree of `count` locations under one root: 10 regions, count/100 districts, the rest villages
 * (a root type and three levels of child types). Returns the root's id.
 */
export async function seedLocations(service: Service, count: number): Promise<string> {
  const { domainId } = service.ready;
  const type = async (code: string, parent: string | null) => {
    const { rows } = await service.call<{ rows: { id: string }[] }>(
      "sql",
      `INSERT INTO location_types (id, domain_id, code, name, parent_id) VALUES (gen_random_uuid(), $1::uuid, $2, $3, $4::uuid) RETURNING id`,
      [domainId, code, code[0].toUpperCase() + code.slice(1), parent],
    );
    return rows[0].id;
  };
  const country = await type("country", null);
  const region = await type("region", country);
  const district = await type("district", region);
  const village = await type("village", district);
  const regions = 10;
  const districts = Math.max(1, Math.floor(count / 100));
  const villages = count - 1 - regions - districts;
  const insert = (select: string, params: unknown[]) =>
    service.call<{ rows: { id: string }[] }>(
      "sql",
      `
    INSERT INTO locations (id, domain_id, name, site_code, location_type_id, parent_id, latitude, longitude, location_data, last_modified)
    ${select} RETURNING id`,
      params,
    );
  const { rows } = await insert(
    `VALUES (gen_random_uuid(), $1::uuid, 'Root', 'root', $2::uuid, NULL, '12.5', '-3.25', '{"population": "1000000"}', timestamptz '2024-01-01')`,
    [domainId, country],
  );
  const level = (prefix: string, typeId: string, n: number, parent: string, parents: number, offset: number) =>
    service.call(
      "sql",
      `
    INSERT INTO locations (id, domain_id, name, site_code, location_type_id, parent_id, latitude, longitude, location_data, last_modified)
    SELECT gen_random_uuid(), $1::uuid, initcap($3) || ' ' || n, $3 || '_' || n, $2::uuid, p.id,
           (10 + (n % 1000) / 1000.0)::text, (-3 - (n % 997) / 997.0)::text,
           jsonb_build_object('population', (n * 7 % 10000)::text, 'code', $3 || n),
           timestamptz '2024-01-01' + ($6::int + n) * interval '1 millisecond'
    FROM generate_series(1, $4::int) AS n
    JOIN locations p ON p.domain_id = $1::uuid AND p.site_code = $5 || CASE WHEN $7::int = 0 THEN '' ELSE '_' || (n % $7::int + 1) END`,
      [domainId, typeId, prefix, n, parent, offset, parents],
    );
  await level("region", region, regions, "root", 0, 1);
  await level("district", district, districts, "region", regions, 100);
  await level("village", village, villages, "district", districts, 100_000);
  await service.call("sql", "ANALYZE");
  return rows[0].id;
}
