import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { build, createDomain, createUser } from "../helpers/app.ts";
import { runs } from "../helpers/arbitraries.ts";
import { connectWs, type OperationOutcome } from "../helpers/ws.ts";
import { apiKeyRows, countCases } from "../helpers/rows.ts";

/**
 * F2 (issue #12) as a property: on one open WebSocket, a generated sequence of credential changes
 * (revoke the key, deactivate the user, remove the membership, or nothing), each made through the
 * admin service (which tells every process) or behind its back in the database (so that only the
 * per-message re-check can notice), interleaved with reads and writes. Until a change forbids it,
 * every operation succeeds; after one, none does, and no case is written.
 */

type Change = "revokeKey" | "deactivate" | "removeMembership" | "nothing";
type Operation = "read" | "write";
type Step = { change: Change; via: "admin" | "database"; operation: Operation };

const step: fc.Arbitrary<Step> = fc.record({
  change: fc.constantFrom<Change>("revokeKey", "deactivate", "removeMembership", "nothing", "nothing"),
  via: fc.constantFrom<"admin" | "database">("admin", "database"),
  operation: fc.constantFrom<Operation>("read", "write"),
});

const OPERATIONS: Record<Operation, string> = {
  read: '{ cases(domain: "demo", first: 1) { totalCount } }',
  write: 'mutation { createCase(domain: "demo", input: { caseType: "t", caseName: "p", ownerId: "o" }) { case { caseId } } }',
};

const succeeded = (outcome: OperationOutcome) => "data" in outcome && !!outcome.data && !("errors" in outcome && outcome.errors?.length);

describe("properties: WebSocket credentials (F2)", () => {
  it("F2: no operation on an open socket succeeds after a credential change that forbids it", { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), async (steps) => {
        const app = await build();
        try {
          await createDomain(app, "demo");
          const user = await createUser(app, { domain: "demo", permissions: ["access_api", "edit_data"] });
          const key = await (await apiKeyRows(app, user.username))[0];
          const ws = await connectWs(app, user.authorization);
          let forbidden = false;
          try {
            for (const { change, via, operation } of steps) {
              await applyChange(change, via);
              forbidden ||= change !== "nothing";
              const before = await countCases(app);
              const outcome = await ws.run(OPERATIONS[operation]);
              expect(succeeded(outcome), JSON.stringify({ change, via, operation, outcome })).toBe(!forbidden);
              if (forbidden) expect(await countCases(app)).toBe(before);
            }
          } finally {
            await ws.dispose();
          }

          async function applyChange(change: Change, via: "admin" | "database"): Promise<void> {
            const { admin } = app.services;
            const { prisma } = app.db;
            if (change === "revokeKey") {
              if (via === "admin") await admin.revokeApiKey(app.root, key.id);
              else await prisma.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
            } else if (change === "deactivate") {
              if (via === "admin") await admin.setUserActive(app.root, user.username, false);
              else await prisma.user.update({ where: { username: user.username }, data: { isActive: false } });
            } else if (change === "removeMembership") {
              if (via === "admin") await admin.removeMembership(app.root, user.username, "demo");
              else await prisma.membership.deleteMany({ where: { user: { username: user.username } } });
            }
          }
        } finally {
          await app.close();
        }
      }),
      runs(8),
    );
  });
});
