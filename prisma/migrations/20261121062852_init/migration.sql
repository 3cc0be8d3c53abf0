-- CreateTable
CREATE TABLE "domains" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "domains_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "username" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "digest_ha1_md5" TEXT NOT NULL,
    "digest_ha1_sha256" TEXT NOT NULL,
    "is_superuser" BOOLEAN NOT NULL DEFAULT false,
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "memberships" (
    "user_id" UUID NOT NULL,
    "domain_id" UUID NOT NULL,
    "permissions" TEXT[],
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "memberships_pkey" PRIMARY KEY ("user_id","domain_id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "key_hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(6),
    "revoked_at" TIMESTAMPTZ(6),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "oauth_clients" (
    "id" UUID NOT NULL,
    "client_id" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "grants" TEXT[],
    "user_id" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(6),

    CONSTRAINT "oauth_clients_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "oauth_tokens" (
    "id" UUID NOT NULL,
    "access_token_hash" TEXT NOT NULL,
    "access_token_expires_at" TIMESTAMPTZ(6) NOT NULL,
    "refresh_token_hash" TEXT,
    "refresh_token_expires_at" TIMESTAMPTZ(6),
    "scope" TEXT[],
    "client_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(6),

    CONSTRAINT "oauth_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "digest_nonces" (
    "nonce" TEXT NOT NULL,
    "last_nc" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "digest_nonces_pkey" PRIMARY KEY ("nonce")
);

-- CreateTable
CREATE TABLE "server_secrets" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "server_secrets_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "cases" (
    "id" UUID NOT NULL,
    "domain_id" UUID NOT NULL,
    "case_type" TEXT NOT NULL,
    "case_name" TEXT NOT NULL,
    "external_id" TEXT,
    "owner_id" TEXT NOT NULL,
    "date_opened" TIMESTAMPTZ(6) NOT NULL,
    "last_modified" TIMESTAMPTZ(6) NOT NULL,
    "server_last_modified" TIMESTAMPTZ(6) NOT NULL,
    "indexed_on" TIMESTAMPTZ(6) NOT NULL,
    "closed" BOOLEAN NOT NULL DEFAULT false,
    "date_closed" TIMESTAMPTZ(6),
    "properties" JSONB NOT NULL DEFAULT '{}',
    "opened_by_user_id" UUID,

    CONSTRAINT "cases_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "case_indices" (
    "case_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "domain_id" UUID NOT NULL,
    "referenced_id" UUID NOT NULL,
    "referenced_type" TEXT NOT NULL,
    "relationship" TEXT NOT NULL,

    CONSTRAINT "case_indices_pkey" PRIMARY KEY ("case_id","name")
);

-- CreateTable
CREATE TABLE "forms" (
    "id" UUID NOT NULL,
    "domain_id" UUID NOT NULL,
    "xmlns" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    "username" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "received_on" TIMESTAMPTZ(6) NOT NULL,
    "xml" TEXT NOT NULL,
    "problem" TEXT,

    CONSTRAINT "forms_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "form_cases" (
    "form_id" UUID NOT NULL,
    "case_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "form_cases_pkey" PRIMARY KEY ("form_id","case_id")
);

-- CreateTable
CREATE TABLE "location_types" (
    "id" UUID NOT NULL,
    "domain_id" UUID NOT NULL,
    "code" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "parent_id" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "location_types_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "locations" (
    "id" UUID NOT NULL,
    "domain_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "site_code" TEXT NOT NULL,
    "location_type_id" UUID NOT NULL,
    "parent_id" UUID,
    "latitude" TEXT,
    "longitude" TEXT,
    "location_data" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_modified" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "locations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "apps" (
    "id" TEXT NOT NULL,
    "domain_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "doc_type" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "multimedia_map" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "apps_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "app_versions" (
    "app_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "source" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "app_versions_pkey" PRIMARY KEY ("app_id","version")
);

-- CreateTable
CREATE TABLE "multimedia_files" (
    "id" UUID NOT NULL,
    "domain_id" UUID NOT NULL,
    "sha256" TEXT NOT NULL,
    "md5" TEXT NOT NULL,
    "size" BIGINT NOT NULL,
    "content_type" TEXT NOT NULL,
    "media_class" TEXT NOT NULL,
    "blob_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "multimedia_files_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "multimedia_jobs" (
    "id" TEXT NOT NULL,
    "domain_id" UUID NOT NULL,
    "app_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "archive_key" TEXT NOT NULL,
    "current" INTEGER NOT NULL DEFAULT 0,
    "total" INTEGER NOT NULL DEFAULT 0,
    "result" JSONB,
    "errors" JSONB NOT NULL DEFAULT '[]',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "locked_by" TEXT,
    "locked_until" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(6),
    "completed_at" TIMESTAMPTZ(6),
    "expires_at" TIMESTAMPTZ(6),

    CONSTRAINT "multimedia_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "blobs" (
    "key" TEXT NOT NULL,
    "size" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "blobs_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "blob_chunks" (
    "key" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "blob_chunks_pkey" PRIMARY KEY ("key","seq")
);

-- CreateIndex
CREATE UNIQUE INDEX "domains_name_key" ON "domains"("name");

-- CreateIndex
CREATE UNIQUE INDEX "users_username_key" ON "users"("username");

-- CreateIndex
CREATE INDEX "memberships_domain_id_idx" ON "memberships"("domain_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_user_id_idx" ON "api_keys"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "oauth_clients_client_id_key" ON "oauth_clients"("client_id");

-- CreateIndex
CREATE UNIQUE INDEX "oauth_tokens_access_token_hash_key" ON "oauth_tokens"("access_token_hash");

-- CreateIndex
CREATE UNIQUE INDEX "oauth_tokens_refresh_token_hash_key" ON "oauth_tokens"("refresh_token_hash");

-- CreateIndex
CREATE INDEX "oauth_tokens_user_id_idx" ON "oauth_tokens"("user_id");

-- CreateIndex
CREATE INDEX "digest_nonces_expires_at_idx" ON "digest_nonces"("expires_at");

-- CreateIndex
CREATE INDEX "cases_domain_id_indexed_on_id_idx" ON "cases"("domain_id", "indexed_on", "id");

-- CreateIndex
CREATE INDEX "cases_domain_id_external_id_idx" ON "cases"("domain_id", "external_id");

-- CreateIndex
CREATE INDEX "cases_domain_id_case_type_indexed_on_idx" ON "cases"("domain_id", "case_type", "indexed_on");

-- CreateIndex
CREATE INDEX "cases_domain_id_owner_id_idx" ON "cases"("domain_id", "owner_id");

-- CreateIndex
CREATE INDEX "cases_domain_id_last_modified_idx" ON "cases"("domain_id", "last_modified");

-- CreateIndex
CREATE INDEX "cases_domain_id_server_last_modified_idx" ON "cases"("domain_id", "server_last_modified");

-- CreateIndex
CREATE INDEX "cases_domain_id_date_opened_idx" ON "cases"("domain_id", "date_opened");

-- CreateIndex
CREATE INDEX "cases_domain_id_date_closed_idx" ON "cases"("domain_id", "date_closed");

-- CreateIndex
CREATE INDEX "cases_properties_idx" ON "cases" USING GIN ("properties" jsonb_path_ops);

-- CreateIndex
CREATE INDEX "case_indices_domain_id_referenced_id_name_idx" ON "case_indices"("domain_id", "referenced_id", "name");

-- CreateIndex
CREATE INDEX "case_indices_domain_id_name_referenced_id_idx" ON "case_indices"("domain_id", "name", "referenced_id");

-- CreateIndex
CREATE INDEX "forms_domain_id_received_on_idx" ON "forms"("domain_id", "received_on");

-- CreateIndex
CREATE INDEX "form_cases_case_id_idx" ON "form_cases"("case_id");

-- CreateIndex
CREATE INDEX "location_types_parent_id_idx" ON "location_types"("parent_id");

-- CreateIndex
CREATE UNIQUE INDEX "location_types_domain_id_code_key" ON "location_types"("domain_id", "code");

-- CreateIndex
CREATE INDEX "locations_domain_id_parent_id_name_idx" ON "locations"("domain_id", "parent_id", "name");

-- CreateIndex
CREATE INDEX "locations_domain_id_last_modified_id_idx" ON "locations"("domain_id", "last_modified", "id");

-- CreateIndex
CREATE INDEX "locations_parent_id_idx" ON "locations"("parent_id");

-- CreateIndex
CREATE UNIQUE INDEX "locations_domain_id_site_code_key" ON "locations"("domain_id", "site_code");

-- CreateIndex
CREATE INDEX "apps_domain_id_created_at_idx" ON "apps"("domain_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "multimedia_files_domain_id_sha256_key" ON "multimedia_files"("domain_id", "sha256");

-- CreateIndex
CREATE INDEX "multimedia_jobs_status_created_at_idx" ON "multimedia_jobs"("status", "created_at");

-- CreateIndex
CREATE INDEX "multimedia_jobs_app_id_idx" ON "multimedia_jobs"("app_id");

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_tokens" ADD CONSTRAINT "oauth_tokens_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "oauth_clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_tokens" ADD CONSTRAINT "oauth_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cases" ADD CONSTRAINT "cases_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "case_indices" ADD CONSTRAINT "case_indices_case_id_fkey" FOREIGN KEY ("case_id") REFERENCES "cases"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "forms" ADD CONSTRAINT "forms_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "form_cases" ADD CONSTRAINT "form_cases_form_id_fkey" FOREIGN KEY ("form_id") REFERENCES "forms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "form_cases" ADD CONSTRAINT "form_cases_case_id_fkey" FOREIGN KEY ("case_id") REFERENCES "cases"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "location_types" ADD CONSTRAINT "location_types_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "location_types" ADD CONSTRAINT "location_types_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "location_types"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "locations" ADD CONSTRAINT "locations_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "locations" ADD CONSTRAINT "locations_location_type_id_fkey" FOREIGN KEY ("location_type_id") REFERENCES "location_types"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "locations" ADD CONSTRAINT "locations_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "locations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "apps" ADD CONSTRAINT "apps_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_versions" ADD CONSTRAINT "app_versions_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multimedia_files" ADD CONSTRAINT "multimedia_files_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multimedia_jobs" ADD CONSTRAINT "multimedia_jobs_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "domains"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multimedia_jobs" ADD CONSTRAINT "multimedia_jobs_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "blob_chunks" ADD CONSTRAINT "blob_chunks_key_fkey" FOREIGN KEY ("key") REFERENCES "blobs"("key") ON DELETE CASCADE ON UPDATE CASCADE;
