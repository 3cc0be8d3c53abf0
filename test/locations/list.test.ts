import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDomain, createUser } from "../helpers/app.ts";
import { buildLocationApp, LOCATIONS, type LocationTestApp } from "../helpers/locations.ts";
import { setLocationModified } from "../helpers/rows.ts";

/**
 * CONTRACT §3 "List" and §1 "Dates": the seed's filters, whole-day date bounds, order_by,
 * limit/offset paging and the meta envelope with relative next/previous links; read permissions.
 */

let app: LocationTestApp;
beforeEach(async () => {
  app = await buildLocationApp();
});
afterEach(() => app.close());

type Loc = Record<string, any>;

/** GET the list as JSON (format=json) as the editor. */
const list = (query = "") => app.get(`?format=json${query ? `&${query}` : ""}`);
const names = (res: { body: { objects: Loc[] } }) => res.body.objects.map((o) => o.name);

/** Inserts `count` root countries straight into the table, created in order (i = 0 first). */
async function seedRoots(count: number): Promise<string[]> {
  const p = app.db.prisma;
  const domain = await p.domain.findUniqueOrThrow({ where: { name: "demo" } });
  const type = await p.locationType.findUniqueOrThrow({ where: { domainId_code: { domainId: domain.id, code: "country" } } });
  const base = Date.UTC(2024, 0, 1);
  const rows = Array.from({ length: count }, (_, i) => ({
    domainId: domain.id,
    name: `Country ${i}`,
    siteCode: `country_${i}`,
    locationTypeId: type.id,
    createdAt: new Date(base + i * 1000),
    lastModified: new Date(base + i * 1000),
  }));
  await p.location.createMany({ data: rows });
  const created = await p.location.findMany({ orderBy: { createdAt: "asc" }, select: { id: true } });
  return created.map((c) => c.id);
}

async function setModified(id: string, iso: string) {
  await setLocationModified(app, id, new Date(iso));
}

describe("envelope: {meta: {limit, next, offset, previous, total_count}, objects}", () => {
  it("keys of the envelope and of meta are exactly in contract order; an empty domain lists nothing", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(["meta", "objects"]);
    expect(Object.keys(res.body.meta)).toEqual(["limit", "next", "offset", "previous", "total_count"]);
    expect(res.body).toEqual({ meta: { limit: 20, next: null, offset: 0, previous: null, total_count: 0 }, objects: [] });
  });

  it("each object is serialized with the contract's keys in order", async () => {
    const made = await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const res = await list();
    expect(res.body.objects).toHaveLength(1);
    expect(Object.keys(res.body.objects[0])).toEqual([
      "domain",
      "last_modified",
      "latitude",
      "location_data",
      "location_id",
      "location_type_code",
      "location_type_name",
      "longitude",
      "name",
      "parent_location_id",
      "site_code",
    ]);
    expect(res.body.objects[0]).toEqual(made);
  });
});

