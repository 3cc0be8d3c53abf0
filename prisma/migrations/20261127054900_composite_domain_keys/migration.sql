-- A schema Citus (or native partitioning) can shard by domain_id, step 3 (docs/scaling.md):
-- domain_id in every primary key and in every foreign key between per-domain tables. Keys are
-- (id, domain_id), id first, so that a lookup by id alone (a process of the previous release during
-- a rollout) still uses the key's index.
--
-- Locks, at 1M cases. Each new key's index is built by CREATE UNIQUE INDEX: a SHARE lock on the
-- table for the build (reads go on, writes wait), about 1 to 3 s per index at 1M rows. A deployment
-- that cannot pause writes that long builds the indexes beforehand with CREATE UNIQUE INDEX
-- CONCURRENTLY (no write lock, the same names), and this migration finds them there (IF NOT
-- EXISTS). The migration itself cannot build them concurrently: the embedded database runs a
-- migration as one transaction, where CONCURRENTLY is refused. Foreign keys are swapped as in the
-- first step (added NOT VALID under a temporary name: SHARE ROW EXCLUSIVE, instant. The old one
-- dropped and the new one renamed: ACCESS EXCLUSIVE, instant. Validated: SHARE UPDATE EXCLUSIVE,
-- reads and writes go on, a few seconds). A primary key is swapped for the index already built
-- (DROP CONSTRAINT, then ADD PRIMARY KEY USING INDEX: ACCESS EXCLUSIVE, instant, no scan since
-- the columns are NOT NULL).

