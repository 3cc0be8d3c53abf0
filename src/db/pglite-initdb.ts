/**
 * Creates a new embedded database (initdb) in a process of its own; the server then opens the
 * directory as an existing one. Run inside the server, initdb left about 160 MB resident for the
 * process's whole life (the memory PGlite's WebAssembly grew to, which is never handed back).
 * Plain TypeScript that Node runs as it is: `node pglite-initdb.ts <pgdata> <start parameter>...`.
 */
import { PGlite } from "@electric-sql/pglite";

const [pgdata, ...startParams] = process.argv.slice(2);
const pglite = await PGlite.create(pgdata, { startParams });
await pglite.close();
