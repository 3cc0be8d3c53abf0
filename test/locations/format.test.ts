import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildLocationApp, LOCATIONS, type LocationTestApp, LOCATION_KEYS } from "../helpers/locations.ts";

/**
 * CONTRACT §3 "Format": `format=json|xml` wins; else an Accept naming application/json or
 * application/xml (or text/xml); else XML. XML: root <response> with <meta> and <objects> of
 * <object> elements, one child element per field, null as an empty element with type="null";
 * detail has root <object>.
 */

let app: LocationTestApp;
beforeEach(async () => {
  app = await buildLocationApp();
});
afterEach(() => app.close());

/** A parsed element: name, attributes, child elements in document order, text. */
interface El {
  name: string;
  attrs: Record<string, string>;
  children: El[];
  text: string;
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
});

function toEl(node: Record<string, any>): El {
  const name = Object.keys(node).find((k) => k !== ":@")!;
  const content: Record<string, any>[] = node[name];
  const children = content.filter((c) => !("#text" in c)).map(toEl);
  const text = content
    .filter((c) => "#text" in c)
    .map((c) => String(c["#text"]))
    .join("");
  return { name, attrs: node[":@"] ?? {}, children, text };
}

/** Characters XML 1.0 cannot carry at all, not even as character references. */
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

/** The document element of an XML response, after checking the document is well formed. */
function parseXml(xml: string): El {
  expect(XMLValidator.validate(xml)).toBe(true);
  expect(xml).not.toMatch(NOT_XML_CHAR);
  const nodes = parser.parse(xml) as Record<string, any>[];
  const elements = nodes.filter((n) => !("?xml" in n) && !("#text" in n));
  expect(elements).toHaveLength(1);
  return toEl(elements[0]);
}

const child = (el: El, name: string) => {
  const found = el.children.find((c) => c.name === name);
  if (!found) throw new Error(`<${el.name}> has no <${name}>`);
  return found;
};

const asEditor = (path: string) => app.http().get(path).set("Authorization", app.editor.authorization);

const isXml = (res: { headers: Record<string, string> }) => /^(application|text)\/xml/.test(res.headers["content-type"]);
const isJson = (res: { headers: Record<string, string> }) => /^application\/json/.test(res.headers["content-type"]);

describe("negotiation: format wins, then Accept, then XML", () => {
  it("no format and no Accept: XML, for the list and the detail", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const listRes = await asEditor(LOCATIONS);
    expect(listRes.status).toBe(200);
    expect(isXml(listRes)).toBe(true);
    expect(parseXml(listRes.text).name).toBe("response");
    const detailRes = await asEditor(`${LOCATIONS}${made.location_id}`);
    expect(isXml(detailRes)).toBe(true);
    expect(parseXml(detailRes.text).name).toBe("object");
  });

  it("Accept: */* or text/html still gives XML", async () => {
    for (const accept of ["*/*", "text/html"]) {
      const res = await asEditor(LOCATIONS).set("Accept", accept);
      expect(isXml(res), accept).toBe(true);
    }
  });

  it("Accept application/json gives JSON; application/xml and text/xml give XML", async () => {
    expect(isJson(await asEditor(LOCATIONS).set("Accept", "application/json"))).toBe(true);
    expect(isXml(await asEditor(LOCATIONS).set("Accept", "application/xml"))).toBe(true);
    expect(isXml(await asEditor(LOCATIONS).set("Accept", "text/xml"))).toBe(true);
    expect(isJson(await asEditor(LOCATIONS).set("Accept", "text/html, application/json;q=0.9"))).toBe(true);
  });

  it("format=json wins over Accept: application/xml; format=xml wins over Accept: application/json", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const json = await asEditor(`${LOCATIONS}?format=json`).set("Accept", "application/xml");
    expect(isJson(json)).toBe(true);
    expect(json.body.objects).toHaveLength(1);
    const xml = await asEditor(`${LOCATIONS}?format=xml`).set("Accept", "application/json");
    expect(isXml(xml)).toBe(true);
    const detailXml = await asEditor(`${LOCATIONS}${made.location_id}?format=xml`).set("Accept", "application/json");
    expect(isXml(detailXml)).toBe(true);
    const detailJson = await asEditor(`${LOCATIONS}${made.location_id}?format=json`).set("Accept", "text/xml");
    expect(detailJson.body.location_id).toBe(made.location_id);
  });

  it("errors are JSON {error} whatever the format asked for", async () => {
    const res = await asEditor(`${LOCATIONS}00000000-0000-4000-8000-000000000000?format=xml`);
    expect(res.status).toBe(404);
    expect(isJson(res)).toBe(true);
    expect(Object.keys(res.body)).toEqual(["error"]);
  });
});

