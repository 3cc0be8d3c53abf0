import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import type { Admission } from "../../src/admission/admission.ts";
import type { Principal } from "../../src/auth/principal.ts";
import { WsSessions } from "../../src/graphql/ws-sessions.ts";
import type { ConnectionLog } from "../../src/observability/websocket-log.ts";

/**
 * CONTRACT §7.4 at the scale of a wall of dashboards, with the periodic re-check of every socket
 * (WS_RECHECK_SECONDS): sockets admitted as the same user and credential stand or fall together,
 * so a round looks each credential up once, not once per socket; a credential that no longer
 * stands still closes every socket it admitted (4403), and only those.
 */

const principal = (userId: string, keyId: string): Principal =>
  ({ userId, username: userId, isSuperuser: false, scheme: "apikey", credential: { kind: "apikey", keyId } }) as unknown as Principal;

function socket() {
  const closes: number[] = [];
  return { closes, readyState: 1, OPEN: 1, close: (code: number) => void closes.push(code) } as unknown as WebSocket & { closes: number[] };
}

const quietLog = { credentialsWithdrawn: () => {} } as unknown as ConnectionLog;

describe("the periodic re-check of WebSocket credentials", () => {
  it("looks each credential up once a round, and closes every socket of a credential that no longer stands (4403), and no other", async () => {
    const looked: string[] = [];
    let revoked = "";
    const admission = {
      recheck: async (p: Principal) => {
        const keyId = (p.credential as { keyId: string }).keyId;
        looked.push(keyId);
        return keyId === revoked ? null : { principal: p, grants: new Map() };
      },
    } as unknown as Admission;
    const sessions = new WsSessions(admission, { perSocket: 10, perUser: 10 });
    const wall = Array.from({ length: 5 }, () => socket());
    const other = socket();
    for (const s of wall) sessions.open(s, principal("alice", "key-1"), quietLog);
    sessions.open(other, principal("bob", "key-2"), quietLog);

    await sessions.recheckAll();
    expect(looked.sort()).toEqual(["key-1", "key-2"]);

    revoked = "key-1";
    await sessions.recheckAll();
    expect(wall.map((s) => s.closes)).toEqual(wall.map(() => [4403]));
    expect(other.closes).toEqual([]);
  });
});
