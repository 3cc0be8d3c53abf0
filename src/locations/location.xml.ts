import { XMLBuilder } from "fast-xml-parser";

/**
 * The XML of the Location API (Tastypie's format): one element per field; integers, booleans,
 * lists and objects carry a `type` attribute, null is an empty element with type="null".
 */

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: "@", suppressEmptyNode: true });

const XML_NAME = /^[A-Za-z_][\w.-]*$/;

function node(value: unknown): unknown {
  if (value === null || value === undefined) return { "@type": "null" };
  if (typeof value === "boolean") return { "@type": "boolean", "#text": value ? "True" : "False" };
  if (typeof value === "number") return { "@type": Number.isInteger(value) ? "integer" : "float", "#text": String(value) };
  if (Array.isArray(value)) return { "@type": "list", object: value.map(node) };
  if (typeof value === "object") return { "@type": "hash", ...fields(value as Record<string, unknown>) };
  return { "#text": String(value) };
}

/** Keys that are not XML names (possible in location_data) become `<value key="…">`. */
function fields(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const odd: unknown[] = [];
  for (const [key, value] of Object.entries(object)) {
    if (XML_NAME.test(key) && !/^xml/i.test(key)) out[key] = node(value);
    else odd.push({ "@key": key, ...(node(value) as object) });
  }
  if (odd.length) out.value = odd;
  return out;
}

const DECLARATION = "<?xml version='1.0' encoding='utf-8'?>\n";

export function listXml(meta: Record<string, unknown>, objects: object[]): string {
  return (
    DECLARATION +
    builder.build({
      response: { meta: { ...fields(meta) }, objects: { "@type": "list", object: objects.map((o) => node(o)) } },
    })
  );
}

export function detailXml(object: object): string {
  return DECLARATION + builder.build({ object: node(object) });
}
