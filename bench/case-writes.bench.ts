/**
 * Part 3, bulk writes: 100-case bulk creates and bulk upserts (no `create` flag, an external_id
 * that exists: each item updates its case) through REST, sequentially and from 8 concurrent
 * clients, beside the floor: one multi-row INSERT through the bare driver per 100 cases, at the
 * same concurrency.
 */
import { log, table, type DbContext, type PartResult } from "./lib/harness.ts";
import { clock, inParallel, int, rate, ratio } from "./lib/stats.ts";

const CONCURRENT = 8;

const properties = (i: number, round: string) => Object.fromEntries(Array.from({ length: 10 }, (_, p) => [`p${p}`, `v${p}-${i}-${round}`]));

function createBody(set: string, r: number): string {
  return JSON.stringify(
    Array.from({ length: 100 }, (_, i) => ({
      create: true,
      case_type: "visit",
      case_name: `bulk ${set} ${r}-${i}`,
      owner_id: "owner-1",
      external_id: `${set}-${r}-${i}`,
      properties: properties(i, "a"),
    })),
  );
}

/** Upserts of cases the create phase made: each item updates its case by external_id. */
function upsertBody(set: string, r: number): string {
  return JSON.stringify(
    Array.from({ length: 100 }, (_, i) => ({
      case_type: "visit",
      case_name: `bulk ${set} ${r}-${i} again`,
      owner_id: "owner-2",
      external_id: `${set}-${r}-${i}`,
      properties: properties(i, "b"),
    })),
  );
}

export async function caseWrites(ctx: DbContext): Promise<PartResult> {
  const { base, authorization, domain } = ctx.service.ready;
  const requests = ctx.quick ? 16 : 80;
  const endpoint = `${base}/a/${domain}/api/case/v2/`;
  const send = async (body: string) => {
    const res = await fetch(endpoint, {
      method: "POST",
      headers: { Authorization: authorization, "Content-Type": "application/json", Accept: "application/json" },
      body,
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`bulk write failed: ${res.status} ${text.slice(0, 500)}`);
  };
  const run = async (concurrency: number, body: (r: number) => string) => {
    const start = clock();
    await inParallel(requests, concurrency, (r) => send(body(r)));
    return clock() - start;
  };

  log(`  bulk writes: ${requests} × 100-case creates and upserts, 1 and ${CONCURRENT} clients`);
  // warm-up: the first request pays for JIT and statement preparation
  await send(createBody("warm", 0));
  const measured = {
    create1: await run(1, (r) => createBody("s", r)),
    create8: await run(CONCURRENT, (r) => createBody("c", r)),
    upsert1: await run(1, (r) => upsertBody("s", r)),
    upsert8: await run(CONCURRENT, (r) => upsertBody("c", r)),
  };
  const floor1 = (await ctx.service.call<{ ms: number }>("floorInserts", requests, 1, "s")).ms;
  const floor8 = (await ctx.service.call<{ ms: number }>("floorInserts", requests, CONCURRENT, "c")).ms;

  const cases = requests * 100;
  const line = (name: string, ours: number, floor: number) => [name, int(rate(cases, ours)), int(rate(cases, floor)), ratio(ours / floor)];
  const markdown = [
    `### Bulk writes: ${requests} requests of 100 cases (${cases.toLocaleString("en")} cases) each way`,
    "",
    table(
      ["Measure", "Ours (cases/s)", "Floor (cases/s)", "Time ÷ floor"],
      [
        line("Creates, 1 client", measured.create1, floor1),
        line(`Creates, ${CONCURRENT} clients`, measured.create8, floor8),
        line("Upserts (each updates a case), 1 client", measured.upsert1, floor1),
        line(`Upserts (each updates a case), ${CONCURRENT} clients`, measured.upsert8, floor8),
      ],
    ),
    "",
    "Ours: `POST /a/bench/api/case/v2/` with a list of 100 items (authentication, validation, one transaction with the generated form and its form_cases rows, the response with all 100 cases). " +
      `Floor: one multi-row INSERT of 100 cases through the driver${ctx.kind === "postgres" ? ` (a pool of ${CONCURRENT} connections)` : " (PGlite has one connection: concurrent statements queue)"}; the same floor serves creates and upserts.`,
  ].join("\n");
  return {
    markdown,
    figures: {
      create1: measured.create1 / floor1,
      create8: measured.create8 / floor8,
      upsert1: measured.upsert1 / floor1,
      upsert8: measured.upsert8 / floor8,
    },
  };
}
