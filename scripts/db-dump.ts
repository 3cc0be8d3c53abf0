/**
 * npm run db:dump -- FILE   the embedded database in DATA_DIR (and its media) as plain SQL for
 * `psql -v ON_ERROR_STOP=1 -d <empty PostgreSQL 15 database> -f FILE`; the server must be stopped.
 */
import path from "node:path";
import { loadConfig } from "../src/config.ts";
import { dumpEmbedded } from "../src/db/dump.ts";

const [arg] = process.argv.slice(2);
try {
  if (!arg) throw new Error("usage: npm run db:dump -- FILE");
  // npm runs the script in the project's folder; FILE is as the operator typed it, where they typed it
  const file = path.resolve(process.env.INIT_CWD ?? process.cwd(), arg);
  const config = loadConfig();
  if (config.databaseUrl) throw new Error("DATABASE_URL is set: db:dump dumps the embedded database; back up PostgreSQL with pg_dump");
  const { blobs } = await dumpEmbedded(config, file);
  console.log(`wrote ${file}: the embedded database in ${config.dataDir} and ${blobs} media and archive files`);
  // The WASM engine leaves a timer behind; leave without waiting for it.
  process.exit(0);
} catch (error) {
  console.error(`db:dump: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