describe("XML shapes", () => {
  it("list: <response> with <meta> (limit, next, offset, previous, total_count) then <objects> of <object>", async () => {
    await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    await app.createLocation({ name: "Uganda", location_type_code: "country", site_code: "ug" });
    const root = parseXml((await asEditor(`${LOCATIONS}?limit=1`)).text);
    expect(root.name).toBe("response");
    expect(root.children.map((c) => c.name)).toEqual(["meta", "objects"]);
    const meta = child(root, "meta");
    expect(meta.children.map((c) => c.name)).toEqual(["limit", "next", "offset", "previous", "total_count"]);
    expect(child(meta, "limit").text).toBe("1");
    expect(child(meta, "offset").text).toBe("0");
    expect(child(meta, "total_count").text).toBe("2");
    // null is an empty element with type="null"
    const previous = child(meta, "previous");
    expect(previous).toMatchObject({ attrs: { type: "null" }, children: [], text: "" });
    const next = new URL(child(meta, "next").text, "http://x");
    expect(next.searchParams.get("offset")).toBe("1");
    const objects = child(root, "objects");
    expect(objects.children.map((c) => c.name)).toEqual(["object"]);
    const object = objects.children[0];
    expect(object.children.map((c) => c.name)).toEqual(LOCATION_KEYS);
    expect(child(object, "name").text).toBe("Kenya");
    expect(child(object, "site_code").text).toBe("ke");
    expect(child(object, "domain").text).toBe("demo");
  });

  it('detail: root <object>, one element per field in contract order; nulls are <x type="null"/>; values equal the JSON', async () => {
    const made = await app.createLocation({
      name: "Kenya",
      location_type_code: "country",
      latitude: "0.0236",
      location_data: { region: "east" },
    });
    const res = await asEditor(`${LOCATIONS}${made.location_id}`);
    expect(res.text.startsWith("<?xml")).toBe(true);
    const root = parseXml(res.text);
    expect(root.name).toBe("object");
    expect(root.children.map((c) => c.name)).toEqual(LOCATION_KEYS);
    for (const key of ["domain", "last_modified", "latitude", "location_id", "location_type_code", "location_type_name", "name", "site_code"]) {
      expect(child(root, key).text, key).toBe(made[key]);
      expect(child(root, key).attrs.type, key).not.toBe("null");
    }
    for (const key of ["longitude", "parent_location_id"]) {
      expect(child(root, key), key).toMatchObject({ attrs: { type: "null" }, children: [], text: "" });
    }
    const data = child(root, "location_data");
    expect(data.children.map((c) => [c.name, c.text])).toEqual([["region", "east"]]);
  });

  it("a child location's parent_location_id is the parent's id (not null) in XML", async () => {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const state = await app.createLocation({ name: "Coast", location_type_code: "state", parent_location_id: kenya.location_id });
    const root = parseXml((await asEditor(`${LOCATIONS}${state.location_id}`)).text);
    expect(child(root, "parent_location_id").text).toBe(kenya.location_id);
    expect(child(root, "parent_location_id").attrs.type).toBeUndefined();
  });

  it("an empty list: <objects> with no <object>, next and previous null", async () => {
    const root = parseXml((await asEditor(LOCATIONS)).text);
    const meta = child(root, "meta");
    expect(child(meta, "next").attrs.type).toBe("null");
    expect(child(meta, "previous").attrs.type).toBe("null");
    expect(child(meta, "total_count").text).toBe("0");
    expect(child(root, "objects").children).toEqual([]);
  });

  it("markup characters in values are escaped and read back exactly", async () => {
    const name = `A & B <"x'> ]]>`;
    const made = await app.createLocation({ name, location_type_code: "country", location_data: { note: "1 < 2 & 3" } });
    const root = parseXml((await asEditor(`${LOCATIONS}${made.location_id}`)).text);
    expect(child(root, "name").text).toBe(name);
    expect(child(child(root, "location_data"), "note").text).toBe("1 < 2 & 3");
  });

  it("location_data keys that are not XML names, or are __proto__/constructor/value, are all emitted as parseable elements", async () => {
    const made = await app.createLocation({
      name: "Kenya",
      location_type_code: "country",
      location_data: JSON.parse('{"9lives": "a", "with space": "b", "__proto__": "c", "constructor": "f", "ok": "d", "value": "e"}'),
    });
    const root = parseXml((await asEditor(`${LOCATIONS}${made.location_id}`)).text);
    const data = child(root, "location_data");
    const pairs = data.children.map((c) => [c.attrs.key ?? c.name, c.text]).sort();
    expect(pairs).toEqual([
      ["9lives", "a"],
      ["__proto__", "c"],
      ["constructor", "f"],
      ["ok", "d"],
      ["value", "e"],
      ["with space", "b"],
    ]);
  });

  it("control characters that XML 1.0 cannot carry never make the document ill-formed", async () => {
    const made = await app.createLocation({ name: "Bad\u0001Name\u001f", location_type_code: "country", location_data: { k: "v\u0008" } });
    const res = await asEditor(`${LOCATIONS}${made.location_id}`);
    expect(res.status).toBe(200);
    parseXml(res.text); // well formed
    const listRes = await asEditor(LOCATIONS);
    parseXml(listRes.text);
    // JSON still carries the exact value
    expect((await app.get(`${made.location_id}?format=json`)).body.name).toBe("Bad\u0001Name\u001f");
  });

  it("POST with format=xml answers 201 with an <object> document", async () => {
    const res = await app.post({ name: "Kenya", location_type_code: "country" }, "?format=xml");
    expect(res.status).toBe(201);
    expect(isXml(res)).toBe(true);
    const root = parseXml(res.text);
    expect(root.name).toBe("object");
    expect(root.children.map((c) => c.name)).toEqual(LOCATION_KEYS);
  });
});
