#!/bin/sh
# Prisma's CLI insists on a native schema engine before any command, even `generate`.
# This machine cannot download it; migrations run through @prisma/schema-engine-wasm instead
# (scripts/migrate.ts, src/db/migrate.ts). Reaching this stub means a CLI command needed the
# native engine: use `npm run db:migrate` / `npm run db:migration` instead.
echo "native Prisma schema engine unavailable: use npm run db:migrate / db:migration" >&2
exit 1
