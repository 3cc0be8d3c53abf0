/**
 * CONTRACT §7.5, the Dockerfile as written: multi-stage on the official Node 24 image, compiled
 * JavaScript on production dependencies only, non-root, the settings and volume the contract
 * names, a health check on /livez and a command that makes node the container's first process.
 * That the image builds and behaves so is checked by scripts/container/test-image.sh (a CI step).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** The Dockerfile's instructions, continuation lines joined and comments left out. */
const instructions = readFileSync(path.join(ROOT, "Dockerfile"), "utf8")
  .replace(/\\\n\s*/g, "")
  .split("\n")
  .filter((line) => line.trim() && !line.startsWith("#"));
const stages = instructions.join("\n").split(/^(?=FROM )/m);
const [build, runtime] = stages as [string, string];

describe("Dockerfile", () => {
  it("§7.5: two stages, both FROM node:24-bookworm-slim", () => {
    expect(stages).toHaveLength(2);
    expect(build).toMatch(/^FROM node:24-bookworm-slim AS build\n/);
    expect(runtime).toMatch(/^FROM node:24-bookworm-slim\n/);
  });

  it("§7.5: the build stage installs everything and compiles; the runtime installs production dependencies only", () => {
    expect(build).toMatch(/^RUN npm ci\b/m);
    expect(build).toMatch(/^RUN npm run build$/m);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev\b/m);
    expect(runtime).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(runtime).toMatch(/^COPY prisma\/migrations \.\/prisma\/migrations$/m);
  });

  it("§7.5: the runtime runs the compiled output, as user node, with HOST, PORT and DATA_DIR set", () => {
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^ENV HOST=0\.0\.0\.0 PORT=8000 DATA_DIR=\/data RUN_COMPILED=true$/m);
    expect(runtime).toMatch(/^EXPOSE 8000$/m);
    // scripts/start.sh execs node: the server is the container's first process and gets its stop signal
    expect(runtime).toMatch(/^CMD \["sh", "scripts\/start\.sh"\]$/m);
    expect(readFileSync(path.join(ROOT, "scripts/start.sh"), "utf8")).toMatch(/^ {2}true\)[\s\S]*?exec "\$\{NODE:-node\}"/m);
  });

  it("§7.5: /data is a volume that user node owns", () => {
    const lines = runtime.split("\n");
    const chown = lines.findIndex((line) => /^RUN mkdir \/data && chown node:node \/data$/.test(line));
    const volume = lines.indexOf("VOLUME /data");
    const user = lines.indexOf("USER node");
    expect(chown).toBeGreaterThan(-1);
    // a VOLUME keeps what the image had at that path: it must be owned before it is declared
    expect(volume).toBeGreaterThan(chown);
    expect(user).toBeGreaterThan(volume);
  });

  it("§7.5: the health check asks /livez with node itself", () => {
    expect(runtime).toMatch(/^HEALTHCHECK .*CMD \["node", "-e", ".*\/livez.*"\]$/m);
  });

  it("§7.5: the build context leaves out data, secrets, installed and generated files", () => {
    const ignore = readFileSync(path.join(ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .filter((line) => line.trim() && !line.startsWith("#"));
    expect(ignore[0]).toBe("*");
    const allowed = ignore.filter((line) => line.startsWith("!"));
    for (const kept of allowed) expect(kept).not.toMatch(/data|\.env|node_modules|dist/);
    expect(ignore).toContain("src/generated/");
  });
});
