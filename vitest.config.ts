import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Without this, vitest loads two copies of graphql ("another module or realm").
    alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }],
  },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/setup/global.ts"],
    setupFiles: ["test/setup/each-file.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    // Each file gets its own worker state; databases are per test, so files may run in parallel.
    fileParallelism: true,
  },
});
