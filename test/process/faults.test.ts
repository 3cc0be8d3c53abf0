import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient, type Client } from "graphql-ws";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { postgresDatabase, type Database } from "../../src/db/client.ts";
import { isDatabaseUnavailable } from "../../src/db/unavailable.ts";
import { badInput } from "../../src/errors.ts";
import { toDomainError } from "../../src/admission/error-mapping.ts";
import { freshDatabase, usingPostgres } from "../helpers/db.ts";
import { freePort, pgClusterUnavailable, startPgCluster, startServer, type PgCluster, type ServerProcess } from "../helpers/process.ts";

/**
 * Issue #7 part 5, faults, with real server processes:
 * - kill -9 during 100-case bulk writes: after a restart on the same data, every bulk is whole or
 *   absent (cases and their one form), and every acknowledged bulk is whole;
 * - PostgreSQL restarted under load: requests meanwhile get 503 JSON with Retry-After in bounded
 *   time, requests succeed again afterwards, every acknowledged write is readable, and the
 *   LISTEN/NOTIFY event bus delivers again.
 * The third fault of the issue, kill -9 during multimedia processing, is covered by
 * test/process/jobs.test.ts ("finishes a job whose worker process was killed mid-way, after a restart").
 */

describe("what counts as the database being unavailable", () => {
  it("a PostgreSQL nobody listens on: Prisma's error is recognised and becomes a 503 with Retry-After", async () => {
    const db = postgresDatabase(`postgresql://postgres@127.0.0.1:${await freePort()}/none`, 1, 2000);
    try {
      const error = await db.prisma.user.count().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeDefined();
      expect(isDatabaseUnavailable(error)).toBe(true);
      const mapped = toDomainError(error)!;
      expect(mapped.status).toBe(503);
      expect(mapped.code).toBe("SERVICE_UNAVAILABLE");
      expect(mapped.headers["Retry-After"]).toMatch(/^\d+$/);
    } finally {
      await db.close();
    }
  });

  it("recognises pg's and Node's own shapes, and nothing else", () => {
    const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: "FATAL" });
    expect(isDatabaseUnavailable(pgError("57P01", "terminating connection due to administrator command"))).toBe(true);
    expect(isDatabaseUnavailable(pgError("57P03", "the database system is starting up"))).toBe(true);
    expect(isDatabaseUnavailable(pgError("08006", "connection failure"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("wrapped"), { cause: { kind: "ConnectionClosed" } }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("x"), { code: "P1017" }))).toBe(true);
    // not outages: a constraint, a bad statement, a domain error, a plain bug
    expect(isDatabaseUnavailable(Object.assign(new Error("Unique constraint failed"), { code: "P2002" }))).toBe(false);
    expect(isDatabaseUnavailable(pgError("42601", "syntax error"))).toBe(false);
    expect(isDatabaseUnavailable(badInput("Connection terminated is just text here"))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("x is undefined"))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});

const ADMIN = `Basic ${Buffer.from("admin:admin-pass").toString("base64")}`;
const BULK = 100;

async function graphql(url: string, authorization: string, query: string, variables?: Record<string, unknown>) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: authorization },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as { data?: any; errors?: any[] } };
}

/** A domain `demo` and an API key for the admin (cheaper per request than Basic's scrypt). */
async function prepare(url: string): Promise<string> {
  const created = await graphql(url, ADMIN, 'mutation { createDomain(name: "demo") { id } }');
  expect(created.body.errors).toBeUndefined();
  const key = await graphql(url, ADMIN, 'mutation { createApiKey(username: "admin") { key } }');
  return `ApiKey admin:${key.body.data.createApiKey.key}`;
}

const bulkBody = (bulk: string) =>
  JSON.stringify(
    Array.from({ length: BULK }, (_, j) => ({
      create: true,
      case_type: "visit",
      case_name: `${bulk} case ${j}`,
      owner_id: "owner",
      external_id: `${bulk}-${j}`,
      properties: { bulk, row: String(j), padding: "x".repeat(200) },
    })),
  );

