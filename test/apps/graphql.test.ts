import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { WebSocket } from "ws";
import yazl from "yazl";
import { graphql } from "../generated/gql.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { createApp, postImport } from "../helpers/archives.ts";
import { countQueries } from "../helpers/db.ts";
import { errorCodes, gql } from "../helpers/graphql.ts";

/** CONTRACT §5 for apps: import and upload over the GraphQL multipart spec, jobs and live progress. */

const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), Buffer.alloc(64)]);

function zip(entries: Record<string, Buffer>): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries)) archive.addBuffer(data, name);
  archive.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    archive.outputStream.on("data", (c: Buffer) => chunks.push(c));
    archive.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
    archive.outputStream.on("error", reject);
  });
}

const SOURCE = {
  doc_type: "Application",
  modules: [{ icon: "jr://file/commcare/image/one.png" }, { icon: "jr://file/commcare/image/two.png" }],
};

const AppsPage = graphql(`
  query GqlAppsWithMedia($domain: String!) {
    apps(domain: $domain) {
      name
      versions { version source }
      multimediaReferences { path mediaType present file { md5 } }
      multimedia { md5 mediaClass }
    }
  }
`);

const TwoDomains = graphql(`
  query GqlAppsOfTwoDomains($first: String!, $second: String!) {
    first: apps(domain: $first) { name versions { version } multimediaReferences { path present } multimedia { md5 } }
    second: apps(domain: $second) { name versions { version } multimediaReferences { path present } multimedia { md5 } }
  }
`);

let app: TestApp;
let user: TestUser;

/** A GraphQL multipart request (the preflight header satisfies CSRF prevention). */
function upload(query: string, variables: Record<string, unknown>, file: Buffer, name: string) {
  return app
    .http()
    .post("/graphql")
    .set("Authorization", user.authorization)
    .set("apollo-require-preflight", "true")
    .field("operations", JSON.stringify({ query, variables: { ...variables, file: null } }))
    .field("map", JSON.stringify({ 0: ["variables.file"] }))
    .attach("0", file, name);
}

const post = (query: string, variables: Record<string, unknown>) =>
  app.http().post("/graphql").set("Authorization", user.authorization).send({ query, variables });

async function importApp(): Promise<string> {
  const res = await upload(
    'mutation($domain: String!, $file: Upload!) { importApp(domain: $domain, file: $file, appName: "Clinic") { appId created version warnings } }',
    { domain: "demo" },
    Buffer.from(JSON.stringify(SOURCE)),
    "app.json",
  );
  expect(res.body.errors).toBeUndefined();
  return res.body.data.importApp.appId;
}