describe("limit: default 20, max 5000; offset", () => {
  it("without limit a page holds 20; next carries limit=20&offset=20; previous is null on the first page", async () => {
    const ids = await seedRoots(25);
    const res = await list();
    expect(res.body.meta).toMatchObject({ limit: 20, offset: 0, previous: null, total_count: 25 });
    expect(res.body.objects.map((o: Loc) => o.location_id)).toEqual(ids.slice(0, 20));
    const next = new URL(res.body.meta.next, "http://x");
    expect(next.searchParams.get("limit")).toBe("20");
    expect(next.searchParams.get("offset")).toBe("20");
  });

  it("limit over 5000 is capped at 5000 (and limit=0 means the maximum)", async () => {
    await seedRoots(5001);
    for (const limit of ["6000", "0"]) {
      const res = await list(`limit=${limit}`);
      expect(res.status).toBe(200);
      expect(res.body.meta.limit).toBe(5000);
      expect(res.body.objects).toHaveLength(5000);
      expect(res.body.meta.total_count).toBe(5001);
      expect(new URL(res.body.meta.next, "http://x").searchParams.get("offset")).toBe("5000");
    }
  });

  it("offset skips that many; the last page has next null and a previous link", async () => {
    const ids = await seedRoots(5);
    const res = await list("limit=2&offset=4");
    expect(res.body.meta).toMatchObject({ limit: 2, offset: 4, next: null, total_count: 5 });
    expect(res.body.objects.map((o: Loc) => o.location_id)).toEqual(ids.slice(4));
    const previous = new URL(res.body.meta.previous, "http://x");
    expect(previous.searchParams.get("offset")).toBe("2");
    expect(previous.searchParams.get("limit")).toBe("2");
  });

  it("an offset past the end gives an empty page with the full total_count", async () => {
    await seedRoots(3);
    const res = await list("offset=10");
    expect(res.status).toBe(200);
    expect(res.body.objects).toEqual([]);
    expect(res.body.meta).toMatchObject({ total_count: 3, next: null, offset: 10 });
  });

  it("malformed or negative limit/offset, and an offset beyond any integer, are a 400, never a 500", async () => {
    for (const q of ["limit=abc", "limit=-1", "offset=x", "offset=-5", "offset=99999999999999999999"]) {
      const res = await list(q);
      expect(res.status, q).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
  });
});

describe("next/previous: relative URLs, other parameters survive, null at the ends", () => {
  it("walking next visits every matching location once; links are relative and keep the filters", async () => {
    await seedRoots(5);
    await app.createLocation({ name: "Zone A", location_type_code: "zone" });
    const seen: string[] = [];
    let res = await list("location_type_code=country&limit=2");
    let pages = 0;
    for (;;) {
      expect(res.status).toBe(200);
      expect(res.body.meta.total_count).toBe(5);
      seen.push(...names(res));
      pages++;
      const { next, previous } = res.body.meta;
      if (pages === 1) expect(previous).toBeNull();
      else {
        expect(previous).toMatch(/^\/a\/demo\/api\/location\/v2\/?\?/);
        expect(new URL(previous, "http://x").searchParams.get("location_type_code")).toBe("country");
      }
      if (next === null) break;
      expect(next).toMatch(/^\/a\/demo\/api\/location\/v2\/?\?/);
      const params = new URL(next, "http://x").searchParams;
      expect(params.get("format")).toBe("json");
      expect(params.get("location_type_code")).toBe("country");
      expect(params.get("limit")).toBe("2");
      res = await app.http().get(next).set("Authorization", app.editor.authorization);
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(["Country 0", "Country 1", "Country 2", "Country 3", "Country 4"]);
  });
});

describe("filters", () => {
  async function tree() {
    const kenya = await app.createLocation({ name: "Kenya", location_type_code: "country", site_code: "ke" });
    const uganda = await app.createLocation({ name: "Uganda", location_type_code: "country", site_code: "ug" });
    const nairobi = await app.createLocation({ name: "Nairobi", location_type_code: "state", parent_location_id: kenya.location_id });
    const coast = await app.createLocation({ name: "Coast", location_type_code: "state", parent_location_id: kenya.location_id });
    const kampala = await app.createLocation({ name: "Kampala", location_type_code: "state", parent_location_id: uganda.location_id });
    const westlands = await app.createLocation({ name: "Westlands", location_type_code: "district", parent_location_id: nairobi.location_id });
    return { kenya, uganda, nairobi, coast, kampala, westlands };
  }

  it("site_code is an exact site code", async () => {
    await tree();
    expect(names(await list("site_code=ke"))).toEqual(["Kenya"]);
    expect(names(await list("site_code=k"))).toEqual([]);
  });

  it("name is exact and case sensitive", async () => {
    await tree();
    expect(names(await list("name=Nairobi"))).toEqual(["Nairobi"]);
    expect(names(await list("name=nairobi"))).toEqual([]);
    expect(names(await list("name=Nairob"))).toEqual([]);
  });

  it("location_type_code filters by type code", async () => {
    await tree();
    expect(names(await list("location_type_code=state")).sort()).toEqual(["Coast", "Kampala", "Nairobi"]);
    expect((await list("location_type_code=state")).body.meta.total_count).toBe(3);
    expect(names(await list("location_type_code=nope"))).toEqual([]);
  });

  it("parent_location_id gives direct children only; an unknown or malformed id matches nothing", async () => {
    const t = await tree();
    expect(names(await list(`parent_location_id=${t.kenya.location_id}`)).sort()).toEqual(["Coast", "Nairobi"]);
    expect(names(await list("parent_location_id=00000000-0000-4000-8000-000000000000"))).toEqual([]);
    const bad = await list("parent_location_id=not-a-uuid");
    expect(bad.status).toBe(200);
    expect(bad.body.objects).toEqual([]);
  });

  it("a filter value with a NUL character matches nothing, never a 500", async () => {
    await tree();
    for (const q of ["name=%00", "site_code=ke%00", "location_type_code=country%00", "parent_location_id=%00"]) {
      const res = await list(q);
      expect(res.status, q).toBe(200);
      expect(res.body.objects, q).toEqual([]);
    }
  });

  it("filters combine (AND)", async () => {
    const t = await tree();
    expect(names(await list(`parent_location_id=${t.kenya.location_id}&name=Coast`))).toEqual(["Coast"]);
    expect(names(await list(`parent_location_id=${t.uganda.location_id}&name=Coast`))).toEqual([]);
  });
});

describe("last_modified filters (CONTRACT §1 Dates): a date covers the whole day; naive datetimes are UTC", () => {
  async function fourTimes() {
    const [a, b, c, d] = await seedRoots(4);
    await setModified(a, "2024-03-10T23:59:59.999Z");
    await setModified(b, "2024-03-11T00:00:00.000Z");
    await setModified(c, "2024-03-11T23:59:59.999Z");
    await setModified(d, "2024-03-12T00:00:00.000Z");
  }
  const filtered = async (q: string) =>
    names(await list(`${q}&order_by=last_modified`))
      .map((n) => "abcd"[Number(n.slice(-1))])
      .join("");

  it("gte D from 00:00 on D; gt D after the end of D; lt D before 00:00 on D; lte D through the end of D", async () => {
    await fourTimes();
    expect(await filtered("last_modified.gte=2024-03-11")).toBe("bcd");
    expect(await filtered("last_modified.gt=2024-03-11")).toBe("d");
    expect(await filtered("last_modified.lt=2024-03-11")).toBe("a");
    expect(await filtered("last_modified.lte=2024-03-11")).toBe("abc");
    expect(await filtered("last_modified.gte=2024-03-11&last_modified.lte=2024-03-11")).toBe("bc");
  });

  it("datetimes compare exactly, naive = UTC, offsets honoured", async () => {
    await fourTimes();
    expect(await filtered("last_modified.gt=2024-03-11T00:00:00")).toBe("cd");
    expect(await filtered("last_modified.gte=2024-03-11T00:00:00")).toBe("bcd");
    expect(await filtered("last_modified.gte=2024-03-11T01:00:00%2B01:00")).toBe("bcd");
    expect(await filtered("last_modified.lt=2024-03-11T23:59:59.999000Z")).toBe("ab");
    expect(await filtered("last_modified.lte=2024-03-11T23:59:59.999000")).toBe("abc");
  });

  it("a value read back from last_modified, used as gt, excludes that location (incremental pulls)", async () => {
    await fourTimes();
    const all = (await list("order_by=last_modified")).body.objects;
    expect(await filtered(`last_modified.gt=${all[1].last_modified}`)).toBe("cd");
    expect(await filtered(`last_modified.gte=${all[1].last_modified}`)).toBe("bcd");
  });

  it("an invalid value is 400 `Cannot parse datetime '<v>'`", async () => {
    for (const v of ["2020-02-30", "yesterday", "2024-13-01"]) {
      const res = await list(`last_modified.gte=${v}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: `Cannot parse datetime '${v}'` });
    }
  });

  it("the extreme days 0001-01-01 and 9999-12-31 are accepted, never a 500", async () => {
    await fourTimes();
    expect(await filtered("last_modified.lte=9999-12-31")).toBe("abcd");
    expect(await filtered("last_modified.gt=9999-12-31")).toBe("");
    expect(await filtered("last_modified.gte=0001-01-01")).toBe("abcd");
  });
});

describe("order_by=last_modified|-last_modified; another value is 400", () => {
  it("last_modified is oldest first, -last_modified newest first", async () => {
    const [a, b, c] = await seedRoots(3);
    await setModified(a, "2024-05-02T00:00:00Z");
    await setModified(b, "2024-05-03T00:00:00Z");
    await setModified(c, "2024-05-01T00:00:00Z");
    expect(names(await list("order_by=last_modified"))).toEqual(["Country 2", "Country 0", "Country 1"]);
    expect(names(await list("order_by=-last_modified"))).toEqual(["Country 1", "Country 0", "Country 2"]);
  });

  it("order_by=name (or any other value) is a 400 with an error body", async () => {
    for (const value of ["name", "-name", "site_code", ""]) {
      const res = await list(`order_by=${value}`);
      expect(res.status, value).toBe(400);
      expect(Object.keys(res.body)).toEqual(["error"]);
      expect(typeof res.body.error).toBe("string");
    }
  });
});

describe("permissions and domain isolation (CONTRACT §1)", () => {
  it("a reader (view_locations) may list", async () => {
    await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const res = await app.http().get(`${LOCATIONS}?format=json`).set("Authorization", app.reader.authorization);
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(["Kenya"]);
  });

  it("a non-member is 403, a member without view/edit_locations is 403, no credentials is 401", async () => {
    await createDomain(app, "other");
    const outsider = await createUser(app, { domain: "other", permissions: ["access_api", "edit_locations"] });
    const caseUser = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    const noApi = await createUser(app, { domain: "demo", permissions: ["view_locations"] });
    for (const user of [outsider, caseUser, noApi]) {
      const res = await app.http().get(`${LOCATIONS}?format=json`).set("Authorization", user.authorization);
      expect(res.status).toBe(403);
      expect(Object.keys(res.body)).toEqual(["error"]);
    }
    const anonymous = await app.http().get(`${LOCATIONS}?format=json`);
    expect(anonymous.status).toBe(401);
    expect(Object.keys(anonymous.body)).toEqual(["error"]);
  });

  it("an unknown domain: 404 for a superuser, 403 for anyone else", async () => {
    const admin = await createUser(app, { superuser: true });
    const asAdmin = await app.http().get("/a/nowhere/api/location/v2/?format=json").set("Authorization", admin.authorization);
    expect(asAdmin.status).toBe(404);
    expect(Object.keys(asAdmin.body)).toEqual(["error"]);
    const asEditor = await app.http().get("/a/nowhere/api/location/v2/?format=json").set("Authorization", app.editor.authorization);
    expect(asEditor.status).toBe(403);
  });

  it("another domain's locations are neither listed nor counted", async () => {
    await createDomain(app, "other");
    await (await app.services.locationTypes.in(app.root, "other", "admin")).create({ code: "country", name: "Country" });
    await (await app.services.locations.in(app.root, "other", "write")).create({ name: "Elsewhere", typeCode: "country" });
    await app.createLocation({ name: "Kenya", location_type_code: "country" });
    const res = await list();
    expect(names(res)).toEqual(["Kenya"]);
    expect(res.body.meta.total_count).toBe(1);
    expect(names(await list("name=Elsewhere"))).toEqual([]);
  });
});
