import type { IncomingMessage } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient } from "graphql-ws";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { Config } from "../../src/config.ts";
import { build, createDomain, createUser, type TestApp, type TestUser } from "../helpers/app.ts";
import { captureLog } from "../helpers/log.ts";
import { connectWs, wsUrl, type WsTestClient } from "../helpers/ws.ts";

/**
 * CONTRACT §7.2 for GraphQL over WebSocket (issue #26, item 5): one JSON line per event — the
 * connection admitted (with its request id and username) or refused, each operation started (or
 * refused) and completed with the `graphql` field HTTP's request line carries, the credential
 * re-check's 4403, and the close with its code and what the code means. Never a credential, a
 * variable's value or a message's body.
 */

const CASE_CHANGED = 'subscription { caseChanged(domain: "demo") { caseId } }';

let app: TestApp;
let member: TestUser;
const clients: WsTestClient[] = [];

async function setUp(overrides: Partial<Config> = {}): Promise<void> {
  app = await build(overrides);
  await createDomain(app, "demo");
  await createDomain(app, "elsewhere");
  member = await createUser(app, { domain: "demo", permissions: ["access_api", "view_data", "edit_data"] });
}

afterEach(async () => {
  for (const c of clients.splice(0)) await c.dispose();
  await app?.close();
});

async function connect(authorization: string): Promise<WsTestClient> {
  const client = await connectWs(app, authorization);
  clients.push(client);
  return client;
}

type Entry = Record<string, unknown> & { message: string; graphql?: Record<string, unknown> };
const parsed = (lines: string[]): Entry[] => lines.map((line) => JSON.parse(line));
const named = (lines: string[], message: string) => parsed(lines).filter((entry) => entry.message === message);
const has = (message: string) => (lines: string[]) => named(lines, message).length > 0;

describe("§7.2 WebSocket connect and close lines", () => {
  it("§7.2: an admitted connection logs 'websocket connected' with its request id (the upgrade's X-Request-Id, sent back on the 101) and username", async () => {
    await setUp();
    let answered: string | undefined;
    /** a client whose upgrade request carries an X-Request-Id, and which reads the 101's */
    class WithRequestId extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers: { "X-Request-Id": "ws-trace-0042" } });
        this.once("upgrade", (res: IncomingMessage) => (answered = String(res.headers["x-request-id"])));
      }
    }
    const lines = await captureLog(async () => {
      const client = createClient({
        url: await wsUrl(app),
        webSocketImpl: WithRequestId,
        connectionParams: { Authorization: member.authorization },
        retryAttempts: 0,
        lazy: false,
        onNonLazyError: () => {},
      });
      await new Promise<void>((resolve) => client.on("connected", () => resolve()));
      await client.dispose();
    }, has("websocket closed"));
    expect(answered).toBe("ws-trace-0042");
    expect(named(lines, "websocket connected")).toEqual([
      expect.objectContaining({ level: "info", requestId: "ws-trace-0042", username: member.username }),
    ]);
    const [closed] = named(lines, "websocket closed");
    expect(closed).toMatchObject({ level: "info", requestId: "ws-trace-0042", username: member.username, code: 1000, reason: "normal" });
    expect(typeof closed!.durationMs).toBe("number");
  });

  it("§7.2: a refused connection (a wrong API key) logs its error code and 4403, then its close; no username", async () => {
    await setUp();
    const lines = await captureLog(async () => {
      await expect(connectWs(app, `ApiKey ${member.username}:wrong-key`)).rejects.toThrow("closed 4403");
    }, has("websocket closed"));
    const [refused] = named(lines, "websocket connection refused");
    expect(refused).toMatchObject({ level: "info", errorCode: "UNAUTHENTICATED", closeCode: 4403 });
    expect(typeof refused!.requestId).toBe("string");
    const [closed] = named(lines, "websocket closed");
    expect(closed).toMatchObject({ requestId: refused!.requestId, code: 4403, reason: "forbidden" });
    for (const entry of [refused, closed]) expect(entry).not.toHaveProperty("username");
  });

  it("§7.2: a close with live subscriptions logs how many it ended, not one line each", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const lines = await captureLog(
      async () => {
        ws.subscribe(CASE_CHANGED);
        ws.subscribe(CASE_CHANGED);
      },
      (seen) => named(seen, "websocket operation started").length === 2,
    );
    expect(lines).toHaveLength(2);
    const closing = await captureLog(() => ws.dispose(), has("websocket closed"));
    expect(named(closing, "websocket closed")).toEqual([expect.objectContaining({ code: 1000, reason: "normal", operationsEnded: 2 })]);
    expect(named(closing, "websocket operation completed")).toEqual([]);
  });
});

