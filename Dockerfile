# The gateway as a container image (CONTRACT §7.5; docs/operations.md, "Container image").
# Build: docker build -t gateway .   Run: docker run -p 8000:8000 -v gateway-data:/data gateway
# CI builds this file unchanged and runs the image: scripts/container/test-image.sh.

# Build stage: every dependency, the generated Prisma client, and the TypeScript compiled to dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
# postinstall runs `prisma generate`, which writes the client into src/generated/prisma
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build

# Runtime stage: production dependencies only, and the compiled output; no TypeScript loader.
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the one install script the server would need, postinstall's `prisma generate`,
# wrote the client that dist/ holds compiled; the others fetch native engines it never runs.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY prisma/migrations ./prisma/migrations
COPY scripts/start.sh ./scripts/start.sh
# The data directory: the embedded database, uploads and media (with PostgreSQL, only temporaries).
RUN mkdir /data && chown node:node /data
VOLUME /data
USER node
# RUN_COMPILED: scripts/start.sh (the CMD, and `npm run db:migrate`) runs dist/ with plain node.
ENV HOST=0.0.0.0 PORT=8000 DATA_DIR=/data RUN_COMPILED=true
EXPOSE 8000
# node itself: the slim image has no curl or wget
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/livez`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# start.sh execs node, so the server is PID 1 and gets the stop signal itself (§7.1: it stops
# within SHUTDOWN_GRACE_SECONDS + 5; give `docker stop` at least that, e.g. --time 20).
CMD ["sh", "scripts/start.sh"]
