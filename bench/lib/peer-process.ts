/**
 * Child process: the peer, PostGraphile 5 with its recommended preset (amber), serving the same
 * PostgreSQL tables over HTTP on loopback through grafserv's Node adaptor.
 *   argv: url
 * One change from the defaults: PgIndexBehaviorsPlugin is disabled, so that every column can be
 * ordered and filtered on (by default only the first column of an index can; the keyset order
 * (indexed_on, id) sits second in its index, behind domain_id).
 * The list filter of the Case API is served by a custom query function (bench_peer.filtered_cases,
 * created by the filter part): stock PostGraphile's `condition` is equality on columns only.
 */
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { serveCalls } from "./rpc.ts";

const [url] = process.argv.slice(2);

const preset: GraphileConfig.Preset = {
  extends: [PostGraphileAmberPreset],
  disablePlugins: ["PgIndexBehaviorsPlugin"],
  pgServices: [makePgService({ connectionString: url, schemas: ["public", "bench_peer"] })],
  grafserv: { graphiql: false, websockets: false, maxRequestLength: 10 * 1024 * 1024 },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.keepAliveTimeout = 60_000;
await serv.addTo(server);
await pgl.getSchema();
const address = await new Promise<string>((resolve) => {
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number };
    resolve(`http://127.0.0.1:${port}/graphql`);
  });
});

serveCalls({ url: address }, { rss: () => process.memoryUsage().rss }, async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await serv.release();
  await pgl.release();
});
