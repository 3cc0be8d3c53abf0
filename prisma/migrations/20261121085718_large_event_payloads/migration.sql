-- CreateTable
CREATE TABLE "event_payloads" (
    "id" BIGSERIAL NOT NULL,
    "payload" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_payloads_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "event_payloads_created_at_idx" ON "event_payloads"("created_at");
