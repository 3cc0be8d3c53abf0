-- DropIndex
DROP INDEX "cases_domain_id_indexed_on_id_idx";

-- CreateIndex
CREATE INDEX "cases_list_order_idx" ON "cases"("domain_id", "indexed_on", "id", "last_modified", "server_last_modified", "date_opened", "date_closed");
