-- A schema Citus (or native partitioning) can shard by domain_id, step 1 of 3 (docs/scaling.md):
-- no foreign key from or to a per-domain table has an ON UPDATE action, and form_cases and
-- app_versions carry the domain_id of their parent row.
--
-- Online safety, at 1M cases (about as many forms and form_cases rows, a few thousand apps):
-- every step is a catalog change taking a brief lock, except the backfill and the validations,
-- which block no reads and no writes of the application. The script is applied statement by
-- statement (no enclosing transaction), so each lock ends with its statement. A lock that waits
-- behind a long transaction queues the application's statements behind it: run it when no long
-- transaction is open (or with a lock_timeout and retry).

-- Each foreign key is swapped without a moment when it is missing: the new one is added NOT VALID
-- under a temporary name (SHARE ROW EXCLUSIVE on both tables, no scan: instant), the old one is
-- dropped and the new one renamed (ACCESS EXCLUSIVE, instant), then validated (SHARE UPDATE
-- EXCLUSIVE on the referencing table and ROW SHARE on the referenced one: reads and writes go on
-- during the scan, a few seconds for 1M rows).

ALTER TABLE "memberships" ADD CONSTRAINT "memberships_domain_id_fkey_new" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "memberships" DROP CONSTRAINT "memberships_domain_id_fkey";
ALTER TABLE "memberships" RENAME CONSTRAINT "memberships_domain_id_fkey_new" TO "memberships_domain_id_fkey";
ALTER TABLE "memberships" VALIDATE CONSTRAINT "memberships_domain_id_fkey";

ALTER TABLE "cases" ADD CONSTRAINT "cases_domain_id_fkey_new" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "cases" DROP CONSTRAINT "cases_domain_id_fkey";
ALTER TABLE "cases" RENAME CONSTRAINT "cases_domain_id_fkey_new" TO "cases_domain_id_fkey";
ALTER TABLE "cases" VALIDATE CONSTRAINT "cases_domain_id_fkey";

ALTER TABLE "case_indices" ADD CONSTRAINT "case_indices_case_id_fkey_new" FOREIGN KEY ("case_id") REFERENCES "cases"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "case_indices" DROP CONSTRAINT "case_indices_case_id_fkey";
ALTER TABLE "case_indices" RENAME CONSTRAINT "case_indices_case_id_fkey_new" TO "case_indices_case_id_fkey";
ALTER TABLE "case_indices" VALIDATE CONSTRAINT "case_indices_case_id_fkey";

ALTER TABLE "forms" ADD CONSTRAINT "forms_domain_id_fkey_new" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "forms" DROP CONSTRAINT "forms_domain_id_fkey";
ALTER TABLE "forms" RENAME CONSTRAINT "forms_domain_id_fkey_new" TO "forms_domain_id_fkey";
ALTER TABLE "forms" VALIDATE CONSTRAINT "forms_domain_id_fkey";

ALTER TABLE "form_cases" ADD CONSTRAINT "form_cases_form_id_fkey_new" FOREIGN KEY ("form_id") REFERENCES "forms"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "form_cases" DROP CONSTRAINT "form_cases_form_id_fkey";
ALTER TABLE "form_cases" RENAME CONSTRAINT "form_cases_form_id_fkey_new" TO "form_cases_form_id_fkey";
ALTER TABLE "form_cases" VALIDATE CONSTRAINT "form_cases_form_id_fkey";

ALTER TABLE "form_cases" ADD CONSTRAINT "form_cases_case_id_fkey_new" FOREIGN KEY ("case_id") REFERENCES "cases"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "form_cases" DROP CONSTRAINT "form_cases_case_id_fkey";
ALTER TABLE "form_cases" RENAME CONSTRAINT "form_cases_case_id_fkey_new" TO "form_cases_case_id_fkey";
ALTER TABLE "form_cases" VALIDATE CONSTRAINT "form_cases_case_id_fkey";

ALTER TABLE "location_types" ADD CONSTRAINT "location_types_domain_id_fkey_new" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "location_types" DROP CONSTRAINT "location_types_domain_id_fkey";
ALTER TABLE "location_types" RENAME CONSTRAINT "location_types_domain_id_fkey_new" TO "location_types_domain_id_fkey";
ALTER TABLE "location_types" VALIDATE CONSTRAINT "location_types_domain_id_fkey";

