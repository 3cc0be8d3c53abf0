/**
 * Part 1, case pull: every seeded case pulled through REST `next` links at limit=5000 and through
 * GraphQL at first: 5000, beside the floor (the same keyset query through the bare driver, rows
 * turned into the same JSON) and the peer (PostGraphile's allCases connection, first: 5000 with
 * cursors, same columns and the indices relation).
 */
import { getJson, graphql, log, table, type DbContext, type PartResult } from "./lib/harness.ts";
import { clock, int, median, rate, ratio } from "./lib/stats.ts";

const PAGE = 5000;
/** Rounds of every path, alternated: the median of five lets the floor's own spread cancel; quick mode stays quick. */
const ROUNDS = { full: 5, quick: 3 };

const OURS = `query Pull($domain: String!, $after: String) {
  cases(domain: $domain, first: ${PAGE}, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { caseId caseType caseName externalId ownerId dateOpened lastModified serverLastModified indexedOn
            closed dateClosed properties indices { name caseId caseType relationship } }
  }
}`;

const PEER = `query Pull($domainId: UUID!, $after: Cursor) {
  allCases(first: ${PAGE}, after: $after, orderBy: [INDEXED_ON_ASC, PRIMARY_KEY_ASC], condition: { domainId: $domainId }) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { rowId caseType caseName externalId ownerId dateOpened lastModified serverLastModified indexedOn
            closed dateClosed properties caseIndicesByCaseIdAndDomainId { nodes { name referencedId referencedType relationship } } }
  }
}`;

interface Connection {
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  nodes: unknown[];
}

