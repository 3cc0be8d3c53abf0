/** npm run schema: writes schema.graphql from the resolvers (the committed copy must match). */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { buildGatewaySchema, schemaSdl } from "../src/gateway/schema.ts";

const file = path.resolve(import.meta.dirname, "..", "schema.graphql");
await writeFile(file, schemaSdl(await buildGatewaySchema()));
console.log(`wrote ${path.relative(process.cwd(), file)}`);
