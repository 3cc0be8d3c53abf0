import "reflect-metadata";
import { createServer, type RequestListener, type Server } from "node:http";
import { loadConfig, type Config } from "./config.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { migrateToCurrent, pendingMigrations, whenCurrent } from "./db/migration-gate.ts";
import { log, setLogLevel } from "./log.ts";
import { startMaintenance } from "./maintenance.ts";
import { logStartupFailure, needs } from "./observability/startup-failure.ts";
import { startTracing, stopTracing, tracedDatabase } from "./observability/tracing.ts";
import { buildServer, notReadyApp, urlOf } from "./server.ts";
import { createServices } from "./services.ts";
import { isStopping, stopOnSignals } from "./shutdown.ts";
import { sweepStaleTempEntries } from "./util/temp-entries.ts";

/** Entry point: config, database, migrations, services, server; then serve until a signal. */
async function main(config: Config): Promise<void> {
  setLogLevel(config.logLevel);
  if (await startTracing({ endpoint: config.otelEndpoint })) log.info("tracing on", { endpoint: config.otelEndpoint });
  const db = tracedDatabase(await needs("database", () => openDatabase(config)));
  const graceMs = config.shutdownGraceSeconds * 1000;
  let early: EarlyServer | undefined;
  if (config.migrateOnStart) {
    const applied = await needs("database", () => migrateToCurrent(db));
    if (applied.length) log.info("migrations applied", { applied });
  } else if ((await needs("database", () => pendingMigrations(db.prisma))).length > 0) {
    early = await serveNotReady(db, config, graceMs);
    if (!(await whenCurrent(db.prisma, { intervalMs: SCHEMA_RECHECK_MS, stopped: isStopping }))) return;
    log.info("migrations applied: starting the whole server");
  }
  const services = await createServices(db, config);
  // F17: what killed processes left in DATA_DIR/tmp (before this process spools anything there)
  const swept = await sweepStaleTempEntries(await services.blobs.tempDir());
  if (swept.length) log.info("temporary entries of stopped processes removed", { entries: swept.length });
  if (config.bootstrapAdmin) {
    await services.admin.bootstrapSuperuser(config.bootstrapAdmin.username, config.bootstrapAdmin.password);
  }
  const server = await buildServer(services, early?.httpServer);
  const stopMaintenance = startMaintenance(services);
  if (db.kind === "pglite") await services.jobAttempts.failOrphans();
  await services.worker.start();
  const url = await server.listen(config.port, config.host);
  early?.route(server.app);
  collectStartupGarbage();
  // CONTRACT §7.1: new connections refused, in-flight requests given the grace, the running
  // multimedia job handed back to the queue meanwhile, WebSockets closed with 1001, then the database.
  const stop = async () => {
    stopMaintenance();
    // both run to their end even when one fails, so that the database is always closed last
    const settled = await Promise.allSettled([server.close(graceMs), services.worker.stop()]);
    await services.close();
    await db.close();
    await stopTracing();
    const failed = settled.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
  };
  if (early) early.stopWith(stop);
  else {
    stopOnSignals(stop, graceMs);
    // only now: whoever reads this line may signal the server at once
    announce(url, db, config);
  }
  // which bus carries the events across processes (REDIS_URL, else the database's own)
  log.info("listening", { url, database: db.kind, eventBus: config.redisUrl ? "redis" : db.kind === "pglite" ? "in-process" : "postgres" });
}

/** How often a process waiting for `npm run db:migrate` looks at the schema again (one small query). */
const SCHEMA_RECHECK_MS = 2000;

/** The plain line on stdout is what scripts (and the tests) wait for; the JSON one is for the logs. */
function announce(url: string, db: Database, config: Config, note = ""): void {
  const database = db.kind === "pglite" ? `embedded database in ${config.dataDir}` : "PostgreSQL";
  console.log(`field-data gateway listening on ${url} (${database})${note}`);
}

/** The server of a process that waits for its migrations (see notReadyApp), until the whole one takes over. */
interface EarlyServer {
  httpServer: Server;
  /** from now on the whole server's app answers */
  route(app: RequestListener): void;
  /** from now on a signal stops the whole server this way */
  stopWith(stop: () => Promise<void>): void;
}

/**
 * CONTRACT §7.5, MIGRATE_ON_START=false on a schema behind this release: listen at once, so that
 * orchestrators see a live process that is not ready (and can stop it), and answer the probes until
 * the migrations are applied; the same port then serves the whole server, without a restart.
 */
async function serveNotReady(db: Database, config: Config, graceMs: number): Promise<EarlyServer> {
  let handler: RequestListener = notReadyApp(db, config);
  const httpServer = createServer((req, res) => handler(req, res));
  let stop = async () => {
    httpServer.close();
    httpServer.closeAllConnections();
    await db.close();
  };
  stopOnSignals(() => stop(), graceMs);
  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(config.port, config.host, resolve);
  });
  const url = urlOf(httpServer);
  log.warn("migrations pending and MIGRATE_ON_START=false: not ready until `npm run db:migrate` has applied them", {
    pending: await pendingMigrations(db.prisma),
  });
  announce(url, db, config, ", not ready: migrations pending");
  return { httpServer, route: (app) => (handler = app), stopWith: (next) => (stop = next) };
}

try {
  await main(loadConfig());
} catch (error) {
  // one JSON line naming the setting or dependency at fault (CONTRACT §7.2), like every other line
  logStartupFailure(error);
  process.exit(1);
}

/**
 * One full collection once the server is up (only when node runs with --expose-gc, as `npm start`
 * does): start-up (transpiling, migrations, building the schema) leaves tens of MB of garbage that
 * an idle server, allocating little, would otherwise hold on to for a long time.
 */
function collectStartupGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
