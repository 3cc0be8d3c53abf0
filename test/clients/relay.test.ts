import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { parse, print, visit, type ObjectTypeDefinitionNode } from "graphql";
import { afterEach, describe, expect, it } from "vitest";

/**
 * CONTRACT §7.3, proven with relay-compiler: the small Relay project in test/clients/relay (a
 * `@refetchable` fragment on Case, refetched through `node`, and a `@connection` case list paged
 * both ways) compiles against schema.graphql. Relay checks the Node interface, Query.node and the
 * connection shape at compile time, so each of those the schema loses fails the compile.
 *
 * The project is compiled in a copy laid out as the repository is (the compiler writes its
 * artifacts beside the sources), so nothing generated lands in the working tree.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const PROJECT = "test/clients/relay";
/** the native compiler inside the npm package (its cli.js only spawns it) */
const RELAY_BINARY: string = createRequire(import.meta.url)("relay-compiler");

interface Compiled {
  code: number;
  output: string;
  /** the copy's project folder */
  project: string;
}

const copies: string[] = [];

afterEach(async () => {
  for (const dir of copies.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Compiles the Relay project against `schema` (the committed schema.graphql by default). */
async function compile(schema?: string): Promise<Compiled> {
  const copy = await mkdtemp(path.join(os.tmpdir(), "relay-"));
  copies.push(copy);
  const project = path.join(copy, PROJECT);
  await cp(path.join(ROOT, PROJECT), project, { recursive: true, filter: (source) => !source.includes("__generated__") });
  await writeFile(path.join(copy, "schema.graphql"), schema ?? (await committedSchema()));
  return new Promise((resolve) => {
    execFile(RELAY_BINARY, [], { cwd: project, env: { PATH: process.env.PATH, NO_COLOR: "1" } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, output: `${stdout}${stderr}`, project });
    });
  });
}

const committedSchema = () => readFile(path.join(ROOT, "schema.graphql"), "utf8");

const artifact = (compiled: Compiled, name: string) => readFile(path.join(compiled.project, "src/__generated__", `${name}.graphql.ts`), "utf8");

/** The committed schema with one change made to one object type's definition. */
async function schemaWith(typeName: string, change: (type: ObjectTypeDefinitionNode) => ObjectTypeDefinitionNode): Promise<string> {
  let found = false;
  const changed = visit(parse(await committedSchema()), {
    ObjectTypeDefinition(type) {
      if (type.name.value !== typeName) return undefined;
      found = true;
      return change(type);
    },
  });
  expect(found, `schema.graphql has no type ${typeName}`).toBe(true);
  return print(changed);
}

function withoutField(typeName: string, fieldName: string): Promise<string> {
  return schemaWith(typeName, (type) => {
    const fields = type.fields?.filter((field) => field.name.value !== fieldName);
    expect(fields?.length, `${typeName}.${fieldName} is in schema.graphql`).toBe((type.fields?.length ?? 0) - 1);
    return { ...type, fields };
  });
}

describe("CONTRACT §7.3: relay-compiler compiles Relay operations against schema.graphql", () => {
  it("§7.3 the @refetchable Case fragment and the @connection case list compile, refetching through node(id)", async () => {
    const compiled = await compile();
    expect(compiled.output).not.toMatch(/error/i);
    expect(compiled.code).toBe(0);
    expect(await artifact(compiled, "CaseDetailRefetchQuery")).toMatch(/node\(id: \$id\)/);
    const pagination = await artifact(compiled, "CaseListPaginationQuery");
    for (const field of ["cursor", "hasNextPage", "endCursor", "hasPreviousPage", "startCursor"]) expect(pagination).toContain(field);
  });

  it.each([
    ["Query", "node", "The type `Query` has no field `node`"],
    ["CaseEdge", "cursor", "The type `CaseEdge` has no field `cursor`"],
    ["CaseEdge", "node", "The type `CaseEdge` has no field `node`"],
    ["CaseConnection", "pageInfo", "to expose a 'pageInfo' field"],
    ["PageInfo", "hasNextPage", "to expose a 'pageInfo { hasNextPage }' field"],
    ["PageInfo", "endCursor", "to expose a 'pageInfo { endCursor }' field"],
    ["PageInfo", "hasPreviousPage", "to expose a 'pageInfo { hasPreviousPage }' field"],
    ["PageInfo", "startCursor", "to expose a 'pageInfo { startCursor }' field"],
  ])("§7.3 a schema without %s.%s fails the compile", async (typeName, fieldName, message) => {
    const compiled = await compile(await withoutField(typeName, fieldName));
    expect(compiled.code).not.toBe(0);
    expect(compiled.output).toContain(message);
  });

  it("§7.3 a schema where Case does not implement Node fails the compile", async () => {
    const schema = await schemaWith("Case", (type) => {
      const interfaces = type.interfaces?.filter((named) => named.name.value !== "Node");
      expect(interfaces?.length).toBe((type.interfaces?.length ?? 0) - 1);
      return { ...type, interfaces };
    });
    const compiled = await compile(schema);
    expect(compiled.code).not.toBe(0);
    expect(compiled.output).toContain("can never occur for parent type 'Node'");
  });
});
