import { readFile } from "node:fs/promises";
import { buildSchema, parse, validate } from "graphql";
import { describe, expect, it } from "vitest";

/**
 * The dashboard speaks only the public GraphQL API (CONTRACT §7.4): every document it sends, and
 * docs/dashboards.md's feed example, must stay valid against the emitted schema.graphql, so that a change
 * of the API that would break the page fails here, without a browser.
 */

const root = new URL("../../", import.meta.url);
const schema = buildSchema(await readFile(new URL("schema.graphql", root), "utf8"));
// a URL, not a path TypeScript would follow: the page's modules are plain browser JavaScript
const documents = (await import(new URL("src/dashboard/public/documents.js", root).href)) as Record<string, string>;

function errorsOf(document: string): string[] {
  return validate(schema, parse(document)).map((error) => error.message);
}

describe("the dashboard's GraphQL documents", () => {
  it("are the six the page sends", () => {
    expect(Object.keys(documents).sort()).toEqual(["APPS", "FEED", "JOB", "JOBS", "ME", "UPLOAD"]);
  });

  for (const name of ["APPS", "FEED", "JOB", "JOBS", "ME", "UPLOAD"]) {
    it(`${name} is valid against schema.graphql`, () => {
      expect(errorsOf(documents[name])).toEqual([]);
    });
  }

  it("docs/dashboards.md's feed subscription is valid against schema.graphql", async () => {
    const page = await readFile(new URL("docs/dashboards.md", root), "utf8");
    const feed = /const feed = `([\s\S]*?)`;/.exec(page);
    expect(feed).not.toBeNull();
    expect(errorsOf(feed![1])).toEqual([]);
  });

  it("would catch a field the schema does not have", () => {
    expect(errorsOf(documents.JOBS.replace("sizeBytes", "sizeInBytes"))).toEqual([
      'Cannot query field "sizeInBytes" on type "MultimediaJob". Did you mean "sizeBytes"?',
    ]);
  });
});
