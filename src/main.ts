import "reflect-metadata";
import { loadConfig, type Config } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { applyMigrations } from "./db/migrate.ts";
import { log, setLogLevel } from "./log.ts";
import { startMaintenance } from "./maintenance.ts";
import { startTracing, stopTracing, tracedDatabase } from "./observability/tracing.ts";
import { buildServer } from "./server.ts";
import { createServices } from "./services.ts";
import { stopOnSignals } from "./shutdown.ts";
import { sweepStaleTempEntries } from "./util/temp-entries.ts";

/** Entry point: config, database, migrations, services, server; then serve until a signal. */
async function main(config: Config): Promise<void> {
  setLogLevel(config.logLevel);
  if (await startTracing({ endpoint: config.otelEndpoint })) log.info("tracing on", { endpoint: config.otelEndpoint });
  const db = tracedDatabase(await openDatabase(config));
  const applied = await applyMigrations(db.adapterFactory);
  if (applied.length) log.info("migrations applied", { applied });
  const services = await createServices(db, config);
  // F17: what killed processes left in DATA_DIR/tmp (before this process spools anything there)
  const swept = await sweepStaleTempEntries(await services.blobs.tempDir());
  if (swept.length) log.info("temporary entries of stopped processes removed", { entries: swept.length });
  if (config.bootstrapAdmin) {
    await services.admin.bootstrapSuperuser(config.bootstrapAdmin.username, config.bootstrapAdmin.password);
  }
  const server = await buildServer(services);
  const stopMaintenance = startMaintenance(services);
  if (db.kind === "pglite") await services.multimediaJobs.failOrphans();
  await services.worker.start();
  const url = await server.listen(config.port, config.host);
  collectStartupGarbage();
  // CONTRACT §7.1: new connections refused, in-flight requests given the grace, the running
  // multimedia job handed back to the queue meanwhile, WebSockets closed with 1001, then the database.
  const graceMs = config.shutdownGraceSeconds * 1000;
  stopOnSignals(async () => {
    stopMaintenance();
    // both run to their end even when one fails, so that the database is always closed last
    const settled = await Promise.allSettled([server.close(graceMs), services.worker.stop()]);
    await services.close();
    await db.close();
    await stopTracing();
    const failed = settled.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
  }, graceMs);
  // only now: whoever reads this line may signal the server at once
  const database = db.kind === "pglite" ? `embedded database in ${config.dataDir}` : "PostgreSQL";
  // the plain line on stdout is what scripts (and the tests) wait for; the JSON one is for the logs
  console.log(`field-data gateway listening on ${url} (${database})`);
  log.info("listening", { url, database: db.kind });
}

try {
  await main(loadConfig());
} catch (error) {
  console.error(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
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
