import "reflect-metadata";
import { loadConfig, type Config } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { applyMigrations } from "./db/migrate.ts";
import { log, setLogLevel } from "./log.ts";
import { startMaintenance } from "./maintenance.ts";
import { buildServer } from "./server.ts";
import { createServices } from "./services.ts";

/** Entry point: config, database, migrations, services, server; then wait for a signal. */
async function main(config: Config): Promise<void> {
  setLogLevel(config.logLevel);
  const db = await openDatabase(config);
  const applied = await applyMigrations(db.adapterFactory);
  if (applied.length) log.info("migrations applied", { applied });
  const services = await createServices(db, config);
  if (config.bootstrapAdmin) {
    await services.admin.bootstrapSuperuser(config.bootstrapAdmin.username, config.bootstrapAdmin.password);
  }
  const server = await buildServer(services);
  const stopMaintenance = startMaintenance(services);
  if (db.kind === "pglite") await services.multimediaJobs.failOrphans();
  await services.worker.start();
  const url = await server.listen(config.port, config.host);
  console.log(`field-data gateway listening on ${url} (${db.kind === "pglite" ? `embedded database in ${config.dataDir}` : "PostgreSQL"})`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    try {
      stopMaintenance();
      await server.close();
      await services.worker.stop();
      await services.close();
      await db.close();
      process.exit(0);
    } catch (error) {
      log.error("unclean stop", { error });
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

try {
  await main(loadConfig());
} catch (error) {
  console.error(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