/** For one bulk's external ids: the case ids found (in row order; undefined when missing). */
async function casesOfBulk(url: string, auth: string, bulk: string): Promise<(string | undefined)[]> {
  const res = await fetch(`${url}/a/demo/api/case/v2/bulk-fetch/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: auth },
    body: JSON.stringify({ external_ids: Array.from({ length: BULK }, (_, j) => `${bulk}-${j}`) }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { cases: { case_id: string; error?: string }[] };
  return body.cases.map((c) => (c.error ? undefined : c.case_id));
}

describe("kill -9 during 100-case bulk writes", () => {
  let dataDir: string;
  let db: Database | undefined;
  let server: ServerProcess | undefined;
  const env = (): Record<string, string> => ({
    BOOTSTRAP_ADMIN: "admin:admin-pass",
    WORKERS: "0",
    RATE_LIMIT_REQUESTS: "0", // load, not the rate limiter, is under test
    ...(db?.url ? { DATABASE_URL: db.url } : { DATA_DIR: dataDir }),
  });

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gateway-faults-"));
    if (usingPostgres()) db = await freshDatabase();
  });
  afterEach(async () => {
    await server?.stop("SIGKILL");
    server = undefined;
    await db?.close();
    db = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it("leaves every bulk whole (100 cases and one form) or absent, and every acknowledged bulk whole", { timeout: 240_000 }, async () => {
    server = await startServer(env());
    const auth = await prepare(server.url);

    // Measure one bulk, so that the kills land inside the writes whatever the machine's speed.
    const t0 = Date.now();
    const probe = await fetch(`${server.url}/a/demo/api/case/v2/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: auth },
      body: bulkBody("probe"),
    });
    expect(probe.status).toBe(200);
    const bulkMs = Date.now() - t0;

    const acknowledged = new Set<string>();
    const sent: string[] = [];
    const ROUNDS = 3;
    const CONCURRENT = 6;
    for (let round = 0; round < ROUNDS; round++) {
      const bulks = Array.from({ length: CONCURRENT }, (_, i) => `r${round}b${i}`);
      sent.push(...bulks);
      const requests = bulks.map((bulk, i) =>
        // staggered, so that at the kill some bulks are starting, some mid-way, some committing
        new Promise((r) => setTimeout(r, i * Math.max(5, bulkMs / CONCURRENT)))
          .then(() =>
            fetch(`${server!.url}/a/demo/api/case/v2/`, {
              method: "POST",
              headers: { "Content-Type": "application/json", Authorization: auth },
              body: bulkBody(bulk),
            }),
          )
          .then(async (res) => {
            if (res.status === 200 && ((await res.json()) as { cases: unknown[] }).cases.length === BULK) acknowledged.add(bulk);
          })
          .catch(() => {}),
      );
      // kill at a different point of the batch each round
      const killAfter = Math.max(20, Math.round(bulkMs * (0.5 + round * 0.75)));
      await new Promise((r) => setTimeout(r, killAfter));
      await server.stop("SIGKILL");
      await Promise.all(requests);
      server = await startServer(env());
    }

    const whole: string[] = [];
    const absent: string[] = [];
    for (const bulk of sent) {
      const ids = await casesOfBulk(server.url, auth, bulk);
      const found = ids.filter(Boolean) as string[];
      expect([0, BULK], `bulk ${bulk}: ${found.length} of ${BULK} cases exist`).toContain(found.length);
      if (found.length === 0) {
        expect(acknowledged.has(bulk), `acknowledged bulk ${bulk} is missing`).toBe(false);
        absent.push(bulk);
        continue;
      }
      whole.push(bulk);
      // The bulk's one generated form exists and applied exactly these 100 cases.
      const res = await graphql(server.url, auth, 'query ($id: ID!) { case(domain: "demo", caseId: $id) { forms { id caseIds } } }', {
        id: found[0],
      });
      const forms = res.body.data?.case?.forms as { id: string; caseIds: string[] }[];
      expect(forms, JSON.stringify(res.body)).toHaveLength(1);
      expect(new Set(forms[0].caseIds)).toEqual(new Set(found));
    }
    // The kills did land during writes: some bulks were never acknowledged.
    expect(acknowledged.size).toBeLessThan(sent.length);
    console.info(
      `kill -9 during bulks (${usingPostgres() ? "PostgreSQL" : "PGlite"}, one bulk ${bulkMs} ms): ${sent.length} sent, ` +
        `${acknowledged.size} acknowledged, ${whole.length} whole, ${absent.length} absent, 0 partial`,
    );
  });
});

