import { XMLValidator } from "fast-xml-parser";

/**
 * Whether a document is well-formed XML 1.0, or what is wrong with it. fast-xml-parser's validator
 * checks the structure and the names but not the characters, so those are checked here: XML 1.0
 * carries no C0 control but tab, LF and CR, no U+FFFE/U+FFFF and no lone surrogate, neither raw
 * nor as a character reference.
 */

const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/u;

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

export function xmlProblem(xml: string): string | undefined {
  const structure = XMLValidator.validate(xml);
  if (structure !== true) return `${structure.err.code}: ${structure.err.msg} (line ${structure.err.line})`;
  const raw = NOT_XML_CHAR.exec(xml);
  if (raw) return `character U+${raw[0].charCodeAt(0).toString(16).padStart(4, "0")} at ${raw.index}`;
  for (const ref of xml.matchAll(/&#(x[0-9a-f]+|[0-9]+);/gi)) {
    const code = ref[1][0].toLowerCase() === "x" ? Number.parseInt(ref[1].slice(1), 16) : Number(ref[1]);
    if (!isXmlChar(code)) return `character reference ${ref[0]} at ${ref.index}`;
  }
  return undefined;
}
