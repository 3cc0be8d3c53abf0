import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { pgBouncerUnavailable } from "../helpers/pgbouncer.ts";
import { redisUnavailable } from "../helpers/redis.ts";
import {
  caseWrites,
  mediaArchive,
  mediaPlaces,
  prepareDomain,
  queryDatabase,
  startTopology,
  subscribeDashboard,
  until,
  upload,
  uploadStatus,
  whenLive,
  type CaseWrite,
  type Dashboard,
  type Topology,
} from "../helpers/topology.ts";

/**
 * CONTRACT §7.6, the scale-out engines together (test/helpers/topology.ts): two API processes
 * (`WORKERS=0`) and one worker (`WORKERS=1`) over one PostgreSQL database, one S3 bucket (s3rver,
 * signatures checked) and one Redis. A domain's dashboard (graphql-ws, `caseChanged` and
 * `multimediaJobs`) is subscribed on the first API process while case writes (REST and GraphQL)
 * and ZIP uploads go to the second: every event arrives, once; every upload completes with its
 * media in the bucket and none in the database or under a DATA_DIR; a kill -9 of the worker mid-job
 * loses nothing: a new worker finishes the job once the lease has run out.
 */

const LEASE_SECONDS = 10;
const BIG_ENTRIES = 400;
const unavailable = !usingPostgres() ? "needs the PostgreSQL run (npm run test:postgres)" : (redisUnavailable() ?? pgBouncerUnavailable());