interface Outcome {
  kind: "write" | "read" | "graphql";
  status: number; // 0: no response (network error or timeout)
  ms: number;
  at: number;
  body: unknown;
  retryAfter: string | null;
  contentType: string | null;
}

describe.skipIf(pgClusterUnavailable())("PostgreSQL restarted under load", () => {
  let cluster: PgCluster | undefined;
  let server: ServerProcess | undefined;
  let ws: Client | undefined;

  afterEach(async () => {
    await ws?.dispose();
    ws = undefined;
    await server?.stop("SIGKILL");
    server = undefined;
    await cluster?.remove();
    cluster = undefined;
  });

  it("answers 503 JSON with Retry-After during the outage, recovers after, and loses no acknowledged write", { timeout: 180_000 }, async () => {
    cluster = await startPgCluster();
    server = await startServer({ DATABASE_URL: cluster.url, BOOTSTRAP_ADMIN: "admin:admin-pass", WORKERS: "0", RATE_LIMIT_REQUESTS: "0" });
    const url = server.url;
    const auth = await prepare(url);

    const client = (
      await graphql(
        url,
        ADMIN,
        'mutation { createOAuthClient(input: { name: "m2m", grants: [CLIENT_CREDENTIALS], username: "admin" }) { clientId clientSecret } }',
      )
    ).body.data.createOAuthClient as { clientId: string; clientSecret: string };

    // A case-change subscription on the same process: its events travel through NOTIFY/LISTEN.
    const events: string[] = [];
    ws = createClient({ url: `${url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, connectionParams: { Authorization: auth } });
    let subscribed!: () => void;
    const ready = new Promise<void>((r) => (subscribed = r));
    ws.subscribe(
      { query: 'subscription { caseChanged(domain: "demo") { caseId } }' },
      { next: (m) => events.push((m.data as any).caseChanged.caseId), error: () => {}, complete: () => {} },
    );
    ws.on("connected", () => setTimeout(subscribed, 300));
    await ready;

    const outcomes: Outcome[] = [];
    const acknowledged = new Map<string, string>(); // external_id -> case_id
    let seq = 0;
    let stop = false;
    const REQUEST_TIMEOUT_MS = 15_000;
    const one = async (kind: Outcome["kind"]): Promise<void> => {
      const started = Date.now();
      const externalId = `load-${seq++}`;
      const init: RequestInit =
        kind === "write"
          ? {
              method: "POST",
              body: JSON.stringify({ case_type: "visit", case_name: externalId, owner_id: "o", external_id: externalId }),
            }
          : kind === "graphql"
            ? { method: "POST", body: JSON.stringify({ query: '{ cases(domain: "demo", first: 5) { totalCount } }' }) }
            : { method: "GET" };
      const target = kind === "graphql" ? `${url}/graphql` : `${url}/a/demo/api/case/v2/${kind === "read" ? "?limit=5" : ""}`;
      try {
        const res = await fetch(target, {
          ...init,
          headers: { "Content-Type": "application/json", Authorization: auth },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const text = await res.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // kept as text: the assertions below report it
        }
        outcomes.push({
          kind,
          status: res.status,
          ms: Date.now() - started,
          at: started,
          body,
          retryAfter: res.headers.get("retry-after"),
          contentType: res.headers.get("content-type"),
        });
        if (kind === "write" && res.status === 200) acknowledged.set(externalId, (body as any).case.case_id);
      } catch (error) {
        outcomes.push({ kind, status: 0, ms: Date.now() - started, at: started, body: String(error), retryAfter: null, contentType: null });
      }
    };
    const kinds: Outcome["kind"][] = ["write", "read", "write", "graphql"];
    const workers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        await one(kinds[(w + i) % kinds.length]);
        await new Promise((r) => setTimeout(r, 10));
      }
    });

    await new Promise((r) => setTimeout(r, 1500));
    const downAt = Date.now();
    await cluster.down();
    // The OAuth token endpoint too answers 503 JSON with Retry-After while the database is away.
    const tokenDuringOutage = await fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    expect(tokenDuringOutage.status).toBe(503);
    expect(tokenDuringOutage.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await tokenDuringOutage.json()).toEqual({ error: expect.any(String) });
    await new Promise((r) => setTimeout(r, 3000));
    const upAt = Date.now();
    await cluster.up();
    // Load goes on until writes succeed again, then a little longer.
    const recoveredBy = Date.now() + 30_000;
    while (!outcomes.some((o) => o.at > Date.now() - 1000 && o.kind === "write" && o.status === 200) && Date.now() < recoveredBy) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const recoveredAt = Date.now();
    await new Promise((r) => setTimeout(r, 1500));
    stop = true;
    await Promise.all(workers);

    // Every request answered, within the bound, 200 or 503; no 500, no HTML, no hang.
    const byStatus = new Map<number, number>();
    for (const o of outcomes) byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1);
    const summary = JSON.stringify(Object.fromEntries(byStatus));
    const bad = outcomes.filter((o) => o.status !== 200 && o.status !== 503);
    expect(bad.slice(0, 5), `statuses ${summary}`).toEqual([]);
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(REQUEST_TIMEOUT_MS);

    const unavailable = outcomes.filter((o) => o.status === 503);
    expect(unavailable.length, `statuses ${summary}`).toBeGreaterThan(0);
    for (const o of unavailable) {
      expect(o.retryAfter).toMatch(/^\d+$/);
      expect(o.contentType).toMatch(/application\/json/);
      if (o.kind === "graphql") {
        expect((o.body as any).errors[0].extensions.code).toBe("SERVICE_UNAVAILABLE");
      } else {
        expect(o.body).toEqual({ error: expect.any(String) });
      }
    }
    // A GraphQL request the outage stopped is a 503 too (serviceUnavailablePlugin), never a 200 with errors.
    expect(outcomes.filter((o) => o.kind === "graphql" && o.status === 200 && (o.body as any).errors)).toEqual([]);

    // Recovery: every kind of request succeeds after PostgreSQL is back.
    expect(recoveredAt).toBeLessThan(recoveredBy);
    const after = outcomes.filter((o) => o.at > recoveredAt);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((o) => o.status !== 200)).toEqual([]);

    // Every acknowledged write is readable, with the case id it was acknowledged with.
    const ids = [...acknowledged.keys()];
    for (let i = 0; i < ids.length; i += 1000) {
      const chunk = ids.slice(i, i + 1000);
      const res = await fetch(`${url}/a/demo/api/case/v2/bulk-fetch/`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: auth },
        body: JSON.stringify({ external_ids: chunk }),
      });
      const body = (await res.json()) as { missing_records: number; cases: { case_id: string; external_id: string }[] };
      expect(body.missing_records).toBe(0);
      for (const c of body.cases) expect(c.case_id).toBe(acknowledged.get(c.external_id));
    }

    // The event bus listens again: a write now reaches the subscriber (same process, through NOTIFY).
    const deadline = Date.now() + 20_000;
    let delivered = false;
    while (!delivered && Date.now() < deadline) {
      const res = await fetch(`${url}/a/demo/api/case/v2/`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: auth },
        body: JSON.stringify({ case_type: "visit", case_name: "after", owner_id: "o" }),
      });
      const caseId = ((await res.json()) as any).case.case_id as string;
      const until = Date.now() + 1000;
      while (!events.includes(caseId) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      delivered = events.includes(caseId);
    }
    expect(delivered, "case events reach the subscriber again after the restart").toBe(true);

    // F13: no event of a write acknowledged after the restart is lost, however soon after it came
    // (this short outage does not always outlast the listener's backoff; test/events/bus.test.ts
    // has the outage that does).
    const afterRestart = outcomes.filter((o) => o.kind === "write" && o.status === 200 && o.at >= upAt).map((o) => (o.body as any).case.case_id);
    expect(afterRestart.length).toBeGreaterThan(0);
    const allBy = Date.now() + 10_000;
    while (afterRestart.some((id) => !events.includes(id)) && Date.now() < allBy) await new Promise((r) => setTimeout(r, 100));
    expect(
      afterRestart.filter((id) => !events.includes(id)),
      "F13: events of writes acknowledged after the restart",
    ).toEqual([]);

    const outage = outcomes.filter((o) => o.at >= downAt && o.at < upAt);
    console.info(
      `PostgreSQL restart under load: ${outcomes.length} requests ${summary}; outage ${upAt - downAt} ms with ` +
        `${outage.length} requests (max ${Math.max(0, ...outage.map((o) => o.ms))} ms); writes acknowledged and read back: ` +
        `${acknowledged.size}; recovered ${recoveredAt - upAt} ms after restart`,
    );
  });
});
