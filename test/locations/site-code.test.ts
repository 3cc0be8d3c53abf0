import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isValidSiteCode, siteCodeBase, uniqueSiteCode } from "../../src/locations/site-code.ts";
import { buildLocationApp, type LocationTestApp } from "../helpers/locations.ts";

/**
 * CONTRACT §3 "Generated site_code (when omitted on create)": ASCII-transliterate and lowercase
 * the name, turn each run of non-letters into `_`, strip `_`, append the name's trailing digits;
 * on collision append 1, 2, … (denver, denver1, denver2). Empty name: no_name. And the site_code
 * rule `^[-_\w]+$`.
 */

describe("siteCodeBase (unit)", () => {
  it.each([
    ["Zürich", "zurich"],
    ["São Paulo", "sao_paulo"],
    ["Łódź", "lodz"],
    ["Denver", "denver"],
    ["New  York!!", "new_york"],
    ["  -- Cape Town --  ", "cape_town"],
    ["St. John's", "st_john_s"],
  ])("transliterates, lowercases and turns runs of non-letters into _: %s → %s", (name, code) => {
    expect(siteCodeBase(name)).toBe(code);
  });

  it.each([
    ["Boston 2", "boston2"],
    ["Boston2", "boston2"],
    ["Area 51", "area51"],
    ["District 9 North 12", "district_north12"],
    ["Köln 12 ", "koln12"],
  ])("appends the name's trailing digits: %s → %s", (name, code) => {
    expect(siteCodeBase(name)).toBe(code);
  });

  it.each([[""], ["!!!"], ["   "], ["-_-"]])("a name with no letters or digits is no_name: %j", (name) => {
    expect(siteCodeBase(name)).toBe("no_name");
  });

  it("a long transliteration is cut to at most 240 characters, trailing digits kept", () => {
    const base = siteCodeBase(`${"爫".repeat(255)}`);
    expect(base.length).toBeLessThanOrEqual(240);
    expect(base).toMatch(/^[a-z][a-z_]*[a-z]$/);
    const withDigits = siteCodeBase(`${"北".repeat(200)} 42`);
    expect(withDigits.length).toBeLessThanOrEqual(240);
    expect(withDigits.endsWith("42")).toBe(true);
    expect(withDigits).not.toMatch(/_42$/);
  });

  it("a generated base always satisfies the site code rule", () => {
    for (const name of ["Zürich", "北京", "Ω", "a/b", "x 1", "!!!", "Boston 2", "İstanbul"]) {
      const base = siteCodeBase(name);
      expect(isValidSiteCode(base), `${name} → ${base}`).toBe(true);
      expect(base).toMatch(/^[a-z0-9_]+$/);
    }
  });
});

describe("uniqueSiteCode (unit): on collision append 1, 2, …", () => {
  it("denver, denver1, denver2", () => {
    expect(uniqueSiteCode("denver", new Set())).toBe("denver");
    expect(uniqueSiteCode("denver", new Set(["denver"]))).toBe("denver1");
    expect(uniqueSiteCode("denver", new Set(["denver", "denver1"]))).toBe("denver2");
  });

  it("the first free number, even when a later one is taken", () => {
    expect(uniqueSiteCode("denver", new Set(["denver", "denver2"]))).toBe("denver1");
    expect(uniqueSiteCode("denver", new Set(["denver1"]))).toBe("denver");
  });
});

describe("isValidSiteCode (unit): ^[-_\\w]+$", () => {
  it.each([["abc"], ["a-b_c"], ["a1"], ["_"], ["-"]])("accepts %j", (code) => {
    expect(isValidSiteCode(code)).toBe(true);
  });
  it.each([[""], ["a b"], ["a.b"], ["a/b"], ["a!"], ["a\tb"], ["a\nb"], ["a+b"]])("refuses %j", (code) => {
    expect(isValidSiteCode(code)).toBe(false);
  });
});

describe("generated site codes through the API", () => {
  let app: LocationTestApp;
  beforeEach(async () => {
    app = await buildLocationApp();
  });
  afterEach(() => app.close());

  const code = async (fields: Record<string, unknown>) => (await app.createLocation(fields)).site_code;

  it("Zürich → zurich, Boston 2 → boston2, a name with no letters → no_name", async () => {
    expect(await code({ name: "Zürich", location_type_code: "country" })).toBe("zurich");
    expect(await code({ name: "Boston 2", location_type_code: "country" })).toBe("boston2");
    expect(await code({ name: "!!!", location_type_code: "country" })).toBe("no_name");
    expect(await code({ name: "???", location_type_code: "country" })).toBe("no_name1");
  });

  it("collisions: denver, denver1, denver2 (siblings or not)", async () => {
    const a = await app.createLocation({ name: "Denver", location_type_code: "country" });
    const b = await app.createLocation({ name: "Denver", location_type_code: "state", parent_location_id: a.location_id });
    const c = await app.createLocation({ name: "DENVER!", location_type_code: "zone" });
    expect([a.site_code, b.site_code, c.site_code]).toEqual(["denver", "denver1", "denver2"]);
  });

  it("a generated code skips codes taken explicitly, in any case", async () => {
    await app.createLocation({ name: "Somewhere", location_type_code: "country", site_code: "DENVER" });
    await app.createLocation({ name: "Elsewhere", location_type_code: "country", site_code: "denver1" });
    expect(await code({ name: "Denver", location_type_code: "country" })).toBe("denver2");
  });

  it("an explicit site code is kept (lowercased), not generated", async () => {
    expect(await code({ name: "Zürich", location_type_code: "country", site_code: "ZH" })).toBe("zh");
  });

  it("renaming a location keeps its site code", async () => {
    const made = await app.createLocation({ name: "Denver", location_type_code: "country" });
    const res = await app.put(made.location_id, { name: "Boulder" });
    expect(res.status).toBe(200);
    expect(res.body.site_code).toBe("denver");
  });

  it("a unicode-letter site code is accepted (\\w is Unicode), lowercased", async () => {
    expect(await code({ name: "Zürich", location_type_code: "country", site_code: "ZÜRICH" })).toBe("zürich");
  });
});