ALTER TABLE "location_types" ADD CONSTRAINT "location_types_parent_id_fkey_new" FOREIGN KEY ("parent_id") REFERENCES "location_types"("id") ON DELETE RESTRICT ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "location_types" DROP CONSTRAINT "location_types_parent_id_fkey";
ALTER TABLE "location_types" RENAME CONSTRAINT "location_types_parent_id_fkey_new" TO "location_types_parent_id_fkey";
ALTER TABLE "location_types" VALIDATE CONSTRAINT "location_types_parent_id_fkey";

ALTER TABLE "locations" ADD CONSTRAINT "locations_domain_id_fkey_new" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "locations" DROP CONSTRAINT "locations_domain_id_fkey";
ALTER TABLE "locations" RENAME CONSTRAINT "locations_domain_id_fkey_new" TO "locations_domain_id_fkey";
ALTER TABLE "locations" VALIDATE CONSTRAINT "locations_domain_id_fkey";

ALTER TABLE "locations" ADD CONSTRAINT "locations_location_type_id_fkey_new" FOREIGN KEY ("location_type_id") REFERENCES "location_types"("id") ON DELETE RESTRICT ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "locations" DROP CONSTRAINT "locations_location_type_id_fkey";
ALTER TABLE "locations" RENAME CONSTRAINT "locations_location_type_id_fkey_new" TO "locations_location_type_id_fkey";
ALTER TABLE "locations" VALIDATE CONSTRAINT "locations_location_type_id_fkey";

ALTER TABLE "locations" ADD CONSTRAINT "locations_parent_id_fkey_new" FOREIGN KEY ("parent_id") REFERENCES "locations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "locations" DROP CONSTRAINT "locations_parent_id_fkey";
ALTER TABLE "locations" RENAME CONSTRAINT "locations_parent_id_fkey_new" TO "locations_parent_id_fkey";
ALTER TABLE "locations" VALIDATE CONSTRAINT "locations_parent_id_fkey";

ALTER TABLE "apps" ADD CONSTRAINT "apps_domain_id_fkey_new" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "apps" DROP CONSTRAINT "apps_domain_id_fkey";
ALTER TABLE "apps" RENAME CONSTRAINT "apps_domain_id_fkey_new" TO "apps_domain_id_fkey";
ALTER TABLE "apps" VALIDATE CONSTRAINT "apps_domain_id_fkey";

ALTER TABLE "app_versions" ADD CONSTRAINT "app_versions_app_id_fkey_new" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "app_versions" DROP CONSTRAINT "app_versions_app_id_fkey";
ALTER TABLE "app_versions" RENAME CONSTRAINT "app_versions_app_id_fkey_new" TO "app_versions_app_id_fkey";
ALTER TABLE "app_versions" VALIDATE CONSTRAINT "app_versions_app_id_fkey";

ALTER TABLE "multimedia_files" ADD CONSTRAINT "multimedia_files_domain_id_fkey_new" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "multimedia_files" DROP CONSTRAINT "multimedia_files_domain_id_fkey";
ALTER TABLE "multimedia_files" RENAME CONSTRAINT "multimedia_files_domain_id_fkey_new" TO "multimedia_files_domain_id_fkey";
ALTER TABLE "multimedia_files" VALIDATE CONSTRAINT "multimedia_files_domain_id_fkey";

ALTER TABLE "multimedia_jobs" ADD CONSTRAINT "multimedia_jobs_domain_id_fkey_new" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "multimedia_jobs" DROP CONSTRAINT "multimedia_jobs_domain_id_fkey";
ALTER TABLE "multimedia_jobs" RENAME CONSTRAINT "multimedia_jobs_domain_id_fkey_new" TO "multimedia_jobs_domain_id_fkey";
ALTER TABLE "multimedia_jobs" VALIDATE CONSTRAINT "multimedia_jobs_domain_id_fkey";

