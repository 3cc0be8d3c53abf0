-- CreateTable
CREATE TABLE "case_write_versions" (
    "domain_id" UUID NOT NULL,
    "version" BIGINT NOT NULL,

    CONSTRAINT "case_write_versions_pkey" PRIMARY KEY ("domain_id")
);

-- Every statement that writes cases or case indices bumps the version of each domain it touched,
-- whoever runs it (the service, a script, a cascade). The bump is an upsert of one row per domain,
-- taken at the end of the statement and held to commit: writers of one domain order their commits
-- on it, so versions follow commit order. Domains in key order, so that no two statements deadlock.
-- The body is an escape string with \073 for each semicolon: @prisma/adapter-pg runs a migration
-- by splitting it on every semicolon, dollar quotes included.
CREATE FUNCTION "bump_case_write_versions"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "case_write_versions" ("domain_id", "version")
  SELECT DISTINCT "domain_id", 1 FROM "changed" ORDER BY "domain_id"
  ON CONFLICT ("domain_id") DO UPDATE SET "version" = "case_write_versions"."version" + 1\073
  RETURN NULL\073
END';
CREATE TRIGGER "cases_inserted" AFTER INSERT ON "cases"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "bump_case_write_versions"();
CREATE TRIGGER "cases_updated" AFTER UPDATE ON "cases"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "bump_case_write_versions"();
CREATE TRIGGER "cases_deleted" AFTER DELETE ON "cases"
  REFERENCING OLD TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "bump_case_write_versions"();
CREATE TRIGGER "case_indices_inserted" AFTER INSERT ON "case_indices"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "bump_case_write_versions"();
CREATE TRIGGER "case_indices_updated" AFTER UPDATE ON "case_indices"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "bump_case_write_versions"();
CREATE TRIGGER "case_indices_deleted" AFTER DELETE ON "case_indices"
  REFERENCING OLD TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "bump_case_write_versions"();
