/**
 * The service tier of locations: `LocationService.in` called directly, with no HTTP and no Apollo,
 * for the CONTRACT §3 rules that need the database (types, parents, hierarchy, uniqueness, paging,
 * the atomic bulk). The value rules without a database are in rules.test.ts; the wire (status,
 * message, key order) in the faces' suites. One database serves the file and each test works in a
 * domain of its own.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.ts";
import type { LocationFields } from "../../src/locations/location.model.ts";
import { badInput, forbidden, notFound, rejection } from "../helpers/errors.ts";
import { seedLocationTypes } from "../helpers/locations.ts";
import { countLocations, locationTexts } from "../helpers/rows.ts";
import { services, type TestServices } from "../helpers/services.ts";
import { REFUSED_CREATES, TREE_FIELDS, type Tree } from "./location.scenarios.ts";

let t: TestServices;
let demo: string;
let editor: Principal;
let reader: Principal;
let tree: Tree;

beforeAll(async () => {
  t = await services();
});
afterAll(() => t.close());
beforeEach(async () => {
  demo = await t.domain();
  await seedLocationTypes(t, demo);
  editor = await t.member(demo, ["access_api", "edit_locations"]);
  reader = await t.member(demo, ["access_api", "view_locations"]);
  tree = await plant();
});

const writes = () => t.services.locations.in(editor, demo, "write");
const reads = () => t.services.locations.in(reader, demo);

async function plant(): Promise<Tree> {
  const scope = await writes();
  const ids: Record<string, string> = {};
  for (const [key, { parent, ...fields }] of Object.entries(TREE_FIELDS) as [keyof Tree, LocationFields & { parent?: keyof Tree }][]) {
    ids[key] = (await scope.create({ ...fields, parentId: parent ? ids[parent] : undefined })).id;
  }
  return ids as unknown as Tree;
}

const bulkReader = {
  locationId: (item: { id?: string; fields: LocationFields }) => item.id,
  fields: (item: { id?: string; fields: LocationFields }) => item.fields,
};

describe("who may", () => {
  it("a reader may not write: 403 'You do not have permission to do this.'", async () => {
    expect(await rejection(t.services.locations.in(reader, demo, "write"))).toEqual(forbidden("You do not have permission to do this."));
  });

  it("a case editor may not read locations", async () => {
    const caseEditor = await t.member(demo, ["access_api", "edit_data"]);
    expect(await rejection(t.services.locations.in(caseEditor, demo))).toEqual(forbidden("You do not have permission to do this."));
  });
});

describe("create: the rules that need the database, each with its exact message", () => {
  for (const [rule, { fields, refused }] of Object.entries(REFUSED_CREATES)) {
    it(rule, async () => {
      const before = await countLocations(t, demo);
      expect(await rejection(async () => (await writes()).create(fields(tree)))).toEqual(refused);
      expect(await countLocations(t, demo)).toBe(before);
    });
  }

  it("another domain's parent is no parent, and its site codes do not clash", async () => {
    const other = await t.domain();
    await seedLocationTypes(t, other);
    const theirs = await t.services.locations.in(t.root, other, "write");
    expect(await rejection(theirs.create({ name: "X", typeCode: "state", parentId: tree.brazil }))).toEqual(
      badInput("Could not find parent location with the given ID."),
    );
    expect((await theirs.create({ name: "Brasil", typeCode: "country", siteCode: "br" })).siteCode).toBe("br");
  });

  it("a generated site code is the name's, numbered past those taken", async () => {
    const scope = await writes();
    const first = await scope.create({ name: "Feira", typeCode: "district", parentId: tree.bahia });
    const second = await scope.create({ name: "Feira", typeCode: "zone" });
    expect([first.siteCode, second.siteCode]).toEqual(["feira", "feira1"]);
  });
});

describe("update: moves and type changes keep the tree a tree", () => {
  it("an unknown id: 404 Location '<id>' not found", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect(await rejection(async () => (await writes()).update(unknown, { name: "X" }))).toEqual(notFound(`Location '${unknown}' not found`));
  });

  it("a location cannot be moved under itself or one of its descendants", async () => {
    const scope = await writes();
    const message = badInput("A location cannot be moved under itself or one of its descendants.");
    const before = await locationTexts(t);
    expect(await rejection(scope.update(tree.bahia, { parentId: tree.bahia }))).toEqual(message);
    expect(await rejection(scope.update(tree.bahia, { parentId: tree.salvador }))).toEqual(message);
    expect(await locationTexts(t)).toEqual(before);
  });

  it("a location with children keeps its type", async () => {
    expect(await rejection(async () => (await writes()).update(tree.bahia, { typeCode: "zone", parentId: null }))).toEqual(
      badInput("Location type cannot be changed for a location that has child locations."),
    );
  });

  it("a district moves to another state, not under a country", async () => {
    const scope = await writes();
    const sergipe = await scope.create({ name: "Sergipe", typeCode: "state", parentId: tree.brazil });
    expect((await scope.update(tree.salvador, { parentId: sergipe.id })).parentId).toBe(sergipe.id);
    expect(await rejection(scope.update(tree.salvador, { parentId: tree.brazil }))).toEqual(
      badInput("Location type not valid for the selected parent."),
    );
  });

  it("a rename to a sibling's name is refused; a rename keeps the site code", async () => {
    const scope = await writes();
    const sergipe = await scope.create({ name: "Sergipe", typeCode: "state", parentId: tree.brazil });
    expect(await rejection(scope.update(sergipe.id, { name: "Bahia" }))).toEqual(badInput("Location with same name and parent already exists."));
    expect((await scope.update(sergipe.id, { name: "Sergipe del Rei" })).siteCode).toBe(sergipe.siteCode);
  });
});

describe("bulk: at most 100, all or nothing, each item seeing those before it", () => {
  it("over 100 items: 400 You cannot submit more than 100 locations in a single request.", async () => {
    const items = Array.from({ length: 101 }, (_, i) => ({ fields: { name: `z${i}`, typeCode: "zone" } }));
    expect(await rejection(async () => (await writes()).bulk(items, bulkReader))).toEqual(
      badInput("You cannot submit more than 100 locations in a single request."),
    );
  });

  it("an update of an unknown id is a 400 here, and the creates before it are undone", async () => {
    const before = await locationTexts(t);
    const unknown = "00000000-0000-4000-8000-000000000000";
    const items = [{ fields: { name: "South", typeCode: "zone" } }, { id: unknown, fields: { name: "X" } }];
    expect(await rejection(async () => (await writes()).bulk(items, bulkReader))).toEqual(badInput(`Location '${unknown}' not found`));
    expect(await locationTexts(t)).toEqual(before);
  });

  it("a later item sees an earlier one: the second of two same-named roots is refused", async () => {
    const items = [{ fields: { name: "South", typeCode: "zone" } }, { fields: { name: "South", typeCode: "zone" } }];
    expect(await rejection(async () => (await writes()).bulk(items, bulkReader))).toEqual(
      badInput("Location with same name and parent already exists."),
    );
  });

  it("creates and updates, ids in request order", async () => {
    const ids = await (await writes()).bulk(
      [{ fields: { name: "South", typeCode: "zone" } }, { id: tree.zone, fields: { name: "Far North" } }],
      bulkReader,
    );
    expect(ids[1]).toBe(tree.zone);
    expect((await (await reads()).get(tree.zone)).name).toBe("Far North");
  });
});

describe("list: paging bounds", () => {
  const query = (limit: number, offset: number) => ({ filter: { modified: [] }, order: "default" as const, limit, offset });

  it("a limit from 1 to 5000: 400 Invalid limit '<n>' provided. Please provide a positive integer.", async () => {
    const scope = await reads();
    for (const limit of [0, 5001, 1.5]) {
      expect(await rejection(async () => scope.list(query(limit, 0))), String(limit)).toEqual(
        badInput(`Invalid limit '${limit}' provided. Please provide a positive integer.`),
      );
    }
  });

  it("an offset up to 2^53 - 1: 400 Invalid offset '<n>' provided.", async () => {
    expect(await rejection(async () => (await reads()).list(query(10, -1)))).toEqual(
      badInput(`Invalid offset '-1' provided. Please provide an integer up to ${Number.MAX_SAFE_INTEGER}.`),
    );
  });

  it("a page far past the end is empty, with the total", async () => {
    const page = await (await reads()).list(query(10, Number.MAX_SAFE_INTEGER));
    expect([page.records.length, page.total]).toEqual([0, 5]);
  });

  it("a filter by type and parent", async () => {
    const scope = await reads();
    const page = await scope.list({ ...query(10, 0), filter: { modified: [], parentId: tree.bahia } });
    expect(page.records.map((r) => r.name)).toEqual(["Salvador"]);
    expect(await scope.count({ modified: [], typeCode: "zone" })).toBe(1);
  });
});
