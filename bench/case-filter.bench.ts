/**
 * Part 2, filtered list: `case_type` + `properties.p3` + `last_modified.gte` at limit 100, 200
 * requests from 16 concurrent clients (autocannon), latency p50/p99; ours through REST and GraphQL,
 * beside PostGraphile on the same filter. At 1,000,000 cases, one client, also through GraphQL in
 * each `orderBy` (each served by an index of its own).
 *
 * PostGraphile's stock `condition` argument is equality on whole columns: it cannot say "this JSON
 * property has this value" nor "at or after this time". The equivalent in stock PostGraphile is a
 * custom query: a STABLE SQL function returning SETOF cases, which PostGraphile exposes as a
 * connection (and PostgreSQL inlines, so the indexes serve it as they serve our query).
 */
import autocannon from "autocannon";
import { graphql, log, table, type DbContext, type PartResult, type Service } from "./lib/harness.ts";
import { seedCases } from "./lib/seed.ts";
import { clock, int, median, ms } from "./lib/stats.ts";

const REQUESTS = 200;
const CONNECTIONS = 16;
const LIMIT = 100;

/** The custom query PostGraphile serves the filter through (created before PostGraphile starts). */
export async function preparePeer(service: Service): Promise<void> {
  await service.call("sql", "CREATE SCHEMA IF NOT EXISTS bench_peer");
  await service.call(
    "sql",
    `
    CREATE OR REPLACE FUNCTION bench_peer.filtered_cases(domain_id uuid, case_type text, property_name text,
                                                         property_value text, last_modified_gte timestamptz)
    RETURNS SETOF public.cases LANGUAGE sql STABLE AS $$
      SELECT * FROM public.cases c
      WHERE c.domain_id = $1 AND c.case_type = $2 AND c.properties @> jsonb_build_object($3, $4) AND c.last_modified >= $5
      ORDER BY c.indexed_on, c.id
    $$`,
  );
}

const FIELDS_OURS = `caseId caseType caseName externalId ownerId dateOpened lastModified serverLastModified indexedOn
  closed dateClosed properties indices { name caseId caseType relationship }`;
const FIELDS_PEER = `rowId caseType caseName externalId ownerId dateOpened lastModified serverLastModified indexedOn
  closed dateClosed properties caseIndicesByCaseIdAndDomainId { nodes { name referencedId referencedType relationship } }`;

interface Target {
  name: string;
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** rows in one response, to check the request before loading it */
  count: (body: any) => number;
}

