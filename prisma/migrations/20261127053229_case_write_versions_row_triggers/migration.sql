-- case_write_versions is bumped by row triggers instead of statement triggers with transition
-- tables, which a distributed PostgreSQL (Citus) cannot run on a sharded table. The rule the count
-- cache relies on stays (src/cases/case.counts.ts): whoever writes cases or case indices (the
-- service, a script, a cascade) bumps the version of each domain written, in the writing
-- transaction, and the row lock the bump takes is held to commit, so versions of one domain follow
-- commit order.
--
-- A row trigger fires per row, so the bump is made once per domain and transaction: the domain last
-- bumped is remembered in a transaction-local setting (set_config(..., true): gone at commit or
-- rollback, and undone with a rolled-back savepoint together with the bump). A count read inside
-- the writing transaction is never remembered by the service, so one bump per transaction is as good
-- as one per statement for every other reader.
--
-- The lock is now taken at the first row written rather than at the end of the statement. The write
-- path locks every case it updates (FOR UPDATE, in id order) before it writes, so a writer holding
-- the version row never waits for a case row. Ad-hoc statements that write several domains bump them
-- in row order: two such statements at once may deadlock, and one of them is retried by the caller.
--
-- Locks, at 1M cases: CREATE TRIGGER takes SHARE ROW EXCLUSIVE on the table (instant: it waits only
-- for the writes in flight), DROP TRIGGER ACCESS EXCLUSIVE (instant). The new triggers are created
-- before the old ones are dropped: in between a write bumps twice, which is harmless, and there is no
-- moment without a bump. Bodies as escape strings with \073 for each semicolon: the adapter splits a
-- migration on every semicolon, comments and dollar quotes included.

CREATE FUNCTION "bump_case_write_version"("domain" UUID) RETURNS void LANGUAGE plpgsql AS E'
BEGIN
  IF current_setting(''gateway.case_write_bumped'', true) IS DISTINCT FROM "domain"::text THEN
    INSERT INTO "case_write_versions" ("domain_id", "version") VALUES ("domain", 1)
    ON CONFLICT ("domain_id") DO UPDATE SET "version" = "case_write_versions"."version" + 1\073
    PERFORM set_config(''gateway.case_write_bumped'', "domain"::text, true)\073
  END IF\073
END';

CREATE FUNCTION "case_row_written"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF TG_OP <> ''INSERT'' THEN
    PERFORM "bump_case_write_version"(OLD."domain_id")\073
  END IF\073
  IF TG_OP = ''INSERT'' OR (TG_OP = ''UPDATE'' AND NEW."domain_id" IS DISTINCT FROM OLD."domain_id") THEN
    PERFORM "bump_case_write_version"(NEW."domain_id")\073
  END IF\073
  RETURN NULL\073
END';

CREATE TRIGGER "cases_written" AFTER INSERT OR UPDATE OR DELETE ON "cases"
  FOR EACH ROW EXECUTE FUNCTION "case_row_written"();
CREATE TRIGGER "case_indices_written" AFTER INSERT OR UPDATE OR DELETE ON "case_indices"
  FOR EACH ROW EXECUTE FUNCTION "case_row_written"();

DROP TRIGGER "cases_inserted" ON "cases";
DROP TRIGGER "cases_updated" ON "cases";
DROP TRIGGER "cases_deleted" ON "cases";
DROP TRIGGER "case_indices_inserted" ON "case_indices";
DROP TRIGGER "case_indices_updated" ON "case_indices";
DROP TRIGGER "case_indices_deleted" ON "case_indices";
DROP FUNCTION "bump_case_write_versions"();
