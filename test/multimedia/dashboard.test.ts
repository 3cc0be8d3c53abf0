import { createClient, type Client } from "graphql-ws";
import { WebSocket } from "ws";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { globalId } from "../../src/graphql/node.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { appSource, createApp, emptyZip, getStatus, mp3, png, postMultimedia, uploadAndWait, zip } from "../helpers/archives.ts";
import { errorCodes } from "../helpers/graphql.ts";

/**
 * CONTRACT §7.3 and §7.4 for apps and multimedia: App, AppVersion, MultimediaFile and
 * MultimediaJob are Node types (node() of anything hidden is null); MultimediaJob is typed for
 * dashboards, its `result` the REST body's content and `restStatus` the REST body itself;
 * `multimediaJobs` is a Relay connection over the history, newest first, whatever the REST
 * status's 1-hour expiry; `Subscription.multimediaJobs` follows every upload of a domain.
 */

let app: TestApp;

function post(user: TestUser, query: string, variables: Record<string, unknown> = {}) {
  return app.http().post("/graphql").set("Authorization", user.authorization).send({ query, variables });
}

const RESULT_FIELDS = `result {
  totalFiles processedFiles matchedCount unmatchedCount imageCount audioCount videoCount
  matchedFiles { path originalPath mediaClass md5 size contentType }
  unmatchedFiles { path reason }
}`;