async function waitForJob(processingId: string) {
  for (let i = 0; i < 100; i++) {
    const res = await post(
      "query($d: String!, $p: ID!) { multimediaJob(domain: $d, processingId: $p) { complete failed progress { percent current total } result { matchedCount } } }",
      { d: "demo", p: processingId },
    );
    if (res.body.data?.multimediaJob.complete || res.body.data?.multimediaJob.failed) return res.body.data.multimediaJob;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("job did not finish");
}

describe("apps over GraphQL", () => {
  beforeEach(async () => {
    app = await build();
    await createDomain(app, "demo");
    user = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
  });
  afterEach(() => app.close());

  it("importApp creates an app with a missing-media warning; a second import is version 2", async () => {
    const res = await upload(
      'mutation($domain: String!, $file: Upload!) { importApp(domain: $domain, file: $file, appName: "Clinic") { appId created version warnings } }',
      { domain: "demo" },
      Buffer.from(JSON.stringify(SOURCE)),
      "app.json",
    );
    const created = res.body.data.importApp;
    expect(created).toMatchObject({ created: true, version: 1 });
    expect(created.warnings[0]).toMatch(/missing multimedia file\(s\): 2/);
    const again = await upload(
      "mutation($domain: String!, $file: Upload!, $id: ID) { importApp(domain: $domain, file: $file, appId: $id) { created version } }",
      { domain: "demo", id: created.appId },
      Buffer.from(JSON.stringify(SOURCE)),
      "app.json",
    );
    expect(again.body.data.importApp).toEqual({ created: false, version: 2 });
  });

  it("gives the REST messages as BAD_USER_INPUT", async () => {
    const res = await upload(
      'mutation($domain: String!, $file: Upload!) { importApp(domain: $domain, file: $file, appName: "X") { appId } }',
      { domain: "demo" },
      Buffer.from("not json"),
      "app.json",
    );
    expect(errorCodes(res.body)).toEqual(["BAD_USER_INPUT"]);
    expect(res.body.errors[0].message).toBe("Invalid JSON file");
  });

  it("uploadMultimedia queues a job whose result maps the app's references", async () => {
    const appId = await importApp();
    const res = await upload(
      "mutation($domain: String!, $appId: ID!, $file: Upload!) { uploadMultimedia(domain: $domain, appId: $appId, file: $file) }",
      { domain: "demo", appId },
      await zip({ "commcare/image/ONE.png": PNG }),
      "media.zip",
    );
    const processingId = res.body.data.uploadMultimedia;
    expect(processingId).toMatch(/^dl-[0-9a-f]{32}$/);
    const job = await waitForJob(processingId);
    expect(job).toMatchObject({ complete: true, failed: false, progress: { percent: 100, current: 1, total: 1 } });
    expect(job.result.matchedCount).toBe(1);

    const view = await post(
      "query($d: String!, $id: ID!) { app(domain: $d, appId: $id) { appId name docType version versions { version } multimediaReferences { path mediaType present } multimedia { contentType mediaClass } } }",
      { d: "demo", id: appId },
    );
    expect(view.body.data.app).toEqual({
      appId,
      name: "Clinic",
      docType: "APPLICATION",
      version: 1,
      versions: [{ version: 1 }],
      multimediaReferences: [
        { path: "jr://file/commcare/image/one.png", mediaType: "IMAGE", present: true },
        { path: "jr://file/commcare/image/two.png", mediaType: "IMAGE", present: false },
      ],
      multimedia: [{ contentType: "image/png", mediaClass: "IMAGE" }],
    });
  });

  it("refuses a user without edit_apps with FORBIDDEN", async () => {
    const other = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
    const res = await app.http().post("/graphql").set("Authorization", other.authorization).send({ query: '{ apps(domain: "demo") { id } }' });
    expect(errorCodes(res.body)).toEqual(["FORBIDDEN"]);
  });
});

describe("Subscription.multimediaProgress", () => {
  let client: Client | undefined;
  beforeEach(async () => {
    app = await build({ workers: 0 });
    await createDomain(app, "demo");
    user = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
  });
  afterEach(async () => {
    await client?.dispose();
    await app.close();
  });

  it("pushes the current state, every progress change and the final result", async () => {
    const appId = await importApp();
    const entries = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`commcare/image/f${i}.png`, Buffer.concat([PNG, Buffer.from([i])])]));
    const res = await upload(
      "mutation($domain: String!, $appId: ID!, $file: Upload!) { uploadMultimedia(domain: $domain, appId: $appId, file: $file) }",
      { domain: "demo", appId },
      await zip(entries),
      "media.zip",
    );
    const processingId = res.body.data.uploadMultimedia;
    const url = `${(await app.server.listen(0, "127.0.0.1")).replace("http", "ws")}/graphql`;
    client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: user.authorization }, retryAttempts: 0 });
    const events: { state: string; complete: boolean; progress: { current: number }; result: { unmatchedCount: number } | null }[] = [];
    const done = (async () => {
      for await (const event of client!.iterate<{ multimediaProgress: (typeof events)[number] }>({
        query: `subscription { multimediaProgress(domain: "demo", processingId: "${processingId}") { state complete progress { current total percent } result { unmatchedCount } } }`,
      })) {
        events.push(event.data!.multimediaProgress);
      }
    })();
    // the subscription is there once its first event (the state now) came
    for (let i = 0; i < 600 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    // The job waited (no worker in this process) until the subscriber was there: run it now.
    app.services.worker.start(1);
    await done;
    expect(events[0]).toMatchObject({ state: "QUEUED", complete: false, progress: { current: 0 } });
    expect(events[1]).toMatchObject({ state: "RUNNING", progress: { current: 0 } });
    // progress only grows; the source publishes at most PROGRESS_EVENTS_PER_SECOND, so some entries may be coalesced
    const currents = events.map((e) => e.progress.current);
    expect(currents).toEqual([...currents].sort((a, b) => a - b));
    expect(events.at(-1)).toMatchObject({ state: "COMPLETE", complete: true, progress: { current: 5 }, result: { unmatchedCount: 5 } });
  });
});

