import { describe, expect, it } from "vitest";
import { refusal } from "../helpers/errors.ts";
import { bulkObjects, parseLocationFields, parseLocationQuery, restBulkReader } from "../../src/locations/location.request.rest.ts";
import { checkBulkSize, checkFields, checkPaging, locationOrder, modifiedBounds } from "../../src/locations/location.rules.ts";

/**
 * The layers below the Location API's faces, without a database: the value rules (one place for
 * REST and GraphQL, `location.rules.ts`) and the REST grammar in front of them (`location.request.rest.ts`).
 */

/** A REST body through both layers, as the REST adapter and the service apply them. */
const rest = (body: unknown, creating = true) => checkFields(parseLocationFields(body, creating), creating);

describe("value rules: the same message whichever face sent the value", () => {
  it.each([
    [{ name: "X" }, "'name' and 'location_type_code' are required fields when creating a new location."],
    [{ name: "", typeCode: "country" }, "'name' and 'location_type_code' are required fields when creating a new location."],
    [{ name: "a\u0000", typeCode: "country" }, "'name' cannot contain the NUL character."],
    [{ name: "X", typeCode: "c\udfff" }, "'location_type_code' cannot contain an unpaired surrogate."],
    [{ name: "X", typeCode: "country", siteCode: "k".repeat(256) }, "'site_code' cannot be longer than 255 characters."],
    [{ name: "X", typeCode: "country", latitude: "north" }, "'latitude' must be a decimal number, received 'north'"],
    [{ name: "X", typeCode: "country", longitude: "1.12345678901" }, "'longitude' must have at most 10 digits before and 10 after the decimal point"],
    [{ name: "X", typeCode: "country", parentId: "\u0000" }, "'parent_location_id' cannot contain the NUL character."],
    [{ name: "X", typeCode: "country", locationData: { a: 1 } }, "'location_data' must be a dictionary of string values."],
    [{ name: "X", typeCode: "country", locationData: { "k\u0000": "v" } }, "'location_data' cannot contain the NUL character."],
    [{ name: " ", typeCode: "country" }, "'name' cannot be blank."],
  ])("GraphQL-shaped %j: %s; REST's snake_case body gets the same", (fields, message) => {
    expect(refusal(() => checkFields(fields, true))).toBe(message);
    const body = Object.fromEntries(
      Object.entries(fields).map(([k, v]) => [
        (
          { typeCode: "location_type_code", siteCode: "site_code", parentId: "parent_location_id", locationData: "location_data" } as Record<
            string,
            string
          >
        )[k] ?? k,
        v,
      ]),
    );
    expect(refusal(() => rest(body))).toBe(message);
  });

  it("checked coordinates are trimmed; a JSON number is read as its decimal text", () => {
    expect(checkFields({ latitude: " 12.5 ", longitude: null }, false)).toMatchObject({ latitude: "12.5", longitude: null });
    expect(rest({ latitude: 1.25 }, false)).toMatchObject({ latitude: "1.25" });
    expect(refusal(() => rest({ latitude: 1e21 }, false))).toBe("'latitude' must be a decimal number, received '1e+21'");
  });

  it("order_by, date bounds, paging and the bulk size", () => {
    expect(locationOrder(undefined)).toBe("default");
    expect(locationOrder("-last_modified")).toBe("-last_modified");
    expect(refusal(() => locationOrder("-name"))).toBe("No matching 'name' field for ordering on.");
    expect(modifiedBounds({ lte: "2024-01-01", gt: null })).toEqual([{ op: "<", at: "2024-01-02T00:00:00Z" }]);
    expect(refusal(() => modifiedBounds({ gt: "2020-02-30" }))).toBe("Cannot parse datetime '2020-02-30'");
    expect(refusal(() => checkPaging(20, 2 ** 60))).toBe(
      `Invalid offset '${2 ** 60}' provided. Please provide an integer up to ${Number.MAX_SAFE_INTEGER}.`,
    );
    expect(() => checkPaging(5000, 0)).not.toThrow();
    expect(() => checkBulkSize(100)).not.toThrow();
    expect(refusal(() => checkBulkSize(101))).toBe("You cannot submit more than 100 locations in a single request.");
  });
});

describe("the REST grammar", () => {
  it("refuses what only JSON can get wrong: not an object, unknown keys, wrong JSON types", () => {
    expect(refusal(() => parseLocationFields([], true))).toBe("Payload must be a JSON object");
    expect(refusal(() => parseLocationFields({ name: "X", colour: "red", location_id: "x" }, false))).toBe(
      "Invalid fields were included in request: ['colour', 'location_id'].",
    );
    expect(refusal(() => parseLocationFields({ name: null }, false))).toBe("'name' must be a string, received 'None'");
    expect(refusal(() => parseLocationFields({ name: "X", location_type_code: ["c"] }, true))).toBe(
      "'location_type_code' must be a string, received '['c']'",
    );
    expect(refusal(() => parseLocationFields({ latitude: true }, false))).toBe("'latitude' must be a decimal number, received 'True'");
    expect(refusal(() => parseLocationFields({ location_data: "x" }, false))).toBe("'location_data' must be a dictionary of string values.");
  });

  it("answers a create without its required fields before any type mistake, as the API always has", () => {
    expect(refusal(() => rest({ name: null, location_type_code: "country", site_code: 5 }))).toBe(
      "'name' and 'location_type_code' are required fields when creating a new location.",
    );
    expect(refusal(() => rest({ location_type_code: 5 }))).toBe("'name' and 'location_type_code' are required fields when creating a new location.");
  });

  it('parent_location_id null or "" makes a root', () => {
    expect(parseLocationFields({ parent_location_id: null }, false).parentId).toBeNull();
    expect(parseLocationFields({ parent_location_id: "" }, false).parentId).toBeNull();
    expect(parseLocationFields({}, false)).not.toHaveProperty("parentId");
  });

  it("the list query: order_by, then the dates, then Tastypie's paging (limit 0 is the maximum, larger is capped)", () => {
    expect(
      refusal(() =>
        parseLocationQuery([
          ["limit", "x"],
          ["last_modified.gt", "bad"],
          ["order_by", "name"],
        ]),
      ),
    ).toBe("No matching 'name' field for ordering on.");
    expect(
      refusal(() =>
        parseLocationQuery([
          ["limit", "x"],
          ["last_modified.gt", "bad"],
        ]),
      ),
    ).toBe("Cannot parse datetime 'bad'");
    expect(parseLocationQuery([["limit", "0"]]).limit).toBe(5000);
    expect(
      parseLocationQuery([
        ["limit", "9000"],
        ["offset", "3"],
      ]),
    ).toMatchObject({ limit: 5000, offset: 3, order: "default" });
    expect(refusal(() => parseLocationQuery([["offset", "99999999999999999999"]]))).toBe(
      `Invalid offset '99999999999999999999' provided. Please provide an integer up to ${Number.MAX_SAFE_INTEGER}.`,
    );
  });

  it("the bulk envelope and its items", () => {
    expect(refusal(() => bulkObjects({ objects: {} }))).toBe("The request must be an object with an 'objects' list.");
    expect(restBulkReader.locationId("not an object")).toBeUndefined();
    expect(restBulkReader.locationId({ name: "X" })).toBeUndefined();
    expect(refusal(() => restBulkReader.locationId({ location_id: 7 }))).toBe("'location_id' must be a string, received '7'");
    expect(restBulkReader.fields({ location_id: "x", name: "Y" }, false)).toMatchObject({ name: "Y" });
  });
});
