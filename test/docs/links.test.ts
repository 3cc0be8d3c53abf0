import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { anchors, readDoc, ROOT } from "./markdown.ts";

/**
 * Every relative link of the README and the docs leads somewhere: the file or folder exists, and
 * an anchor (`file.md#heading`, `#heading`) names a heading of that page.
 */

const PAGES = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  "bench/README.md",
  "bench/NOTES.md",
];

/** `[text](target)` and `![alt](target)` outside code blocks and code spans */
function links(markdown: string): string[] {
  const targets: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (line.trimStart().startsWith(fence)) fence = undefined;
      continue;
    }
    if (opening) {
      fence = opening;
      continue;
    }
    for (const match of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)) targets.push(match[1]!);
  }
  return targets;
}

const external = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

describe("links of the README and docs/", () => {
  it.each(PAGES)("%s: every relative link resolves to a file, and every anchor to a heading", (page) => {
    const broken: string[] = [];
    for (const target of links(readDoc(page)).filter((target) => !external(target))) {
      const [file, anchor] = target.split("#") as [string, string | undefined];
      const resolved = file ? path.join(path.dirname(page), decodeURIComponent(file)) : page;
      if (!existsSync(path.join(ROOT, resolved))) {
        broken.push(`${target}: no ${resolved}`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith(".md") && !anchors(readDoc(resolved)).has(anchor)) {
        broken.push(`${target}: no heading #${anchor} in ${resolved}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the README links each page of docs/", () => {
    const linked = new Set(links(readDoc("README.md")).map((target) => target.split("#")[0]));
    for (const page of PAGES.filter((page) => page.startsWith("docs/"))) expect(linked, page).toContain(page);
    expect(linked).toContain("bench/README.md");
  });
});