-- cases
CREATE UNIQUE INDEX IF NOT EXISTS "cases_id_domain_id_key" ON "cases" ("id", "domain_id");
ALTER TABLE "case_indices" ADD CONSTRAINT "case_indices_case_id_domain_id_fkey_new" FOREIGN KEY ("case_id", "domain_id") REFERENCES "cases"("id", "domain_id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "case_indices" DROP CONSTRAINT "case_indices_case_id_fkey";
ALTER TABLE "case_indices" RENAME CONSTRAINT "case_indices_case_id_domain_id_fkey_new" TO "case_indices_case_id_domain_id_fkey";
ALTER TABLE "case_indices" VALIDATE CONSTRAINT "case_indices_case_id_domain_id_fkey";
ALTER TABLE "form_cases" ADD CONSTRAINT "form_cases_case_id_domain_id_fkey_new" FOREIGN KEY ("case_id", "domain_id") REFERENCES "cases"("id", "domain_id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "form_cases" DROP CONSTRAINT "form_cases_case_id_fkey";
ALTER TABLE "form_cases" RENAME CONSTRAINT "form_cases_case_id_domain_id_fkey_new" TO "form_cases_case_id_domain_id_fkey";
ALTER TABLE "form_cases" VALIDATE CONSTRAINT "form_cases_case_id_domain_id_fkey";
ALTER TABLE "cases" DROP CONSTRAINT "cases_pkey";
ALTER TABLE "cases" ADD CONSTRAINT "cases_pkey" PRIMARY KEY USING INDEX "cases_id_domain_id_key";

-- forms
CREATE UNIQUE INDEX IF NOT EXISTS "forms_id_domain_id_key" ON "forms" ("id", "domain_id");
ALTER TABLE "form_cases" ADD CONSTRAINT "form_cases_form_id_domain_id_fkey_new" FOREIGN KEY ("form_id", "domain_id") REFERENCES "forms"("id", "domain_id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "form_cases" DROP CONSTRAINT "form_cases_form_id_fkey";
ALTER TABLE "form_cases" RENAME CONSTRAINT "form_cases_form_id_domain_id_fkey_new" TO "form_cases_form_id_domain_id_fkey";
ALTER TABLE "form_cases" VALIDATE CONSTRAINT "form_cases_form_id_domain_id_fkey";
ALTER TABLE "forms" DROP CONSTRAINT "forms_pkey";
ALTER TABLE "forms" ADD CONSTRAINT "forms_pkey" PRIMARY KEY USING INDEX "forms_id_domain_id_key";

-- location_types
CREATE UNIQUE INDEX IF NOT EXISTS "location_types_id_domain_id_key" ON "location_types" ("id", "domain_id");
ALTER TABLE "location_types" ADD CONSTRAINT "location_types_parent_id_domain_id_fkey_new" FOREIGN KEY ("parent_id", "domain_id") REFERENCES "location_types"("id", "domain_id") ON DELETE RESTRICT ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "location_types" DROP CONSTRAINT "location_types_parent_id_fkey";
ALTER TABLE "location_types" RENAME CONSTRAINT "location_types_parent_id_domain_id_fkey_new" TO "location_types_parent_id_domain_id_fkey";
ALTER TABLE "location_types" VALIDATE CONSTRAINT "location_types_parent_id_domain_id_fkey";
ALTER TABLE "locations" ADD CONSTRAINT "locations_location_type_id_domain_id_fkey_new" FOREIGN KEY ("location_type_id", "domain_id") REFERENCES "location_types"("id", "domain_id") ON DELETE RESTRICT ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "locations" DROP CONSTRAINT "locations_location_type_id_fkey";
ALTER TABLE "locations" RENAME CONSTRAINT "locations_location_type_id_domain_id_fkey_new" TO "locations_location_type_id_domain_id_fkey";
ALTER TABLE "locations" VALIDATE CONSTRAINT "locations_location_type_id_domain_id_fkey";
ALTER TABLE "location_types" DROP CONSTRAINT "location_types_pkey";
ALTER TABLE "location_types" ADD CONSTRAINT "location_types_pkey" PRIMARY KEY USING INDEX "location_types_id_domain_id_key";

-- locations
CREATE UNIQUE INDEX IF NOT EXISTS "locations_id_domain_id_key" ON "locations" ("id", "domain_id");
ALTER TABLE "locations" ADD CONSTRAINT "locations_parent_id_domain_id_fkey_new" FOREIGN KEY ("parent_id", "domain_id") REFERENCES "locations"("id", "domain_id") ON DELETE RESTRICT ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "locations" DROP CONSTRAINT "locations_parent_id_fkey";
ALTER TABLE "locations" RENAME CONSTRAINT "locations_parent_id_domain_id_fkey_new" TO "locations_parent_id_domain_id_fkey";
ALTER TABLE "locations" VALIDATE CONSTRAINT "locations_parent_id_domain_id_fkey";
ALTER TABLE "locations" DROP CONSTRAINT "locations_pkey";
ALTER TABLE "locations" ADD CONSTRAINT "locations_pkey" PRIMARY KEY USING INDEX "locations_id_domain_id_key";

-- apps
CREATE UNIQUE INDEX IF NOT EXISTS "apps_id_domain_id_key" ON "apps" ("id", "domain_id");
ALTER TABLE "app_versions" ADD CONSTRAINT "app_versions_app_id_domain_id_fkey_new" FOREIGN KEY ("app_id", "domain_id") REFERENCES "apps"("id", "domain_id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "app_versions" DROP CONSTRAINT "app_versions_app_id_fkey";
ALTER TABLE "app_versions" RENAME CONSTRAINT "app_versions_app_id_domain_id_fkey_new" TO "app_versions_app_id_domain_id_fkey";
ALTER TABLE "app_versions" VALIDATE CONSTRAINT "app_versions_app_id_domain_id_fkey";
ALTER TABLE "multimedia_jobs" ADD CONSTRAINT "multimedia_jobs_app_id_domain_id_fkey_new" FOREIGN KEY ("app_id", "domain_id") REFERENCES "apps"("id", "domain_id") ON DELETE CASCADE ON UPDATE NO ACTION NOT VALID;
ALTER TABLE "multimedia_jobs" DROP CONSTRAINT "multimedia_jobs_app_id_fkey";
ALTER TABLE "multimedia_jobs" RENAME CONSTRAINT "multimedia_jobs_app_id_domain_id_fkey_new" TO "multimedia_jobs_app_id_domain_id_fkey";
ALTER TABLE "multimedia_jobs" VALIDATE CONSTRAINT "multimedia_jobs_app_id_domain_id_fkey";
ALTER TABLE "apps" DROP CONSTRAINT "apps_pkey";
ALTER TABLE "apps" ADD CONSTRAINT "apps_pkey" PRIMARY KEY USING INDEX "apps_id_domain_id_key";

-- multimedia_files
CREATE UNIQUE INDEX IF NOT EXISTS "multimedia_files_id_domain_id_key" ON "multimedia_files" ("id", "domain_id");
ALTER TABLE "multimedia_files" DROP CONSTRAINT "multimedia_files_pkey";
ALTER TABLE "multimedia_files" ADD CONSTRAINT "multimedia_files_pkey" PRIMARY KEY USING INDEX "multimedia_files_id_domain_id_key";

-- multimedia_jobs
CREATE UNIQUE INDEX IF NOT EXISTS "multimedia_jobs_id_domain_id_key" ON "multimedia_jobs" ("id", "domain_id");
ALTER TABLE "multimedia_jobs" DROP CONSTRAINT "multimedia_jobs_pkey";
ALTER TABLE "multimedia_jobs" ADD CONSTRAINT "multimedia_jobs_pkey" PRIMARY KEY USING INDEX "multimedia_jobs_id_domain_id_key";

-- case_indices
CREATE UNIQUE INDEX IF NOT EXISTS "case_indices_case_id_name_domain_id_key" ON "case_indices" ("case_id", "name", "domain_id");
ALTER TABLE "case_indices" DROP CONSTRAINT "case_indices_pkey";
ALTER TABLE "case_indices" ADD CONSTRAINT "case_indices_pkey" PRIMARY KEY USING INDEX "case_indices_case_id_name_domain_id_key";

-- form_cases
CREATE UNIQUE INDEX IF NOT EXISTS "form_cases_form_id_case_id_domain_id_key" ON "form_cases" ("form_id", "case_id", "domain_id");
ALTER TABLE "form_cases" DROP CONSTRAINT "form_cases_pkey";
ALTER TABLE "form_cases" ADD CONSTRAINT "form_cases_pkey" PRIMARY KEY USING INDEX "form_cases_form_id_case_id_domain_id_key";

-- app_versions
CREATE UNIQUE INDEX IF NOT EXISTS "app_versions_app_id_version_domain_id_key" ON "app_versions" ("app_id", "version", "domain_id");
ALTER TABLE "app_versions" DROP CONSTRAINT "app_versions_pkey";
ALTER TABLE "app_versions" ADD CONSTRAINT "app_versions_pkey" PRIMARY KEY USING INDEX "app_versions_app_id_version_domain_id_key";