describe("§7.2 WebSocket operation lines", () => {
  it("§7.2: a query answered with FORBIDDEN logs 'started' with its type, then 'completed' with its error code; an ad-hoc name is not logged", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const lines = await captureLog(async () => {
      const result = await ws.run('query AdhocName9917 { cases(domain: "elsewhere", first: 1) { totalCount } }');
      expect(result).toMatchObject({ errors: [{ extensions: { code: "FORBIDDEN" } }] });
    }, has("websocket operation completed"));
    const [started] = named(lines, "websocket operation started");
    expect(started).toMatchObject({ level: "info", username: member.username, graphql: { operationType: "query" } });
    expect(typeof started!.operationId).toBe("string");
    const [completed] = named(lines, "websocket operation completed");
    expect(completed).toMatchObject({
      requestId: started!.requestId,
      operationId: started!.operationId,
      graphql: { operationType: "query", errorCodes: ["FORBIDDEN"] },
    });
    expect(typeof completed!.durationMs).toBe("number");
    expect(lines.join("\n")).not.toContain("AdhocName9917");
  });

  it("§7.2: a subscription logs 'started' as a subscription and 'completed' when the client completes it", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const live = ws.subscribe(CASE_CHANGED);
    const started = await captureLog(() => {}, has("websocket operation started"));
    expect(named(started, "websocket operation started")[0]).toMatchObject({ graphql: { operationType: "subscription" } });
    const completed = await captureLog(() => live.stop(), has("websocket operation completed"));
    expect(named(completed, "websocket operation completed")[0]).toMatchObject({ graphql: { operationType: "subscription" } });
    expect(named(completed, "websocket operation completed")[0]!.graphql).not.toHaveProperty("errorCodes");
  });

  it("§7.2: a subscribe message refused before it runs logs 'refused' with its codes (a document that does not validate)", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const lines = await captureLog(async () => {
      expect(await ws.run("{ nope }")).toMatchObject({ refused: [{ extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }] });
    }, has("websocket operation refused"));
    expect(named(lines, "websocket operation refused")).toEqual([
      expect.objectContaining({ username: member.username, graphql: { errorCodes: ["GRAPHQL_VALIDATION_FAILED"] } }),
    ]);
    expect(named(lines, "websocket operation started")).toEqual([]);
  });

  it("§7.2: with PERSISTED_OPERATIONS=only the operation's manifest name is logged", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "manifest-"));
    const manifest = path.join(dir, "manifest.json");
    const trusted = "query TrustedOverSocket { __typename }";
    await writeFile(manifest, JSON.stringify({ probe: trusted }));
    try {
      await setUp({ persistedOperations: "only", persistedOperationsManifest: manifest });
      const ws = await connect(member.authorization);
      const lines = await captureLog(async () => void (await ws.run(trusted)), has("websocket operation completed"));
      for (const message of ["websocket operation started", "websocket operation completed"]) {
        expect(named(lines, message)[0]).toMatchObject({ graphql: { operationType: "query", operationName: "TrustedOverSocket" } });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("§7.2 WebSocket credential re-check (4403)", () => {
  it("§7.2: a revoked API key's socket: a warn line naming why, with 4403, then the close line 4403", async () => {
    await setUp();
    const ws = await connect(member.authorization);
    const lines = await captureLog(async () => {
      const keyId = (await app.db.prisma.apiKey.findFirstOrThrow({ where: { user: { username: member.username } } })).id;
      await app.services.admin.revokeApiKey(app.root, keyId);
      expect(await ws.closed()).toBe(4403);
    }, has("websocket closed"));
    expect(named(lines, "websocket closed: its credentials no longer stand")).toEqual([
      expect.objectContaining({ level: "warn", username: member.username, reason: "credentials no longer valid", closeCode: 4403 }),
    ]);
    expect(named(lines, "websocket closed")).toEqual([expect.objectContaining({ username: member.username, code: 4403, reason: "forbidden" })]);
  });
});

describe("§7.2 never a credential, a variable's value or a body in the WebSocket lines", () => {
  it("§7.2: the connection's key and password, and an operation's variables and document, appear nowhere in the output", async () => {
    await setUp();
    const basic = `Basic ${Buffer.from(`${member.username}:${member.password}`).toString("base64")}`;
    const lines = await captureLog(
      async () => {
        const byKey = await connect(member.authorization);
        await byKey.run(
          'mutation Hidden7702($n: String!) { createCase(domain: "demo", input: { caseType: "t", caseName: $n, ownerId: "o" }) { case { caseId } } }',
          {
            n: "variable-Value-8813",
          },
        );
        const byPassword = await connect(basic);
        await byPassword.run("{ me { username } }");
        await expect(connectWs(app, `ApiKey ${member.username}:wrong-Key-5521`)).rejects.toThrow("closed 4403");
        for (const c of clients.splice(0)) await c.dispose();
      },
      (seen) => named(seen, "websocket closed").length === 3,
    );
    const output = lines.join("\n");
    for (const secret of [member.apiKey, member.password, basic.slice(6), "wrong-Key-5521", "variable-Value-8813", "Hidden7702", "caseName"]) {
      expect(output).not.toContain(secret);
    }
    expect(named(lines, "websocket connected")).toHaveLength(2);
  });
});
