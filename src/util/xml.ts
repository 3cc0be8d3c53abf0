/**
 * What XML 1.0 can carry, for the documents written by hand or by a builder (the Location API's
 * XML, the generated case forms): one rule for both, so that each stays well formed.
 */

/**
 * XML 1.0 cannot carry C0 controls other than tab, LF and CR, nor U+FFFE/U+FFFF, not even as
 * character references: they become U+FFFD, so that the document stays well formed (JSON keeps them).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are what it finds
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** The text with every character XML 1.0 cannot carry replaced by U+FFFD. */
export function xmlText(text: string): string {
  return text.replace(NOT_XML_CHAR, "\uFFFD");
}

// XML 1.0 (fifth edition) NameStartChar and NameChar, without the colon (namespaces give it a meaning).
const NAME_START =
  "A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}";
const NAME_CHAR = `${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F\\u2040`;
const XML_NAME = new RegExp(`^[${NAME_START}][${NAME_CHAR}]*$`, "u");

/** Whether `name` is an XML 1.0 element name without a colon (a letter such as `µ` is not one). */
export function isXmlElementName(name: string): boolean {
  return XML_NAME.test(name);
}
