-- AlterTable
ALTER TABLE "multimedia_jobs" ADD COLUMN     "file_name" TEXT,
ADD COLUMN     "size_bytes" BIGINT,
ADD COLUMN     "uploaded_by" TEXT;

-- CreateIndex
CREATE INDEX "multimedia_jobs_domain_id_created_at_id_idx" ON "multimedia_jobs"("domain_id", "created_at" DESC, "id" DESC);
