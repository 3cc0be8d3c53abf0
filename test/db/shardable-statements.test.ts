import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TaskAttempt } from "../../src/multimedia/job.queue.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, createApp, getMediaFile, png, uploadAndWait, zip } from "../helpers/archives.ts";
import { aroundStatements } from "../helpers/db.ts";

/**
 * CONTRACT §7.6, in the statements rather than the catalog (test/db/shardable.test.ts): a cluster
 * sharded by `domain_id` sends a statement to one shard only when it filters each per-domain table
 * on `domain_id`, and takes `FOR UPDATE` only in such a statement on one table, without a join or
 * a subquery. Every SQL statement the client sends is recorded (test/helpers/db.ts
 * aroundStatements) while a job runs its whole course through the worker and by hand, and while
 * cases are written; docs/scaling.md gives each shape's plan.
 */

let app: TestApp;
let user: TestUser;
let domainId: string;
const statements: string[] = [];
let recording = false;

beforeAll(async () => {
  app = await build({ workers: 1 }, (db) =>
    aroundStatements(db, (sql, run) => {
      if (recording) statements.push(sql);
      return run();
    }),
  );
  await createDomain(app, "demo");
  user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data", "edit_apps"] });
  domainId = (await app.db.prisma.domain.findUniqueOrThrow({ where: { name: "demo" } })).id;
});
afterAll(() => app?.close());
beforeEach(() => {
  statements.length = 0;
  recording = false;
});

/** The recorded statements on these tables, as sent (Prisma's quoted names or the raw SQL of the repositories). */
const on = (tables: RegExp) => statements.filter((sql) => tables.test(sql));

/** Whether a statement would go to one shard: an INSERT by the `domain_id` it writes, anything else by a `domain_id` equality. */
function namesTheDomain(sql: string): boolean {
  if (/^\s*INSERT\b/i.test(sql)) return /"?domain_id"?/.test(sql);
  return /"?domain_id"?\s*=\s*\$\d+/.test(sql);
}

async function until(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

const JOB_TABLES = /multimedia_(jobs|files)/;

describe("CONTRACT §7.6: every statement on a domain's jobs and files names the domain", () => {
  it("an upload run by the worker, its status and its media file: each job and file statement filters on domain_id", async () => {
    const paths = [1, 2].map((i) => `jr://file/commcare/image/i${i}.png`);
    const appId = await createApp(app, user.authorization, "demo", appSource({ paths }));
    const archive = await zip([1, 2].map((i) => ({ name: `commcare/image/i${i}.png`, data: png(i) })));
    recording = true;
    const done = await uploadAndWait(app, user.authorization, "demo", appId, archive);
    expect(done.body.complete).toBe(true);
    expect((await getMediaFile(app, user.authorization, "demo", appId, paths[0]!)).status).toBe(200);
    recording = false;
    const recorded = on(JOB_TABLES);
    // the upload's insert and count, the worker's begin, progress, stores and completion, the reads
    expect(recorded.length).toBeGreaterThan(6);
    expect(recorded.filter((sql) => !namesTheDomain(sql))).toEqual([]);
  });

  it("an attempt's progress, held-back publish, failure, requeue and the dead letter's give-up: each filters on domain_id", async () => {
    const appId = `${randomUUID().replaceAll("-", "")}`;
    await app.db.prisma.app.create({ data: { id: appId, domainId, name: "by hand", docType: "Application" } });
    const queued = async () => {
      const id = `dl-${randomUUID().replaceAll("-", "")}`;
      // archives that no worker can read: a requeued job is failed by the worker, also by its key
      await app.services.blobs.putBuffer(`archives/${id}`, Buffer.from("not a zip"));
      await app.db.prisma.multimediaJob.create({ data: { id, domainId, appId, archiveKey: `archives/${id}`, total: 3 } });
      return id;
    };
    const delivery = (processingId: string) => ({ id: randomUUID(), retryCount: 0, data: { processingId, domainId } }) as TaskAttempt;
    const [failed, requeued, givenUp] = [await queued(), await queued(), await queued()];
    const settled = (id: string) => async () =>
      ["complete", "failed"].includes((await app.db.prisma.multimediaJob.findFirstOrThrow({ where: { id, domainId } })).status);

    recording = true;
    const one = (await app.services.jobAttempts.begin(delivery(failed)))!;
    // a second progress within the same second is held back, then read again by its key
    await one.progress(1, 3);
    await one.progress(2, 3);
    await new Promise((r) => setTimeout(r, 1200));
    await one.fail("ZIP file is corrupt");
    await (await app.services.jobAttempts.begin(delivery(requeued)))!.requeue();
    await until(settled(requeued));
    await app.services.jobAttempts.begin(delivery(givenUp));
    await app.services.jobAttempts.giveUp({ processingId: givenUp, domainId });
    recording = false;

    const recorded = on(/multimedia_jobs/);
    expect(recorded.some((sql) => /^\s*SELECT\b/i.test(sql))).toBe(true);
    expect(recorded.filter((sql) => !namesTheDomain(sql))).toEqual([]);
    expect(await settled(givenUp)()).toBe(true);
  });
});

describe("CONTRACT §7.6: every row lock is taken on one table, filtered on domain_id", () => {
  it("case updates lock their cases by a statement on cases alone, and read the indices in another", async () => {
    const post = (body: unknown, method: "post" | "put" = "post", path = "") =>
      app
        .http()
        [method](`/a/demo/api/case/v2/${path}`)
        .set("Authorization", user.authorization)
        .send(body as object);
    const parent = (await post({ case_type: "household", case_name: "h", owner_id: "o" })).body.case;
    const child = (await post({ case_type: "person", case_name: "p", owner_id: "o" })).body.case;
    recording = true;
    const res = await post(
      [
        { case_id: child.case_id, create: false, indices: { parent: { case_id: parent.case_id, case_type: "household", relationship: "child" } } },
        { case_id: parent.case_id, create: false, properties: { size: "3" } },
      ],
      "put",
    );
    recording = false;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const locks = statements.filter((sql) => /\bFOR\s+(NO\s+KEY\s+)?UPDATE\b/i.test(sql));
    expect(locks.length).toBeGreaterThan(0);
    for (const sql of locks) {
      expect(sql, "one table, no join").not.toMatch(/\bJOIN\b/i);
      expect(sql, "no subquery").not.toMatch(/\(\s*SELECT\b/i);
      expect(namesTheDomain(sql), sql).toBe(true);
    }
  });
});
