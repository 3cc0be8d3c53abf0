-- DropIndex
DROP INDEX "multimedia_jobs_status_created_at_idx";

-- AlterTable
ALTER TABLE "multimedia_jobs" DROP COLUMN "locked_until";
