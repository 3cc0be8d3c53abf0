import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * Just enough Markdown for the docs tests: fenced code blocks with the heading they sit under, and
 * headings with the anchors GitHub gives them. A fence is ``` or ~~~ at the start of a line (up to
 * three spaces in), closed by the same run of characters.
 */

export const ROOT = path.resolve(import.meta.dirname, "../..");

export interface CodeBlock {
  /** the info string's first word (`sh`, `graphql`, `js`, …), empty when none */
  lang: string;
  /** the text between the fences */
  code: string;
  /** the nearest heading above it, without its `#`s */
  heading: string;
  /** 1-based line of the opening fence */
  line: number;
}

export function readDoc(relativePath: string): string {
  return readFileSync(path.join(ROOT, relativePath), "utf8");
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w-]*)/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split("\n");
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const fence = FENCE.exec(lines[i]!);
    if (!fence) {
      const title = HEADING.exec(lines[i]!);
      if (title) heading = title[2]!;
      continue;
    }
    const indent = lines[i]!.length - lines[i]!.trimStart().length;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence[1]!)) body.push(lines[j++]!.slice(indent));
    blocks.push({ lang: fence[2]!, code: body.join("\n"), heading, line: i + 1 });
    i = j;
  }
  return blocks;
}

/** The blocks of one language under the heading `heading` (and not under any later one). */
export function blocksUnder(markdown: string, heading: string, lang: string): CodeBlock[] {
  return codeBlocks(markdown).filter((block) => block.heading === heading && block.lang === lang);
}

/** Headings outside code blocks, as written. */
function headings(markdown: string): string[] {
  const titles: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    const opening = FENCE.exec(line)?.[1];
    if (fence) {
      if (line.trimStart().startsWith(fence)) fence = undefined;
    } else if (opening) {
      fence = opening;
    } else {
      const title = HEADING.exec(line)?.[2];
      if (title !== undefined) titles.push(title);
    }
  }
  return titles;
}

/**
 * GitHub's anchor for a heading: lower case, inline markup and punctuation dropped (hyphens and
 * underscores kept), spaces turned into hyphens; a repeated anchor gets `-1`, `-2`, …
 */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const title of headings(markdown)) {
    const text = title.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[`*]/g, "");
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}