describe("CONTRACT §7.3/§7.4 a finished upload over GraphQL", () => {
  let editor: TestUser;
  let noApps: TestUser;
  let outsider: TestUser;
  let appId: string;
  let processingId: string;
  let rest: Record<string, unknown>;
  let archiveSize: number;

  beforeAll(async () => {
    app = await build();
    await createDomain(app, "demo");
    await createDomain(app, "other");
    editor = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
    noApps = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data", "view_data"] });
    outsider = await createUser(app, { domain: "other", permissions: ["edit_apps"] });
    const paths = ["jr://file/commcare/image/a.png", "jr://file/commcare/audio/b.mp3"];
    appId = await createApp(app, editor.authorization, "demo", appSource({ paths }), "Clinic");
    const archive = await zip([
      { name: "commcare/" },
      { name: "commcare/image/a.png", data: png(1) },
      { name: "commcare/audio/b.mp3", data: mp3(1) },
      { name: "commcare/image/stray.png", data: png(2) },
      { name: "notes.txt", data: Buffer.from("not media") },
    ]);
    archiveSize = archive.length;
    const done = await uploadAndWait(app, editor.authorization, "demo", appId, archive);
    expect(done.status).toBe(200);
    rest = done.body;
    processingId = rest.processing_id as string;
  });
  afterAll(() => app.close());

  it("restStatus is the REST status body exactly (same keys, same order); the typed result holds the same content in camelCase", async () => {
    const res = await post(
      editor,
      `query($d: String!, $p: ID!) { multimediaJob(domain: $d, processingId: $p) {
        processingId state complete inQueue failed restStatus progress { current total percent } errors ${RESULT_FIELDS} } }`,
      { d: "demo", p: processingId },
    );
    expect(res.body.errors).toBeUndefined();
    const job = res.body.data.multimediaJob;
    expect(JSON.stringify(job.restStatus)).toBe(JSON.stringify(rest));
    const files = rest.matched_files as Record<string, { path: string; original_path: string; md5: string; size: number; content_type: string }[]>;
    const classes = { AppImage: "IMAGE", AppAudio: "AUDIO", AppVideo: "VIDEO" } as const;
    expect(job).toMatchObject({
      processingId,
      state: "COMPLETE",
      complete: true,
      inQueue: false,
      failed: false,
      progress: rest.progress,
      errors: rest.errors,
      result: {
        totalFiles: rest.total_files,
        processedFiles: rest.processed_files,
        matchedCount: rest.matched_count,
        unmatchedCount: rest.unmatched_count,
        imageCount: rest.image_count,
        audioCount: rest.audio_count,
        videoCount: rest.video_count,
        matchedFiles: (["AppImage", "AppAudio", "AppVideo"] as const).flatMap((name) =>
          files[name]!.map((f) => ({
            path: f.path,
            originalPath: f.original_path,
            mediaClass: classes[name],
            md5: f.md5,
            size: f.size,
            contentType: f.content_type,
          })),
        ),
        unmatchedFiles: rest.unmatched_files,
      },
    });
    expect(job.result.matchedCount).toBe(2);
    expect(job.result.matchedFiles.map((f: { mediaClass: string }) => f.mediaClass)).toEqual(["IMAGE", "AUDIO"]);
  });

  it("a job records who uploaded what and when: uploadedBy, fileName, sizeBytes, createdAt ≤ startedAt ≤ finishedAt, attempts, app", async () => {
    const res = await post(
      editor,
      `query($d: String!, $p: ID!) { multimediaJob(domain: $d, processingId: $p) {
        uploadedBy { username } fileName sizeBytes createdAt startedAt finishedAt attempts app { appId name } } }`,
      { d: "demo", p: processingId },
    );
    const job = res.body.data.multimediaJob;
    expect(job).toMatchObject({ uploadedBy: { username: editor.username }, fileName: "media.zip", sizeBytes: archiveSize, attempts: 1 });
    expect(job.app).toEqual({ appId, name: "Clinic" });
    const [created, started, finished] = [job.createdAt, job.startedAt, job.finishedAt].map((t: string) => Date.parse(t));
    expect(created).toBeLessThanOrEqual(started!);
    expect(started).toBeLessThanOrEqual(finished!);
  });

  it("App, AppVersion, MultimediaFile and MultimediaJob have opaque global ids that node(id) fetches again; plain keys stay (appId, version, fileId, processingId)", async () => {
    const view = await post(
      editor,
      `query($d: String!, $a: ID!, $p: ID!) {
        app(domain: $d, appId: $a) { id appId docType versions { id version app { appId } } multimedia { id fileId mediaClass } }
        multimediaJob(domain: $d, processingId: $p) { id processingId }
      }`,
      { d: "demo", a: appId, p: processingId },
    );
    expect(view.body.errors).toBeUndefined();
    const { app: found, multimediaJob: job } = view.body.data;
    expect(found).toMatchObject({ appId, docType: "APPLICATION", versions: [{ version: 1, app: { appId } }] });
    expect(found.multimedia).toHaveLength(2);
    const ids = [found.id, found.versions[0].id, found.multimedia[0].id, job.id];
    for (const id of ids) expect(id).not.toContain(appId);
    const res = await post(
      editor,
      `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id
        ... on App { appId } ... on AppVersion { version } ... on MultimediaFile { fileId mediaClass } ... on MultimediaJob { processingId state } } }`,
      { ids },
    );
    expect(res.body).toEqual({
      data: {
        nodes: [
          { __typename: "App", id: ids[0], appId },
          { __typename: "AppVersion", id: ids[1], version: 1 },
          { __typename: "MultimediaFile", id: ids[2], fileId: found.multimedia[0].fileId, mediaClass: found.multimedia[0].mediaClass },
          { __typename: "MultimediaJob", id: ids[3], processingId, state: "COMPLETE" },
        ],
      },
    });
  });

  it("node(id) of an app, version, file or job is null for a member without edit_apps, for another domain's member, and for ids naming nothing", async () => {
    const view = await post(editor, `query($d: String!, $a: ID!) { app(domain: $d, appId: $a) { id versions { id } multimedia { id } } }`, {
      d: "demo",
      a: appId,
    });
    const a = view.body.data.app;
    const ids = [a.id, a.versions[0].id, a.multimedia[0].id, globalId("MultimediaJob", "demo", processingId)];
    const query = "query($ids: [ID!]!) { nodes(ids: $ids) { id } }";
    for (const user of [noApps, outsider]) {
      expect((await post(user, query, { ids })).body).toEqual({ data: { nodes: [null, null, null, null] } });
    }
    const nothing = [
      globalId("App", "demo", "no-such-app"),
      globalId("AppVersion", "demo", `${appId}/9`),
      globalId("AppVersion", "demo", "garbage"),
      globalId("MultimediaFile", "demo", "not-a-uuid"),
      globalId("MultimediaFile", "demo", "00000000-0000-4000-8000-000000000000"),
      globalId("MultimediaJob", "demo", "dl-00000000000000000000000000000000"),
      globalId("MultimediaJob", "other", processingId),
    ];
    expect((await post(editor, query, { ids: nothing })).body).toEqual({ data: { nodes: nothing.map(() => null) } });
  });
});

