import { fromPglite, fromPrisma, PgBoss, type Job, type PrismaTransactionLike } from "pg-boss";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { log } from "../log.ts";

/**
 * The multimedia job queue, on pg-boss over whichever database the service runs on (its PGlite
 * adapter in the embedded default, its own small pool on PostgreSQL). pg-boss owns claiming (SKIP
 * LOCKED), liveness (a heartbeat: a job whose worker died is retried once the heartbeat is stale),
 * retries and the dead-letter queue; the multimedia_jobs row stays the record of status and
 * progress that the contract's status endpoint reads.
 */

const MULTIMEDIA_QUEUE = "multimedia";
/** Where pg-boss puts a job that ran out of attempts: its row is then marked failed. */
const MULTIMEDIA_GAVE_UP = "multimedia-gave-up";
/** Attempts per job, the first included (pg-boss counts the retries after it). */
const MAX_ATTEMPTS = 3;
/** A hard ceiling on one attempt however alive its worker looks. */
const ATTEMPT_TIMEOUT_SECONDS = 6 * 3600;

/** A queued job: its row's key, so that every statement of its steps names the domain's shard. */
export interface MultimediaTask {
  processingId: string;
  /** absent from a job queued by a release whose payload did not carry it yet: its row is then found by id */
  domainId?: string;
}

export type TaskAttempt = Job<MultimediaTask>;

/** The key a running attempt writes into the job row: pg-boss job id and retry count. */
export function attemptKey(job: Pick<TaskAttempt, "id" | "retryCount">): string {
  return `${job.id}:${job.retryCount}`;
}

function parseAttemptKey(key: string): { id: string; retryCount: number } | null {
  const match = /^([0-9a-f-]{36}):(\d+)$/.exec(key);
  return match ? { id: match[1]!, retryCount: Number(match[2]) } : null;
}

/**
 * How often stale heartbeats are looked for: a tenth of the lease, so that a dead worker's job is
 * retried at most a lease and a tenth after its last beat (README, JOB_LEASE_SECONDS). pg-boss fails
 * stale jobs in its monitor pass, which runs at most every `monitorIntervalSeconds` (60 by default,
 * whatever the supervise interval): left at that, a killed worker's job waited about a minute. The
 * pass is claimed through the queue's row, so the processes of a deployment run it once between them.
 */
function staleCheckSeconds(jobLeaseSeconds: number): number {
  return Math.max(1, Math.ceil(jobLeaseSeconds / 10));
}

/** pg-boss's LISTEN needs a session of its own: it takes the direct connection (Database.directUrl). */
async function startBoss(db: Database, config: Pick<Config, "jobLeaseSeconds">): Promise<PgBoss> {
  const check = staleCheckSeconds(config.jobLeaseSeconds);
  const boss = new PgBoss({
    ...(db.pglite ? { db: fromPglite(db.pglite), backend: "pglite" as const } : { connectionString: db.directUrl ?? db.url!, max: 3 }),
    useListenNotify: true,
    superviseIntervalSeconds: check,
    monitorIntervalSeconds: check,
    schedule: false,
  });
  boss.on("error", (error: unknown) => log.error("job queue error", { error }));
  await boss.start();
  return boss;
}

/** Creates whichever of our queues is missing; true when it created one. */
async function declareQueues(boss: PgBoss): Promise<boolean> {
  const existing = new Set((await boss.getQueues([MULTIMEDIA_QUEUE, MULTIMEDIA_GAVE_UP])).map((q) => q.name));
  if (existing.size === 2) return false;
  if (!existing.has(MULTIMEDIA_GAVE_UP)) await boss.createQueue(MULTIMEDIA_GAVE_UP, { notify: true });
  if (!existing.has(MULTIMEDIA_QUEUE)) await boss.createQueue(MULTIMEDIA_QUEUE, { notify: true, deadLetter: MULTIMEDIA_GAVE_UP });
  return true;
}

export class JobQueue {
  private constructor(
    private readonly boss: PgBoss,
    private readonly config: Pick<Config, "jobLeaseSeconds">,
  ) {}

  /** Starts pg-boss on `db` (installing or upgrading its schema when needed) with our queues declared. */
  static async open(db: Database, config: Pick<Config, "jobLeaseSeconds">): Promise<JobQueue> {
    const boss = await startBoss(db, config);
    if (await declareQueues(boss)) {
      // pg-boss caches the queue list when it starts. A queue created later is looked up on first
      // use through pg-boss's own connection, which on PGlite waits for the transaction that is
      // enqueueing: start again so the cache holds the queues from the outset.
      await boss.stop({ graceful: false });
      return new JobQueue(await startBoss(db, config), config);
    }
    return new JobQueue(boss, config);
  }

  /**
   * Queues the job whose row is `job`, inside the caller's transaction when one is given, so the
   * job row and its queue entry commit together.
   */
  async enqueue(job: { id: string; domainId: string }, tx?: PrismaTransactionLike): Promise<void> {
    const processingId = job.id;
    const task: MultimediaTask = { processingId, domainId: job.domainId };
    await this.boss.send(MULTIMEDIA_QUEUE, task, {
      retryLimit: MAX_ATTEMPTS - 1,
      heartbeatSeconds: this.config.jobLeaseSeconds,
      expireInSeconds: ATTEMPT_TIMEOUT_SECONDS,
      deadLetter: MULTIMEDIA_GAVE_UP,
      ...(tx ? { db: fromPrisma(tx) } : {}),
    });
    log.info("multimedia job queued", { processingId });
  }

  /** Runs `handler` for each job, `concurrency` at a time in this process. */
  async work(concurrency: number, handler: (attempt: TaskAttempt) => Promise<void>): Promise<void> {
    await this.boss.work<MultimediaTask>(
      MULTIMEDIA_QUEUE,
      // pg-boss waits out the polling interval after every job, even with more queued: keep it short
      { localConcurrency: concurrency, batchSize: 1, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 0.5 },
      async ([job]) => {
        if (job) await handler(job);
      },
    );
  }

  /** Runs `handler` for each job that used up its attempts (pg-boss's dead letter carries the job's payload). */
  async onGaveUp(handler: (task: MultimediaTask) => Promise<void>): Promise<void> {
    await this.boss.work<MultimediaTask>(
      MULTIMEDIA_GAVE_UP,
      { batchSize: 1, pollingIntervalSeconds: 2, notifyPollingIntervalSeconds: 5 },
      async ([job]) => {
        if (job) await handler(job.data);
      },
    );
  }

  /**
   * Fails the attempts named by these keys now, rather than when their heartbeat goes stale: used
   * when this process knows their worker is gone (the embedded database has one process, so a
   * restart orphans whatever was running). pg-boss then retries or gives them up as usual.
   */
  async failAttempts(keys: string[]): Promise<void> {
    const attempts = keys.map(parseAttemptKey).filter((a) => a !== null);
    if (attempts.length) await this.boss.fail(MULTIMEDIA_QUEUE, attempts, { message: "the server stopped while the job ran" });
  }

  /** Stops taking jobs and waits for the running handlers to return. */
  async stopWorking(): Promise<void> {
    await this.boss.offWork(MULTIMEDIA_QUEUE, { wait: true });
    await this.boss.offWork(MULTIMEDIA_GAVE_UP, { wait: true });
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: true, timeout: 5000 });
  }
}
