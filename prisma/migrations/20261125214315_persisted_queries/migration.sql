-- CreateTable
CREATE TABLE "persisted_queries" (
    "hash" TEXT NOT NULL,
    "document" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "persisted_queries_pkey" PRIMARY KEY ("hash")
);

-- CreateIndex
CREATE INDEX "persisted_queries_expires_at_idx" ON "persisted_queries"("expires_at");