/** One request, checked for a full page; its milliseconds. */
async function request(target: Target): Promise<number> {
  const start = clock();
  const res = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
  const body = await res.json();
  const elapsed = clock() - start;
  const rows = res.status === 200 ? target.count(body) : -1;
  if (rows !== LIMIT) throw new Error(`${target.name}: expected a full page of ${LIMIT}, got ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
  return elapsed;
}

async function load(target: Target) {
  await request(target);
  const result = await autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections: CONNECTIONS,
    amount: REQUESTS,
    timeout: 60,
  });
  if (result.errors || result.non2xx || result.timeouts) {
    throw new Error(`${target.name}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`);
  }
  // requests ÷ elapsed: autocannon's requests.average is a mean over whole-second buckets, which a
  // run of a few seconds turns into one figure for every server (67 = 200 requests ÷ 3 buckets)
  return { p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.total / result.duration, seconds: result.duration };
}

/** After the first tenth of `cases` (seeded one millisecond apart from 2024-01-01). */
const sinceOf = (cases: number) => new Date(Date.UTC(2024, 0, 1) + Math.floor(cases / 10)).toISOString().slice(0, 23);

/** The filtered list through REST, GraphQL and (on PostgreSQL) PostGraphile, `since` the `gte` bound. */
function targetsOf(ctx: DbContext, since: string): Target[] {
  const { base, authorization, domain, domainId } = ctx.service.ready;
  const json = { "Content-Type": "application/json", Accept: "application/json" };
  const targets: Target[] = [
    {
      name: "Ours, REST",
      url: `${base}/a/${domain}/api/case/v2/?case_type=patient&properties.p3=district-5&last_modified.gte=${since}&limit=${LIMIT}`,
      method: "GET",
      headers: { Authorization: authorization, Accept: "application/json" },
      count: (b) => b.cases.length,
    },
    {
      name: "Ours, GraphQL",
      url: `${base}/graphql`,
      method: "POST",
      headers: { ...json, Authorization: authorization },
      body: JSON.stringify({
        query: `query Filter($domain: String!, $since: String!) {
          cases(domain: $domain, first: ${LIMIT}, filter: { caseType: ["patient"], properties: [{ name: "p3", values: ["district-5"] }], lastModified: { gte: $since } }) {
            totalCount nodes { ${FIELDS_OURS} } } }`,
        variables: { domain, since },
      }),
      count: (b) => b.data?.cases?.nodes?.length ?? -1,
    },
  ];
  if (ctx.peer) {
    targets.push({
      name: "PostGraphile 5 (custom query function)",
      url: ctx.peer.ready.url,
      method: "POST",
      headers: json,
      body: JSON.stringify({
        query: `query Filter($domainId: UUID!, $since: Datetime!) {
          benchPeerFilteredCases(domainId: $domainId, caseType: "patient", propertyName: "p3", propertyValue: "district-5", lastModifiedGte: $since, first: ${LIMIT}) {
            totalCount nodes { ${FIELDS_PEER} } } }`,
        variables: { domainId, since: `${since}Z` },
      }),
      count: (b) => b.data?.benchPeerFilteredCases?.nodes?.length ?? -1,
    });
  }
  return targets;
}

/** Every `orderBy` of `cases`, as the schema names them. */
const ORDERS = ["INDEXED_ON", "LAST_MODIFIED", "SERVER_LAST_MODIFIED", "DATE_OPENED", "DATE_CLOSED", "CASE_NAME"].flatMap((field) => [
  `${field}_ASC`,
  `${field}_DESC`,
]);

/** The filtered list through GraphQL in each order: the same filter, page and fields. */
function orderedTargets(ctx: DbContext, since: string): Target[] {
  const { base, authorization, domain } = ctx.service.ready;
  return ORDERS.map((orderBy) => ({
    name: `Ours, GraphQL, ${orderBy}`,
    url: `${base}/graphql`,
    method: "POST" as const,
    headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: authorization },
    body: JSON.stringify({
      query: `query Filter($domain: String!, $since: String!) {
        cases(domain: $domain, first: ${LIMIT}, orderBy: ${orderBy}, filter: { caseType: ["patient"], properties: [{ name: "p3", values: ["district-5"] }], lastModified: { gte: $since } }) {
          totalCount nodes { ${FIELDS_OURS} } } }`,
      variables: { domain, since },
    }),
    count: (b) => b.data?.cases?.nodes?.length ?? -1,
  }));
}

/** How many cases the filter matches (through our GraphQL `totalCount`). */
function matchingCases(ctx: DbContext, since: string) {
  const { base, authorization, domain } = ctx.service.ready;
  return graphql<{ cases: { totalCount: number } }>(
    `${base}/graphql`,
    `query($domain: String!, $since: String!) { cases(domain: $domain, first: 1, filter: { caseType: ["patient"], properties: [{ name: "p3", values: ["district-5"] }], lastModified: { gte: $since } }) { totalCount } }`,
    { domain, since },
    authorization,
  );
}

export async function caseFilter(ctx: DbContext): Promise<PartResult> {
  const since = sinceOf(ctx.cases);
  const targets = targetsOf(ctx, since);
  // the same number of matches everywhere
  const matches = await matchingCases(ctx, since);

  const rows: string[][] = [];
  const figures: Record<string, number> = {};
  for (const target of targets) {
    log(`  filtered list: ${target.name}`);
    const r = await load(target);
    rows.push([target.name, ms(r.p50), ms(r.p99), int(r.rps)]);
    figures[`${target.name} p50`] = r.p50;
    figures[`${target.name} p99`] = r.p99;
  }
  const markdown = [
    `### Filtered list: \`case_type\` + \`properties.p3\` + \`last_modified.gte\`, limit ${LIMIT}`,
    "",
    `${REQUESTS} requests from ${CONNECTIONS} concurrent clients (autocannon); ${int(matches.cases.totalCount.valueOf())} cases match, each response carries the first ${LIMIT} with every field, and the count.`,
    "",
    table(["Server", "p50 (ms)", "p99 (ms)", "Requests/s"], rows),
    "",
    ctx.peer
      ? "PostGraphile's stock `condition` argument is equality on whole columns, so it cannot express the JSON property or the `gte` bound; its equivalent is a custom query, a STABLE SQL function `filtered_cases(domain_id, case_type, property_name, property_value, last_modified_gte)` returning `SETOF cases` in keyset order, which PostGraphile serves as a connection and PostgreSQL inlines (same indexes as ours)."
      : "PostGraphile is measured on PostgreSQL only.",
  ].join("\n");
  return { markdown, figures };
}