describe("CONTRACT §7.4 multimediaJobs: the domain's history as a Relay connection", () => {
  let editor: TestUser;
  let appId: string;
  let otherAppId: string;
  /** processing ids in upload order (oldest first) */
  let uploads: string[];

  const PAGE = `totalCount edges { cursor node { processingId state } } nodes { processingId } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;
  const jobs = (args: Record<string, unknown>) =>
    post(
      editor,
      `query($d: String!, $a: ID, $s: [MultimediaJobState!], $first: Int, $after: String, $last: Int, $before: String) {
        multimediaJobs(domain: $d, appId: $a, states: $s, first: $first, after: $after, last: $last, before: $before) { ${PAGE} } }`,
      { d: "demo", ...args },
    );
  const ids = (res: { body: { data: { multimediaJobs: { edges: { node: { processingId: string } }[] } } } }) =>
    res.body.data.multimediaJobs.edges.map((e) => e.node.processingId);

  beforeEach(async () => {
    // no worker: the jobs stay queued unless a test settles them
    app = await build({ workers: 0 });
    await createDomain(app, "demo");
    editor = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
    appId = await createApp(app, editor.authorization, "demo", appSource(), "One");
    otherAppId = await createApp(app, editor.authorization, "demo", appSource(), "Two");
    uploads = [];
    for (let i = 0; i < 5; i++) {
      const res = await postMultimedia(app, editor.authorization, "demo", appId, await emptyZip());
      uploads.push(res.body.processing_id);
    }
  });
  afterEach(() => app.close());

  it("pages newest first with first/after: each edge has its own cursor, totalCount is the same on every page, pageInfo is exact", async () => {
    const newest = [...uploads].reverse();
    const page1 = await jobs({ first: 2 });
    expect(page1.body.errors).toBeUndefined();
    const c1 = page1.body.data.multimediaJobs;
    expect(ids(page1)).toEqual(newest.slice(0, 2));
    expect(c1.nodes.map((n: { processingId: string }) => n.processingId)).toEqual(newest.slice(0, 2));
    expect(c1).toMatchObject({ totalCount: 5, pageInfo: { hasNextPage: true, hasPreviousPage: false } });
    expect(c1.pageInfo.startCursor).toBe(c1.edges[0].cursor);
    expect(c1.pageInfo.endCursor).toBe(c1.edges[1].cursor);
    expect(c1.edges[0].cursor).not.toBe(c1.edges[1].cursor);
    // after the first edge's cursor: right after that edge
    expect(ids(await jobs({ first: 2, after: c1.edges[0].cursor }))).toEqual(newest.slice(1, 3));
    const page2 = await jobs({ first: 2, after: c1.pageInfo.endCursor });
    expect(ids(page2)).toEqual(newest.slice(2, 4));
    expect(page2.body.data.multimediaJobs).toMatchObject({ totalCount: 5, pageInfo: { hasNextPage: true, hasPreviousPage: true } });
    const page3 = await jobs({ first: 2, after: page2.body.data.multimediaJobs.pageInfo.endCursor });
    expect(ids(page3)).toEqual(newest.slice(4));
    expect(page3.body.data.multimediaJobs).toMatchObject({ totalCount: 5, pageInfo: { hasNextPage: false, hasPreviousPage: true } });
  });

  it("pages backwards with last/before", async () => {
    const newest = [...uploads].reverse();
    const tail = await jobs({ last: 2 });
    expect(ids(tail)).toEqual(newest.slice(3));
    expect(tail.body.data.multimediaJobs.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const before = await jobs({ last: 2, before: tail.body.data.multimediaJobs.pageInfo.startCursor });
    expect(ids(before)).toEqual(newest.slice(1, 3));
    expect(before.body.data.multimediaJobs.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
  });

  it("filters by states and by app; a cursor brought to another filter is BAD_USER_INPUT", async () => {
    await app.db.prisma.multimediaJob.updateMany({ where: { id: uploads[0] }, data: { status: "complete", result: {}, completedAt: new Date() } });
    await app.db.prisma.multimediaJob.updateMany({ where: { id: uploads[1] }, data: { status: "failed", errors: ["x"], completedAt: new Date() } });
    const other = (await postMultimedia(app, editor.authorization, "demo", otherAppId, await emptyZip())).body.processing_id;

    const settled = await jobs({ s: ["COMPLETE", "FAILED"] });
    expect(ids(settled)).toEqual([uploads[1], uploads[0]]);
    expect(settled.body.data.multimediaJobs.edges.map((e: { node: { state: string } }) => e.node.state)).toEqual(["FAILED", "COMPLETE"]);
    expect(settled.body.data.multimediaJobs.totalCount).toBe(2);

    const queued = await jobs({ s: ["QUEUED"], a: appId, first: 1 });
    expect(ids(queued)).toEqual([uploads[4]]);
    expect(queued.body.data.multimediaJobs.totalCount).toBe(3);
    expect(ids(await jobs({ a: otherAppId }))).toEqual([other]);

    const cursor = queued.body.data.multimediaJobs.pageInfo.endCursor;
    for (const args of [
      { first: 1, after: cursor },
      { a: appId, first: 1, after: cursor },
      { s: ["QUEUED"], first: 1, after: cursor },
    ]) {
      const res = await jobs(args);
      expect([args, errorCodes(res.body)]).toEqual([args, ["BAD_USER_INPUT"]]);
    }
    expect(errorCodes((await jobs({ first: 1, after: "not a cursor" })).body)).toEqual(["BAD_USER_INPUT"]);
    expect(errorCodes((await jobs({ first: 1, last: 1 })).body)).toEqual(["BAD_USER_INPUT"]);
    expect(errorCodes((await jobs({ first: -1 })).body)).toEqual(["BAD_USER_INPUT"]);
  });

  it("keeps jobs for MULTIMEDIA_JOB_HISTORY_DAYS whatever the REST status's 1-hour expiry; older ones are gone and purged", async () => {
    const [expired, ancient] = uploads;
    const hourAgo = new Date(Date.now() - 3600_000);
    await app.db.prisma.multimediaJob.updateMany({
      where: { id: expired },
      data: { status: "complete", result: {}, completedAt: hourAgo, expiresAt: new Date(Date.now() - 1000) },
    });
    const eightDays = new Date(Date.now() - 8 * 24 * 3600_000);
    await app.db.prisma.multimediaJob.updateMany({
      where: { id: ancient },
      data: { status: "complete", result: {}, createdAt: eightDays, completedAt: eightDays, expiresAt: eightDays },
    });

    const status = await getStatus(app, editor.authorization, "demo", appId, expired!);
    expect([status.status, status.body]).toEqual([404, { success: false, error: "Processing ID not found or expired" }]);
    const listed = await jobs({});
    expect(ids(listed)).toEqual([...uploads].reverse().filter((id) => id !== ancient));
    expect(listed.body.data.multimediaJobs.totalCount).toBe(4);
    const one = await post(editor, "query($d: String!, $p: ID!) { multimediaJob(domain: $d, processingId: $p) { state } }", {
      d: "demo",
      p: expired,
    });
    expect(one.body.data.multimediaJob).toEqual({ state: "COMPLETE" });
    const gone = await post(editor, "query($d: String!, $p: ID!) { multimediaJob(domain: $d, processingId: $p) { state } }", {
      d: "demo",
      p: ancient,
    });
    expect(errorCodes(gone.body)).toEqual(["NOT_FOUND"]);

    await app.services.multimediaJobs.purgeExpired();
    const rows = await app.db.prisma.multimediaJob.findMany({ select: { id: true } });
    expect(rows.map((r) => r.id).sort()).toEqual(uploads.filter((id) => id !== ancient).sort());
  });

  it("a member without edit_apps is FORBIDDEN", async () => {
    const reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
    const res = await app
      .http()
      .post("/graphql")
      .set("Authorization", reader.authorization)
      .send({ query: '{ multimediaJobs(domain: "demo") { totalCount } }' });
    expect(errorCodes(res.body)).toEqual(["FORBIDDEN"]);
  });
});

describe("CONTRACT §7.4 Subscription.multimediaJobs", () => {
  let editor: TestUser;
  let outsider: TestUser;
  let appId: string;
  let url: string;
  const clients: Client[] = [];

  beforeEach(async () => {
    app = await build({ workers: 0 });
    await createDomain(app, "demo");
    await createDomain(app, "other");
    editor = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
    outsider = await createUser(app, { domain: "other", permissions: ["edit_apps"] });
    appId = await createApp(app, editor.authorization, "demo", appSource({ paths: ["jr://file/commcare/image/a.png"] }), "Clinic");
    url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.dispose()));
    await app.close();
  });

  type FeedEvent = {
    at: number;
    processingId: string;
    state: string;
    progress: { current: number; total: number };
    result: { totalFiles: number } | null;
  };

  async function follow(user: TestUser, domain: string, appFilter?: string) {
    const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: user.authorization }, retryAttempts: 0 });
    clients.push(client);
    const events: FeedEvent[] = [];
    const args = appFilter ? `domain: "${domain}", appId: "${appFilter}"` : `domain: "${domain}"`;
    const iterator = client.iterate<{ multimediaJobs: Omit<FeedEvent, "at"> }>({
      query: `subscription { multimediaJobs(${args}) { processingId state progress { current total } result { totalFiles } } }`,
    });
    const done = (async () => {
      for await (const event of iterator) {
        if (event.errors) throw new Error(JSON.stringify(event.errors));
        events.push({ at: Date.now(), ...event.data!.multimediaJobs });
      }
    })();
    await new Promise((r) => setTimeout(r, 300)); // let the subscription start
    return { events, done };
  }

  async function until(check: () => boolean, ms = 60_000) {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error("timed out");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("a 300-entry upload: first event QUEUED, then RUNNING, progress at most 10 per second, the final COMPLETE with its result; another domain's subscriber sees nothing", async () => {
    const feed = await follow(editor, "demo");
    const appFeed = await follow(editor, "demo", appId);
    const foreign = await follow(outsider, "other");
    const entries = Array.from({ length: 300 }, (_, i) => ({ name: `notes/${i}.txt`, data: Buffer.from(`n${i}`) }));
    const upload = await postMultimedia(app, editor.authorization, "demo", appId, await zip(entries));
    const processingId = upload.body.processing_id;
    await until(() => feed.events.length > 0);
    expect(feed.events[0]).toMatchObject({ processingId, state: "QUEUED", progress: { current: 0 }, result: null });

    await app.services.worker.start(1);
    await until(() => feed.events.at(-1)?.state === "COMPLETE" && appFeed.events.at(-1)?.state === "COMPLETE");
    for (const { events } of [feed, appFeed]) {
      expect(events.map((e) => e.processingId).every((id) => id === processingId)).toBe(true);
      expect(events[0]!.state).toBe("QUEUED");
      expect(events[1]!.state).toBe("RUNNING");
      expect(events.at(-1)).toMatchObject({ state: "COMPLETE", progress: { current: 300, total: 300 }, result: { totalFiles: 300 } });
      const progress = events.slice(2, -1);
      expect(progress.every((e) => e.state === "RUNNING")).toBe(true);
      // Received over a WebSocket on a loaded machine, events sent within the bound may arrive
      // bunched by some tens of milliseconds: ~10 per second, with that jitter allowed for (the exact
      // bound, timed in process, is test/multimedia/coalescing.test.ts).
      for (const e of progress) expect(progress.filter((o) => o.at >= e.at && o.at < e.at + 1000).length).toBeLessThanOrEqual(12);
      const span = (progress.at(-1)?.at ?? 0) - (progress[0]?.at ?? 0);
      expect(progress.length).toBeLessThanOrEqual(10 * (Math.ceil(span / 1000) + 1));
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(foreign.events).toEqual([]);
  });

  it("a feed of one app sees none of another app's uploads; an app the domain lacks is NOT_FOUND; a member without edit_apps is FORBIDDEN", async () => {
    const otherApp = await createApp(app, editor.authorization, "demo", appSource(), "Other");
    const appFeed = await follow(editor, "demo", appId);
    const all = await follow(editor, "demo");
    await postMultimedia(app, editor.authorization, "demo", otherApp, await emptyZip());
    await until(() => all.events.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(appFeed.events).toEqual([]);

    const reader = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data"] });
    for (const [user, args, code] of [
      [editor, `domain: "demo", appId: "nope"`, "NOT_FOUND"],
      [reader, `domain: "demo"`, "FORBIDDEN"],
      [outsider, `domain: "demo"`, "FORBIDDEN"],
    ] as const) {
      const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: user.authorization }, retryAttempts: 0 });
      clients.push(client);
      const codes = await client
        .iterate({ query: `subscription { multimediaJobs(${args}) { processingId } }` })
        .next()
        .then(
          (r) => (r.value as { errors?: { extensions?: { code?: string } }[] })?.errors?.map((e) => e.extensions?.code),
          (errors: { extensions?: { code?: string } }[]) => errors.map((e) => e.extensions?.code),
        );
      expect([args, codes]).toEqual([args, [code]]);
    }
  });
});
