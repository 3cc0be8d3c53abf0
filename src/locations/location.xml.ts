import { XMLBuilder } from "fast-xml-parser";
import { xmlText } from "../util/xml.ts";

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
  return { "#text": xmlText(String(value)) };
}

/**
 * Names that JavaScript XML parsers refuse as element names (prototype pollution guards), so that
 * a location_data key spelled so would make the whole document unreadable to such clients.
 */
const RESERVED = new Set(["__proto__", "constructor", "prototype"]);

/** Keys that are not XML names, or are reserved (possible in location_data), become `<value key="…">`. */
function fields(object: Record<string, unknown>): Record<string, unknown> {
  // No prototype, so that no key can reach Object.prototype's setters.
  const out: Record<string, unknown> = Object.create(null);
  const odd: unknown[] = [];
  for (const [key, value] of Object.entries(object)) {
    if (XML_NAME.test(key) && !/^xml/i.test(key) && !RESERVED.has(key)) out[key] = node(value);
    else odd.push({ "@key": xmlText(key), ...(node(value) as object) });
  }
  if (odd.length) {
    // A field that is itself named "value" joins the list rather than being overwritten by it.
    if ("value" in out) odd.unshift({ "@key": "value", ...(out.value as object) });
    out.value = odd;
  }
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