/** The domain's size for the single-client measurement, and its target (issue #16). */
export const MILLION = 1_000_000;
const SINGLE_CLIENT_TARGET_MS = 50;
const SINGLE_CLIENT_ROUNDS = 21;

/**
 * The filtered list with 1,000,000 cases in the domain, one client: the domain is topped up to a
 * million in SQL (generate_series, as the first seeding), then each server answers the same first
 * page in turn, one request at a time (rounds interleaved, after one untimed request each). Runs
 * last on its database: it leaves the domain ten times larger than the other parts measure.
 */
export async function caseFilterAtMillion(ctx: DbContext): Promise<PartResult> {
  const seedStart = clock();
  await seedCases(ctx.service, MILLION - ctx.cases, ctx.cases);
  const seedSeconds = (clock() - seedStart) / 1000;
  const since = sinceOf(MILLION);
  const targets = [...targetsOf(ctx, since), ...orderedTargets(ctx, since)];
  const matches = await matchingCases(ctx, since);
  const times = new Map(targets.map((t) => [t, [] as number[]]));
  for (const target of targets) await request(target);
  for (let round = 0; round < SINGLE_CLIENT_ROUNDS; round++) {
    for (const target of targets) times.get(target)!.push(await request(target));
  }
  const figures: Record<string, number> = {};
  const rows = targets.map((target) => {
    const p50 = median(times.get(target)!);
    figures[`${target.name} p50`] = p50;
    if (target.name.startsWith("Ours, GraphQL, "))
      figures["Ours, GraphQL, slowest order p50"] = Math.max(figures["Ours, GraphQL, slowest order p50"] ?? 0, p50);
    const ours = target.name.startsWith("Ours");
    return [target.name, ms(p50), ours ? (p50 < SINGLE_CLIENT_TARGET_MS ? "met" : "missed") : "—"];
  });
  const markdown = [
    `### Filtered list with ${int(MILLION)} cases in the domain, one client`,
    "",
    `The domain topped up to ${int(MILLION)} cases in SQL (${seedSeconds.toFixed(0)} s); ${int(matches.cases.totalCount)} cases match the same filter (\`last_modified.gte\` after the first tenth), limit ${LIMIT}, with the count. ` +
      `Median of ${SINGLE_CLIENT_ROUNDS} requests per server, one at a time, the servers interleaved. ` +
      "The rows `Ours, GraphQL, <orderBy>` page the same filter in each order of `cases(orderBy)` (the first row is `INDEXED_ON_ASC`, the default). " +
      "The seed's dates all rise together (one millisecond apart), every case is open (no `dateClosed`: that order is by `caseId`), and names are `case <n>`.",
    "",
    table(["Server", "p50 (ms)", `Under ${SINGLE_CLIENT_TARGET_MS} ms`], rows),
  ].join("\n");
  return { markdown, figures };
}