ALTER TABLE "multimedia_jobs" ADD CONSTRAINT "multimedia_jobs_app_id_fkey_new" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "multimedia_jobs" DROP CONSTRAINT "multimedia_jobs_app_id_fkey";
ALTER TABLE "multimedia_jobs" RENAME CONSTRAINT "multimedia_jobs_app_id_fkey_new" TO "multimedia_jobs_app_id_fkey";
ALTER TABLE "multimedia_jobs" VALIDATE CONSTRAINT "multimedia_jobs_app_id_fkey";

-- domain_id on form_cases and app_versions. ADD COLUMN without a default: ACCESS EXCLUSIVE,
-- instant (no rewrite).
ALTER TABLE "form_cases" ADD COLUMN "domain_id" UUID;
ALTER TABLE "app_versions" ADD COLUMN "domain_id" UUID;

-- Until every process runs the code that writes domain_id, a process of the previous release may
-- still insert rows without it: these row triggers (no transition table) fill it from the parent,
-- and only when it is missing. CREATE TRIGGER takes SHARE ROW EXCLUSIVE (instant) and so waits for
-- the inserts in flight: every row without domain_id is committed before the backfill's snapshot.
-- A migration of the following release drops them (docs/scaling.md). Bodies as escape strings
-- with \073 for each semicolon: the adapter splits a migration on every semicolon, comments and
-- dollar quotes included.
CREATE FUNCTION "form_cases_fill_domain_id"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  SELECT "domain_id" INTO NEW."domain_id" FROM "forms" WHERE "id" = NEW."form_id"\073
  RETURN NEW\073
END';
CREATE TRIGGER "form_cases_fill_domain_id" BEFORE INSERT ON "form_cases"
  FOR EACH ROW WHEN (NEW."domain_id" IS NULL) EXECUTE FUNCTION "form_cases_fill_domain_id"();
CREATE FUNCTION "app_versions_fill_domain_id"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  SELECT "domain_id" INTO NEW."domain_id" FROM "apps" WHERE "id" = NEW."app_id"\073
  RETURN NEW\073
END';
CREATE TRIGGER "app_versions_fill_domain_id" BEFORE INSERT ON "app_versions"
  FOR EACH ROW WHEN (NEW."domain_id" IS NULL) EXECUTE FUNCTION "app_versions_fill_domain_id"();

-- The backfill, one statement per table. Its row locks block nothing of the application: rows of
-- form_cases and app_versions are only ever inserted (and deleted by a domain's or an app's
-- deletion, which would wait). At 1M form_cases rows it runs tens of seconds and leaves as many
-- dead tuples for autovacuum. A larger table can be backfilled beforehand in batches (the same
-- UPDATE with "AND ctid IN (SELECT ctid FROM form_cases WHERE domain_id IS NULL LIMIT 10000)",
-- repeated, once the column exists): this statement then finds nothing left.
UPDATE "form_cases" fc SET "domain_id" = f."domain_id" FROM "forms" f WHERE f."id" = fc."form_id" AND fc."domain_id" IS NULL;
UPDATE "app_versions" v SET "domain_id" = a."domain_id" FROM "apps" a WHERE a."id" = v."app_id" AND v."domain_id" IS NULL;

-- NOT NULL without a scan under ACCESS EXCLUSIVE: a CHECK added NOT VALID (instant), validated
-- (SHARE UPDATE EXCLUSIVE: reads and writes go on), lets SET NOT NULL skip its scan (instant),
-- the CHECK is then redundant.
ALTER TABLE "form_cases" ADD CONSTRAINT "form_cases_domain_id_filled" CHECK ("domain_id" IS NOT NULL) NOT VALID;
ALTER TABLE "form_cases" VALIDATE CONSTRAINT "form_cases_domain_id_filled";
ALTER TABLE "form_cases" ALTER COLUMN "domain_id" SET NOT NULL;
ALTER TABLE "form_cases" DROP CONSTRAINT "form_cases_domain_id_filled";
ALTER TABLE "app_versions" ADD CONSTRAINT "app_versions_domain_id_filled" CHECK ("domain_id" IS NOT NULL) NOT VALID;
ALTER TABLE "app_versions" VALIDATE CONSTRAINT "app_versions_domain_id_filled";
ALTER TABLE "app_versions" ALTER COLUMN "domain_id" SET NOT NULL;
ALTER TABLE "app_versions" DROP CONSTRAINT "app_versions_domain_id_filled";