describe.skipIf(unavailable)(
  `§7.6: one topology: two API processes and a worker behind PgBouncer, with S3 and Redis${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    let db: Database;
    let topology: Topology;
    let dashboard: Dashboard;
    let auth: string;
    let appId: string;
    /** the API process that takes the writes and uploads */
    let writer: string;

    beforeAll(async () => {
      db = await freshDatabase();
      topology = await startTopology(db.directUrl ?? db.url!, { JOB_LEASE_SECONDS: String(LEASE_SECONDS) });
      writer = topology.api[1].url;
      ({ auth, appId } = await prepareDomain(writer, BIG_ENTRIES));
      dashboard = subscribeDashboard(topology.api[0].url);
      await whenLive(dashboard, writer, auth);
    }, 300_000);

    afterAll(async () => {
      await dashboard?.dispose();
      await topology?.close();
      await db?.close();
    });

    /** Creates a case, updates it, closes it: through REST when `rest`, else GraphQL; the three writes. */
    async function caseLife(tag: string, rest: boolean): Promise<CaseWrite[]> {
      const [created, createAnswer] = rest
        ? await caseWrites.restCreate(writer, auth, tag, "1")
        : await caseWrites.graphqlCreate(writer, auth, tag, "1");
      expect(created, JSON.stringify(createAnswer.body)).toBeDefined();
      const update = rest ? caseWrites.restUpdate : caseWrites.graphqlUpdate;
      const [updated, updateAnswer] = await update(writer, auth, created!.caseId, "2");
      expect(updated, JSON.stringify(updateAnswer.body)).toBeDefined();
      const [closed, closeAnswer] = await update(writer, auth, created!.caseId, "3", true);
      expect(closed, JSON.stringify(closeAnswer.body)).toBeDefined();
      return [created!, updated!, closed!];
    }

    async function completed(processingId: string, timeoutMs: number) {
      return until(
        async () => {
          const status = await uploadStatus(writer, auth, appId, processingId);
          return status.body.complete ? status : undefined;
        },
        timeoutMs,
        `upload ${processingId} complete`,
      );
    }

    /** Every write reached the dashboard, once: as many events as writes, the same form ids, in each case's order. */
    async function expectDelivered(writes: CaseWrite[]): Promise<void> {
      await until(async () => (dashboard.cases.length >= writes.length ? true : undefined), 30_000, `${writes.length} case events`);
      await new Promise((resolve) => setTimeout(resolve, 500)); // a duplicate would come now
      expect(dashboard.cases.map((e) => e.formId).sort()).toEqual(writes.map((w) => w.formId).sort());
      for (const write of writes) expect(dashboard.cases.find((e) => e.formId === write.formId)!.caseId).toBe(write.caseId);
      expect(dashboard.errors).toEqual([]);
    }

    it("§7.6: case writes (REST and GraphQL) and uploads on one API process reach the dashboard on the other, every event once; every upload completes on the worker with its media in the bucket, none in the database or under a DATA_DIR", async () => {
      const before = await mediaPlaces(topology);
      const uploads = await Promise.all(
        ["a", "b", "c"].map(async (tag) => {
          const answer = await upload(writer, auth, appId, await mediaArchive(5, 1024, `small-${tag}`));
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);
          return answer.body.processing_id as string;
        }),
      );
      const lives = await Promise.all(Array.from({ length: 8 }, (_, i) => caseLife(`case-${i}`, i % 2 === 0)));
      const writes = lives.flat();
      await expectDelivered(writes);

      for (const id of uploads) {
        const done = await completed(id, 120_000);
        expect(done.body.matched_count).toBe(5);
        expect(done.body.progress).toEqual({ percent: 100, current: 5, total: 5 });
      }
      // the feed: each upload from QUEUED to one COMPLETE with its result
      await until(
        async () => (uploads.every((id) => dashboard.jobs.some((e) => e.processingId === id && e.state === "COMPLETE")) ? true : undefined),
        30_000,
        "COMPLETE events",
      );
      for (const id of uploads) {
        const events = dashboard.jobs.filter((e) => e.processingId === id);
        expect(events[0]!.state).toBe("QUEUED");
        expect(events.filter((e) => e.state === "COMPLETE")).toEqual([expect.objectContaining({ matchedCount: 5 })]);
      }
      // the jobs ran on the worker, not on the API processes
      for (const id of uploads) {
        expect(topology.worker.output()).toContain(id);
        for (const api of topology.api) expect(api.output()).not.toMatch(new RegExp(`"multimedia job started".*${id}`));
      }

      const after = await mediaPlaces(topology);
      expect(after.mediaKeys.length - before.mediaKeys.length).toBe(15);
      expect(after.archiveKeys).toEqual([]); // each archive deleted when its job ended
      expect({ blobs: after.blobRows, chunks: after.chunkRows, local: after.localBlobFiles }).toEqual({ blobs: 0, chunks: 0, local: 0 });
      const files = await queryDatabase<{ blob_key: string }>(topology.directUrl, "SELECT blob_key FROM multimedia_files");
      expect(files.map((f) => `gw/${f.blob_key}`).sort()).toEqual(after.mediaKeys);
      for (const server of [...topology.api, topology.worker]) expect(server.output()).not.toMatch(/"statusCode":5\d\d/);
    }, 300_000);

    it("§7.6: kill -9 of the worker mid-job loses nothing: a new worker takes the job over once the lease has run out and completes it, every medium in the bucket once, every case written meanwhile delivered", async () => {
      dashboard.cases.splice(0);
      const before = await mediaPlaces(topology);
      const answer = await upload(writer, auth, appId, await mediaArchive(BIG_ENTRIES, 64 * 1024, "big"));
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const id = answer.body.processing_id as string;
      const running = await until(
        async () => {
          const status = await uploadStatus(writer, auth, appId, id);
          return status.body.progress?.current > 5 ? status : undefined;
        },
        60_000,
        "the big job under way",
      );
      expect(running.body.complete, "the job must still be running when its worker is killed").toBeFalsy();
      const killed = topology.worker;
      const killedAt = Date.now();
      expect(await killed.stop("SIGKILL")).toBeNull();
      const [{ current: atKill }] = await queryDatabase<{ current: number }>(
        topology.directUrl,
        "SELECT current FROM multimedia_jobs WHERE id = $1",
        [id],
      );
      expect(atKill).toBeLessThan(BIG_ENTRIES);

      // the API processes go on meanwhile: cases written while no worker runs are delivered
      const writes = (await Promise.all(Array.from({ length: 4 }, (_, i) => caseLife(`outage-${i}`, i % 2 === 1)))).flat();
      const replacement = await topology.startWorker();
      const done = await completed(id, 180_000);
      expect(done.body.matched_count).toBe(BIG_ENTRIES);
      expect(done.body.progress).toEqual({ percent: 100, current: BIG_ENTRIES, total: BIG_ENTRIES });
      // taken over by the new worker once the heartbeat went stale: a beat comes every half lease, so
      // not sooner than half a lease after the kill
      const takeover = replacement
        .output()
        .split("\n")
        .filter((line) => line.includes('"multimedia job started"') && line.includes(id))
        .map((line) => JSON.parse(line) as { time: string; attempt: number });
      expect(takeover.map((line) => line.attempt)).toEqual([2]);
      expect(Date.parse(takeover[0]!.time) - killedAt).toBeGreaterThanOrEqual((LEASE_SECONDS / 2) * 1000 - 100);
      const [job] = await queryDatabase<{ attempts: number; status: string }>(
        topology.directUrl,
        "SELECT attempts, status FROM multimedia_jobs WHERE id = $1",
        [id],
      );
      expect(job).toEqual({ attempts: 2, status: "complete" });
      await expectDelivered(writes);

      // one COMPLETE in the feed, with every entry matched
      await until(
        async () => (dashboard.jobs.some((e) => e.processingId === id && e.state === "COMPLETE") ? true : undefined),
        30_000,
        "COMPLETE event",
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(dashboard.jobs.filter((e) => e.processingId === id && e.state === "COMPLETE")).toEqual([
        expect.objectContaining({ matchedCount: BIG_ENTRIES }),
      ]);

      // every medium in the bucket once (keys are content hashes: one per distinct file), and in the database once
      const after = await mediaPlaces(topology);
      expect(after.mediaKeys.length - before.mediaKeys.length).toBe(BIG_ENTRIES);
      expect(after.archiveKeys).toEqual([]);
      expect({ blobs: after.blobRows, chunks: after.chunkRows, local: after.localBlobFiles }).toEqual({ blobs: 0, chunks: 0, local: 0 });
      const [files] = await queryDatabase<{ rows: string; distinct: string }>(
        topology.directUrl,
        "SELECT count(*) AS rows, count(DISTINCT sha256) AS distinct FROM multimedia_files",
      );
      expect(Number(files!.rows)).toBe(after.mediaKeys.length);
      expect(Number(files!.distinct)).toBe(after.mediaKeys.length);
      // the last entry is served, from the bucket, with its own bytes
      const download = await fetch(`${writer}/a/topo/apps/api/${appId}/multimedia/file/commcare/image/f${BIG_ENTRIES - 1}.png`, {
        headers: { Authorization: auth },
      });
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).includes(Buffer.from(`big:${BIG_ENTRIES - 1}`))).toBe(true);
    }, 400_000);
  },
);
