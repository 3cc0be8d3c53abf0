import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { buildSchema, Kind, parse, validate, type DefinitionNode, type DocumentNode } from "graphql";
import { describe, expect, it } from "vitest";
import { codeBlocks, readDoc, ROOT } from "./markdown.ts";

/**
 * What the docs show without running it: every GraphQL block is valid against schema.graphql
 * (an enum written as a string, a renamed field or argument fails here), and the configuration
 * table names every variable src/config.ts reads, and no other.
 */

const PAGES = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const schema = buildSchema(readFileSync(path.join(ROOT, "schema.graphql"), "utf8"));

/** Each operation of a block on its own (a block may show an anonymous query and a mutation), with the block's fragments. */
function operations(document: DocumentNode): DocumentNode[] {
  const fragments = document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION);
  return document.definitions
    .filter((definition): definition is DefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => ({ kind: Kind.DOCUMENT, definitions: [operation, ...fragments] }));
}

describe("GraphQL examples of the docs", () => {
  const blocks = PAGES.flatMap((page) =>
    codeBlocks(readDoc(page))
      .filter((block) => block.lang === "graphql")
      .map((block) => ({ where: `${page}:${block.line}`, code: block.code })),
  );

  it("there are some", () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  it.each(blocks)("$where is valid against schema.graphql", ({ code }) => {
    const errors = operations(parse(code)).flatMap((operation) => validate(schema, operation).map((error) => error.message));
    expect(errors).toEqual([]);
  });
});

describe("docs/configuration.md", () => {
  it("lists every environment variable src/config.ts reads, and no other", () => {
    const source = readFileSync(path.join(ROOT, "src/config.ts"), "utf8");
    const read = new Set([...source.matchAll(/env(?:, "|\.)([A-Z][A-Z0-9_]+)/g)].map((match) => match[1]));
    const table = readDoc("docs/configuration.md")
      .split("\n")
      .flatMap((line) => /^\| `([A-Z][A-Z0-9_]+)` \|/.exec(line)?.[1] ?? []);
    expect(new Set(table).size, "a variable listed twice").toBe(table.length);
    expect([...table].sort()).toEqual([...read].sort());
  });
});
