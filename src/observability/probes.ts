import type { Redis } from "ioredis";
import type { Database } from "../db/client.ts";
import { pendingMigrations } from "../db/migration-gate.ts";
import type { Probes } from "./health.ts";
import { JOB_STATES, type JobState, type MetricSources } from "./metrics.ts";

/**
 * What /readyz checks and what the scraped gauges read, over the process's database: the database
 * answers, every migration in prisma/migrations is applied, the job queue's tables are there, Redis
 * answers (with REDIS_URL), and this process is not stopping.
 */

export function databaseProbes(db: Database, options: { stopping: () => boolean; redis?: Redis }): Probes {
  // A schema once current stays so for this process's code (only a newer release adds migrations):
  // from then on the check costs nothing, however often an orchestrator probes.
  let current = false;
  return {
    checks: {
      database: async () => {
        await db.prisma.$queryRaw`SELECT 1`;
        return true;
      },
      migrations: async () => {
        current ||= (await pendingMigrations(db.prisma)).length === 0;
        return current || "pending";
      },
      // pg-boss's queues (created at start); a process with WORKERS=0 still enqueues into them
      jobQueue: async () => {
        const [row] = await db.prisma.$queryRaw<{ queues: bigint }[]>`
          SELECT count(*) AS queues FROM pgboss.queue WHERE name IN ('multimedia', 'multimedia-gave-up')`;
        return Number(row?.queues) === 2;
      },
      ...(options.redis ? { redis: redisAnswers(options.redis) } : {}),
    },
    stopping: options.stopping,
  };
}

function redisAnswers(redis: Redis) {
  return async () => (await redis.ping()) === "PONG";
}

export function databaseMetricSources(db: Database): MetricSources {
  return {
    async jobStates() {
      const rows = await db.prisma.$queryRaw<{ status: string; jobs: bigint }[]>`
        SELECT status, count(*) AS jobs FROM multimedia_jobs GROUP BY status`;
      const counts: Partial<Record<JobState, number>> = {};
      for (const row of rows) if ((JOB_STATES as readonly string[]).includes(row.status)) counts[row.status as JobState] = Number(row.jobs);
      return counts;
    },
    ...(db.pool ? { databasePool: () => ({ total: db.pool!.totalCount, idle: db.pool!.idleCount, waiting: db.pool!.waitingCount }) } : {}),
  };
}
