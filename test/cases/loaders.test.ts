import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.ts";
import { createCaseLoaders } from "../../src/cases/case.loaders.ts";
import { createDomain, createUser } from "../helpers/app.ts";
import { buildCaseApp, type CaseTestApp } from "../helpers/cases.ts";
import { userRow } from "../helpers/rows.ts";

/** GraphQL's case relation loaders read only through the caller's read scope of each domain (caseReads.in). */

let app: CaseTestApp;
beforeEach(async () => {
  app = await buildCaseApp();
});
afterEach(() => app.close());

async function principalOf(username: string): Promise<Principal> {
  const user = await userRow(app, username);
  return { userId: user.id, username: user.username, isSuperuser: false, scheme: "apikey" };
}

describe("case loaders read through the caller's read scope", () => {
  it("relations of a case are read through caseReads.in: a reader gets them, a caller without case-read permission gets nothing", async () => {
    const parent = await app.createCase({ case_name: "parent" });
    const child = await app.createCase({
      case_name: "child",
      indices: { parent: { case_id: parent.case_id, case_type: "t", relationship: "child" } },
    });
    await createDomain(app, "other");
    const stranger = await createUser(app, { domain: "other", permissions: ["access_api", "edit_data"] });
    const noViewData = await createUser(app, { domain: "demo", permissions: ["access_api", "view_locations"] });

    const reader = createCaseLoaders(await principalOf(app.reader.username), app.services.caseReads);
    expect((await reader.case("demo", child.case_id))?.caseName).toBe("child");
    expect((await reader.related("demo", parent.case_id, "child", 100)).map((c) => c.id)).toEqual([child.case_id]);
    expect(await reader.forms("demo", parent.case_id, 100)).toHaveLength(1);

    for (const username of [stranger.username, noViewData.username]) {
      const loaders = createCaseLoaders(await principalOf(username), app.services.caseReads);
      expect(await loaders.case("demo", child.case_id)).toBeNull();
      expect(await loaders.related("demo", parent.case_id, "child", 100)).toEqual([]);
      expect(await loaders.forms("demo", parent.case_id, 100)).toEqual([]);
      expect(await loaders.case("nowhere", child.case_id)).toBeNull();
    }
  });

  it("F1: forms(first) reads the oldest `first` forms of each case and no more; openedBy reads one", async () => {
    const c = await app.createCase({ case_name: "v1" });
    for (const name of ["v2", "v3"]) expect((await app.put(c.case_id, { case_name: name })).status).toBe(200);
    const reader = createCaseLoaders(await principalOf(app.reader.username), app.services.caseReads);
    const names = (forms: { xml: string }[]) => forms.map((f) => /<case_name>([^<]*)</.exec(f.xml)?.[1]);
    expect(names(await reader.forms("demo", c.case_id, 2))).toEqual(["v1", "v2"]);
    expect(names(await reader.forms("demo", c.case_id, 1))).toEqual(["v1"]);
    expect(names(await reader.forms("demo", c.case_id, 100))).toEqual(["v1", "v2", "v3"]);
  });
});