describe("per-app fields are batched", () => {
  let counter: ReturnType<typeof countQueries>;
  beforeEach(async () => {
    app = await build({}, (db) => (counter = countQueries(db)).db);
    await createDomain(app, "demo");
    user = await createUser(app, { domain: "demo", permissions: ["edit_apps"] });
  });
  afterEach(() => app.close());

  /** An app in two versions whose image is uploaded (a file row mapped to it) and whose audio is not. */
  async function seedApp(index: number): Promise<void> {
    const source = (version: number) => ({
      doc_type: "Application",
      release: version,
      modules: [{ icon: `jr://file/commcare/image/app${index}.png` }, { audio: `jr://file/commcare/audio/app${index}.mp3` }],
    });
    const appId = await createApp(app, user.authorization, "demo", source(1), `App ${index}`);
    expect((await postImport(app, user.authorization, "demo", { appId, source: source(2) })).status).toBe(200);
    const domain = await app.db.prisma.domain.findUniqueOrThrow({ where: { name: "demo" } });
    const sha256 = String(index).padStart(64, "0");
    const file = await app.db.prisma.multimediaFile.create({
      data: {
        domainId: domain.id,
        sha256,
        md5: `md5-${index}`,
        size: 1n,
        contentType: "image/png",
        mediaClass: "AppImage",
        blobKey: `media/${sha256}`,
      },
    });
    await app.db.prisma.app.updateMany({
      where: { id: appId },
      data: { multimediaMap: { [`jr://file/commcare/image/app${index}.png`]: { fileId: file.id, mediaType: "image", sha256 } } },
    });
  }

  async function measure(expected: number): Promise<number> {
    counter.reset();
    const res = await gql(app, user.authorization, AppsPage, { domain: "demo" });
    const count = counter.count();
    expect(res.body.errors).toBeUndefined();
    const apps = res.body.data!.apps;
    expect(apps).toHaveLength(expected);
    apps.forEach((a, i) => {
      expect(a.name).toBe(`App ${i}`);
      expect(a.versions.map((v) => [v.version, (v.source as { release: number }).release])).toEqual([
        [2, 2],
        [1, 1],
      ]);
      expect(a.multimediaReferences).toEqual([
        { path: `jr://file/commcare/image/app${i}.png`, mediaType: "IMAGE", present: true, file: { md5: `md5-${i}` } },
        { path: `jr://file/commcare/audio/app${i}.mp3`, mediaType: "AUDIO", present: false, file: null },
      ]);
      expect(a.multimedia).toEqual([{ md5: `md5-${i}`, mediaClass: "IMAGE" }]);
    });
    return count;
  }

  it("a batch spanning two domains resolves each app's files within its own domain only", async () => {
    await seedApp(0);
    await createDomain(app, "other");
    const admin = await createUser(app, { superuser: true });
    const otherId = await createApp(app, admin.authorization, "other", { modules: [{ icon: "jr://file/commcare/image/app0.png" }] }, "Other");
    // a map entry naming the first domain's file (which no upload in "other" could produce)
    const demoMap = (await app.db.prisma.app.findFirstOrThrow({ where: { name: "App 0" } })).multimediaMap as object;
    await app.db.prisma.app.updateMany({ where: { id: otherId }, data: { multimediaMap: demoMap } });
    const res = await gql(app, admin.authorization, TwoDomains, { first: "demo", second: "other" });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.first).toEqual([
      {
        name: "App 0",
        versions: [{ version: 2 }, { version: 1 }],
        multimediaReferences: [
          { path: "jr://file/commcare/image/app0.png", present: true },
          { path: "jr://file/commcare/audio/app0.mp3", present: false },
        ],
        multimedia: [{ md5: "md5-0" }],
      },
    ]);
    expect(res.body.data!.second).toEqual([
      {
        name: "Other",
        versions: [{ version: 1 }],
        multimediaReferences: [{ path: "jr://file/commcare/image/app0.png", present: false }],
        multimedia: [],
      },
    ]);
  });

  it("costs the same number of SQL statements for 2 apps and for 30 apps with versions, references and files", async () => {
    for (let i = 0; i < 2; i++) await seedApp(i);
    const small = await measure(2);
    for (let i = 2; i < 30; i++) await seedApp(i);
    // constant, not proportional (a DataLoader batch may split across ticks under load)
    expect(await measure(30)).toBeLessThanOrEqual(small + 2);
  });
});
