-- The orders of GraphQL's case and location lists (`cases(orderBy)`, `locations(orderBy)`), each
-- read from an index that leads with domain_id (docs/scaling.md: a shard's rows of one domain lie
-- together), then the order's column, then id (the tie-break): a page is one range of the index,
-- however deep. The date columns' indexes (domain_id, column) become (domain_id, column, id, the
-- other dates): they serve the same date filters and now the order too. Open cases (no date_closed) come last in both
-- directions, so descending by date_closed has an index of its own (DESC NULLS LAST).
--
-- Locks, at 1M cases. CREATE INDEX takes a SHARE lock on the table for the build (reads go on,
-- writes wait), about 1 to 3 s per index at 1M rows. A deployment that cannot pause writes that
-- long builds the new indexes beforehand, outside a transaction, with the same definitions and
-- names and CONCURRENTLY (no write lock), for example
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "cases_order_case_name_idx" ON "cases" ("domain_id", "case_name", "id", ...)
-- and the same for each CREATE INDEX below, then drops the old indexes with DROP INDEX
-- CONCURRENTLY. This migration then finds the new indexes there (IF NOT EXISTS) and the old ones
-- gone (IF EXISTS). It cannot build them concurrently itself: the embedded database runs a
-- migration as one transaction, where CONCURRENTLY is refused. A concurrent build that fails
-- leaves an INVALID index behind: drop it and build it again before running this migration.
-- (No semicolon in these comments: the migration engine splits the script at each one.)

-- cases: the date orders (and filters), then by name. Each carries the other dates as trailing
-- keys, as the list's index (cases_list_order_idx) does, so that a date filter is checked in the
-- index whatever the order.
DROP INDEX IF EXISTS "cases_domain_id_last_modified_idx";
CREATE INDEX IF NOT EXISTS "cases_order_last_modified_idx" ON "cases"("domain_id", "last_modified", "id", "server_last_modified", "indexed_on", "date_opened", "date_closed");
DROP INDEX IF EXISTS "cases_domain_id_server_last_modified_idx";
CREATE INDEX IF NOT EXISTS "cases_order_server_last_modified_idx" ON "cases"("domain_id", "server_last_modified", "id", "last_modified", "indexed_on", "date_opened", "date_closed");
DROP INDEX IF EXISTS "cases_domain_id_date_opened_idx";
CREATE INDEX IF NOT EXISTS "cases_order_date_opened_idx" ON "cases"("domain_id", "date_opened", "id", "last_modified", "server_last_modified", "indexed_on", "date_closed");
DROP INDEX IF EXISTS "cases_domain_id_date_closed_idx";
CREATE INDEX IF NOT EXISTS "cases_order_date_closed_idx" ON "cases"("domain_id", "date_closed", "id", "last_modified", "server_last_modified", "indexed_on", "date_opened");
CREATE INDEX IF NOT EXISTS "cases_order_date_closed_desc_idx" ON "cases"("domain_id", "date_closed" DESC NULLS LAST, "id" DESC, "last_modified", "server_last_modified", "indexed_on", "date_opened");
CREATE INDEX IF NOT EXISTS "cases_order_case_name_idx" ON "cases"("domain_id", "case_name", "id", "last_modified", "server_last_modified", "indexed_on", "date_opened", "date_closed");

-- locations: by name (by site code, the unique index (domain_id, site_code) serves)
CREATE INDEX IF NOT EXISTS "locations_domain_id_name_id_idx" ON "locations"("domain_id", "name", "id");
