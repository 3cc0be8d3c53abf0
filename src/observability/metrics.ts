import client from "prom-client";

/**
 * CONTRACT §7.2: the Prometheus metrics of this process (each process of a shared database exposes
 * its own). Label values come from fixed sets only (method, route pattern, status code, operation
 * type, job state, limiter): never a domain, a user, an id, a raw path or anything else a client
 * chooses without bound.
 */
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequests = new client.Counter({
  name: "http_requests_total",
  help: "HTTP requests answered, by method, route pattern and status code.",
  labelNames: ["method", "route", "status_code"] as const,
  registers: [registry],
});

export const httpRequestDuration = new client.Histogram({
  name: "http_request_duration_seconds",
  help: "Time from a request's arrival to its response's end, by method, route pattern and status code.",
  labelNames: ["method", "route", "status_code"] as const,
  buckets: SECONDS,
  registers: [registry],
});

export const graphqlOperations = new client.Counter({
  name: "graphql_operations_total",
  help: "GraphQL operations over HTTP, by operation type (query, mutation, subscription; unknown when the document did not resolve to one), and by name for the trusted documents' operations.",
  labelNames: ["operation_type", "operation_name"] as const,
  registers: [registry],
});

export const graphqlOperationDuration = new client.Histogram({
  name: "graphql_operation_duration_seconds",
  help: "Time GraphQL operations over HTTP took, from parsing to the response, by operation type (and name for the trusted documents' operations).",
  labelNames: ["operation_type", "operation_name"] as const,
  buckets: SECONDS,
  registers: [registry],
});

export const graphqlSubscriptionsActive = new client.Gauge({
  name: "graphql_subscriptions_active",
  help: "Live GraphQL subscriptions on this process's WebSockets.",
  registers: [registry],
});

export const subscriptionEvents = new client.Counter({
  name: "graphql_subscription_events_total",
  help: "Subscription events sent over this process's WebSockets, by execution: executed (the selection ran for it) or shared (the result of the same event, selection and user was reused).",
  labelNames: ["execution"] as const,
  registers: [registry],
});

export const rateLimitedRequests = new client.Counter({
  name: "rate_limited_requests_total",
  help: "Requests refused with 429, by limiter (requests: the per-user budget; login: the failed-login throttle).",
  labelNames: ["limiter"] as const,
  registers: [registry],
});

export const multimediaJobDuration = new client.Histogram({
  name: "multimedia_job_duration_seconds",
  help: "How long multimedia job attempts ran on this process, by outcome (complete, failed, requeued, crashed).",
  labelNames: ["outcome"] as const,
  buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
  registers: [registry],
});

export const eventNotifications = new client.Counter({
  name: "event_bus_notifications_total",
  help: "Event batches this process sent to or received from the event bus (PostgreSQL NOTIFY / LISTEN, or a Redis stream).",
  labelNames: ["direction"] as const,
  registers: [registry],
});

export const JOB_STATES = ["queued", "running", "complete", "failed"] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Where the gauges read at scrape time get their values; the process sets them at start. */
export interface MetricSources {
  /** multimedia jobs per state, read from the database (the jobs of every process sharing it) */
  jobStates?: () => Promise<Partial<Record<JobState, number>>>;
  /** the connection pool of this process, when it has one (PostgreSQL) */
  databasePool?: () => { total: number; idle: number; waiting: number };
}

const sources: MetricSources = {};

export function setMetricSources(next: MetricSources): void {
  Object.assign(sources, next);
}

new client.Gauge({
  name: "multimedia_jobs",
  help: "Multimedia jobs by state (queued, running, complete, failed), in the database this process uses.",
  labelNames: ["state"] as const,
  registers: [registry],
  async collect() {
    const counts = sources.jobStates ? await sources.jobStates().catch(() => undefined) : undefined;
    if (!counts) return;
    for (const state of JOB_STATES) this.set({ state }, counts[state] ?? 0);
  },
});

new client.Gauge({
  name: "database_pool_connections",
  help: "Connections of this process's database pool, by state (in_use, idle, waiting: requests waiting for one). The embedded database has one connection, shown in use.",
  labelNames: ["state"] as const,
  registers: [registry],
  collect() {
    const pool = sources.databasePool ? sources.databasePool() : { total: 1, idle: 0, waiting: 0 };
    this.set({ state: "in_use" }, pool.total - pool.idle);
    this.set({ state: "idle" }, pool.idle);
    this.set({ state: "waiting" }, pool.waiting);
  },
});