async function pullConnection(fetchPage: (after: string | null) => Promise<Connection>): Promise<{ rows: number; ms: number }> {
  let rows = 0;
  let after: string | null = null;
  const start = clock();
  for (;;) {
    const page = await fetchPage(after);
    rows += page.nodes.length;
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  return { rows, ms: clock() - start };
}

export async function casePull(ctx: DbContext): Promise<PartResult> {
  const { base, authorization, domain, domainId } = ctx.service.ready;
  const expect = (what: string, rows: number) => {
    if (rows !== ctx.cases) throw new Error(`${what} pulled ${rows} cases, expected ${ctx.cases}`);
  };

  // Warm-up, untimed: one page through each path, so that no path pays for JIT compilation or
  // cold caches that the others do not.
  log("  case pull: warm-up (one page through each path)");
  await getJson(`${base}/a/${domain}/api/case/v2/?limit=${PAGE}`, authorization);
  await graphql(`${base}/graphql`, OURS, { domain, after: null }, authorization);
  await ctx.service.call("floorPull", PAGE, 1);
  if (ctx.peer) await graphql(ctx.peer.ready.url, PEER, { domainId, after: null });

  const restPull = async () => {
    let rows = 0;
    let url: string | undefined = `${base}/a/${domain}/api/case/v2/?limit=${PAGE}`;
    const start = clock();
    while (url) {
      const body: { cases: unknown[]; next?: string } = await getJson(url, authorization);
      rows += body.cases.length;
      url = body.next;
    }
    return { rows, ms: clock() - start };
  };
  const paths: [string, () => Promise<{ rows: number; ms: number }>][] = [
    ["REST", restPull],
    [
      "GraphQL",
      () => pullConnection(async (after) => (await graphql<{ cases: Connection }>(`${base}/graphql`, OURS, { domain, after }, authorization)).cases),
    ],
    ["floor", () => ctx.service.call<{ rows: number; ms: number }>("floorPull", PAGE)],
  ];
  const peerEndpoint = ctx.peer?.ready.url;
  if (peerEndpoint) {
    paths.push([
      "PostGraphile",
      () => pullConnection(async (after) => (await graphql<{ allCases: Connection }>(peerEndpoint, PEER, { domainId, after })).allCases),
    ]);
  }
  // Rounds interleave the paths, so that a change in the machine's load falls on all of them; each
  // path's figure is its median round.
  // Beside each time, the CPU our server process spent on it (the floor runs in that process too):
  // steadier than the time on a loaded machine, though it leaves out PostgreSQL's share.
  const times = new Map<string, number[]>(paths.map(([name]) => [name, []]));
  const cpu = new Map<string, number[]>(paths.map(([name]) => [name, []]));
  const serverCpuMs = async () => {
    const { user, system } = await ctx.service.call<NodeJS.CpuUsage>("cpuUsage");
    return (user + system) / 1000;
  };
  const rounds = ctx.quick ? ROUNDS.quick : ROUNDS.full;
  for (let round = 1; round <= rounds; round++) {
    for (const [name, pull] of paths) {
      log(`  case pull, round ${round}/${rounds}: ${name}, ${ctx.cases.toLocaleString("en")} cases`);
      const cpuBefore = await serverCpuMs();
      const r = await pull();
      cpu.get(name)!.push((await serverCpuMs()) - cpuBefore);
      expect(name, r.rows);
      times.get(name)!.push(r.ms);
    }
  }
  const serverCpu = (name: string) =>
    name === "PostGraphile" ? "—" : `${(median(cpu.get(name)!) / 1000).toFixed(2)} (${ratio(median(cpu.get(name)!) / median(cpu.get("floor")!))})`;
  const result = (name: string) => ({ rows: ctx.cases, ms: median(times.get(name)!) });
  const rest = result("REST");
  const gql = result("GraphQL");
  const floor = result("floor");
  const peer = peerEndpoint ? result("PostGraphile") : undefined;

  const spread = (name: string) => {
    const all = times.get(name)!;
    return `${(Math.min(...all) / 1000).toFixed(2)}–${(Math.max(...all) / 1000).toFixed(2)}`;
  };
  const line = (label: string, name: string, r: { rows: number; ms: number }, vsPeer: boolean) => [
    label,
    int(rate(r.rows, r.ms)),
    (r.ms / 1000).toFixed(2),
    spread(name),
    ratio(r.ms / floor.ms),
    vsPeer && peer ? ratio(r.ms / peer.ms) : "—",
    serverCpu(name),
  ];
  const markdown = [
    `### Case pull: ${ctx.cases.toLocaleString("en")} cases, pages of ${PAGE.toLocaleString("en")}`,
    "",
    table(
      ["Path", "Cases/s", "Seconds", "Rounds (s)", "Time ÷ floor", "Time ÷ PostGraphile", "Server CPU s (÷ floor's)"],
      [
        line("Ours, REST `next` links (limit=5000)", "REST", rest, true),
        line("Ours, GraphQL `cases(first: 5000, after)`", "GraphQL", gql, true),
        line("Floor: keyset query through the driver, same JSON", "floor", floor, false),
        ...(peer ? [line("PostGraphile 5, `allCases(first: 5000, after)`", "PostGraphile", peer, false)] : []),
      ],
    ),
    "",
    `Median of ${rounds} rounds (the paths interleaved), after one untimed page through each. Every path returns all columns and the indices; ours and PostGraphile also the total count of each page's query. Server CPU: the median CPU time of our server process (where the floor runs too) over a pull, PostgreSQL's not counted. ` +
      (peer ? "" : "PostGraphile needs a PostgreSQL server (it speaks the wire protocol), so it is measured on PostgreSQL only."),
  ].join("\n");
  return {
    markdown,
    figures: {
      restRatio: rest.ms / floor.ms,
      gqlRatio: gql.ms / floor.ms,
      restCpuRatio: median(cpu.get("REST")!) / median(cpu.get("floor")!),
      gqlCpuRatio: median(cpu.get("GraphQL")!) / median(cpu.get("floor")!),
      ...(peer ? { restVsPeer: rest.ms / peer.ms, gqlVsPeer: gql.ms / peer.ms } : {}),
    },
  };
}
