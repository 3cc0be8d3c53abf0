/**
 * How many SQL statements one authenticated request costs, counted by PostgreSQL itself
 * (log_statement = all on a throwaway cluster): `npx tsx bench/tools/auth-statements.ts [requests]`.
 * Starts the server of this checkout on its own cluster, makes a member with an API key and a
 * password, then sends the same REST case list and a GraphQL `me` with each credential and prints
 * the statements per request of each. Run it in two checkouts to compare them.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

const ROOT = path.resolve(import.meta.dirname, "../..");
const REQUESTS = Number(process.argv[2] ?? 50);
const dir = await mkdtemp(path.join(os.tmpdir(), "auth-statements-"));
const port = await new Promise<string>((resolve) => {
  const probe = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as net.AddressInfo;
    probe.close(() => resolve(String(port)));
  });
});
const url = execFileSync(path.join(ROOT, "scripts/pg-cluster.sh"), ["start", dir, port], { encoding: "utf8" }).trim();
const stopCluster = () => execFileSync(path.join(ROOT, "scripts/pg-cluster.sh"), ["stop", dir]);

const server = spawn("sh", ["scripts/start.sh"], {
  cwd: ROOT,
  env: {
    ...process.env,
    NODE: process.execPath,
    DATABASE_URL: url,
    PORT: "0",
    WORKERS: "0",
    LOG_LEVEL: "error",
    BOOTSTRAP_ADMIN: "admin:admin-pass",
  },
  stdio: ["ignore", "pipe", "inherit"],
});
const base = await new Promise<string>((resolve, reject) => {
  let out = "";
  server.stdout!.on("data", (chunk) => {
    out += chunk;
    const match = /listening on (http:\/\/\S+)/.exec(out);
    if (match) resolve(match[1]!);
  });
  server.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
});

const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
async function graphql(query: string, authorization = ADMIN): Promise<Record<string, any>> {
  const res = await fetch(`${base}/graphql`, {
    method: "POST",
    headers: { Authorization: authorization, "Content-Type": "application/json" },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { data?: Record<string, any>; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}
await graphql(`mutation { createDomain(name: "field") { name } }`);
await graphql(
  `mutation { createUser(input: { username: "mobile", password: "pw", domain: "field", permissions: [ACCESS_API, VIEW_DATA, EDIT_DATA] }) { id } }`,
);
const { createApiKey } = await graphql(`mutation { createApiKey(username: "mobile") { key } }`);
const credentials = { apikey: `ApiKey mobile:${createApiKey.key as string}`, basic: `Basic ${Buffer.from("mobile:pw").toString("base64")}` };

const admin = new pg.Client({ connectionString: url });
await admin.connect();
const logFile = path.join(dir, "log");
const logged = () =>
  readFileSync(logFile, "utf8")
    .split("\n")
    .filter((l) => /LOG: {2}(statement|execute)/.test(l));
const statements = () => logged().length;

async function count(label: string, send: () => Promise<Response>): Promise<void> {
  for (let i = 0; i < 3; i++) await (await send()).arrayBuffer(); // warm: connections, caches
  await admin.query("ALTER SYSTEM SET log_statement = 'all'");
  await admin.query("SELECT pg_reload_conf()");
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = statements();
  for (let i = 0; i < REQUESTS; i++) {
    const res = await send();
    if (res.status !== 200) throw new Error(`${label}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
  await admin.query("ALTER SYSTEM RESET log_statement");
  await admin.query("SELECT pg_reload_conf()");
  await new Promise((resolve) => setTimeout(resolve, 300));
  // the three statements above are logged too
  const per = (statements() - before - 3) / REQUESTS;
  // SHOW=1: what one request ran (the statements of the last one, by their first words)
  if (process.env.SHOW)
    for (const line of logged()
      .slice(before)
      .slice(-Math.ceil(per) - 4))
      console.log(`    ${line.replace(/^.*LOG: {2}/, "").slice(0, 150)}`);
  console.log(`${label.padEnd(34)} ${per.toFixed(2)} statements per request`);
}

try {
  for (const [scheme, authorization] of Object.entries(credentials)) {
    await count(`REST case list, ${scheme}`, () => fetch(`${base}/a/field/api/case/v2/?limit=1`, { headers: { Authorization: authorization } }));
    await count(`GraphQL me, ${scheme}`, () =>
      fetch(`${base}/graphql`, {
        method: "POST",
        headers: { Authorization: authorization, "Content-Type": "application/json" },
        body: JSON.stringify({ query: "{ me { username } }" }),
      }),
    );
  }
} finally {
  await admin.end();
  server.kill("SIGKILL");
  stopCluster();
}
process.exit(0);
