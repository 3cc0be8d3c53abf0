import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildGatewaySchema, schemaSdl } from "../../src/gateway/schema.ts";

describe("schema.graphql", () => {
  it("matches the schema the code builds (run `npm run schema` after changing resolvers or types)", async () => {
    const committed = await readFile(path.resolve(import.meta.dirname, "../../schema.graphql"), "utf8");
    expect(committed).toBe(schemaSdl(await buildGatewaySchema()));
  });
});
