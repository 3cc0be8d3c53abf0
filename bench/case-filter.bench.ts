/**
 * Part 2, filtered list: `case_type` + `properties.p3` + `last_modified.gte` at limit 100, 200
 * requests from 16 concurrent clients (autocannon), latency p50/p99; ours through REST and GraphQL,
 * beside PostGraphile on the same filter.
 *
 * PostGraphile's stock `condition` argument is equality on whole columns: it cannot say "this JSON
 * property has this value" nor "at or after this time". The equivalent in stock PostGraphile is a
 * custom query: a STABLE SQL function returning SETOF cases, which PostGraphile exposes as a
 * connection (and PostgreSQL inlines, so the indexes serve it as they serve our query).
 */
import autocannon from "autocannon";
import { graphql, log, table, type DbContext, type PartResult, type Service } from "./lib/harness.ts";
import { int, ms } from "./lib/stats.ts";

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
  closed dateClosed properties caseIndicesByCaseId { nodes { name referencedId referencedType relationship } }`;

interface Target {
  name: string;
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** rows in one response, to check the request before loading it */
  count: (body: any) => number;
}

async function load(target: Target) {
  const res = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
  const body = await res.json();
  const rows = res.status === 200 ? target.count(body) : -1;
  if (rows !== LIMIT) throw new Error(`${target.name}: expected a full page of ${LIMIT}, got ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
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
  return { p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.average, seconds: result.duration };
}

export async function caseFilter(ctx: DbContext): Promise<PartResult> {
  const { base, authorization, domain, domainId } = ctx.service.ready;
  // after the first tenth of the seeded cases (seeded one millisecond apart from 2024-01-01)
  const since = new Date(Date.UTC(2024, 0, 1) + Math.floor(ctx.cases / 10)).toISOString().slice(0, 23);
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
  // the same number of matches everywhere
  const matches = await graphql<{ cases: { totalCount: number } }>(
    `${base}/graphql`,
    `query($domain: String!, $since: String!) { cases(domain: $domain, first: 1, filter: { caseType: ["patient"], properties: [{ name: "p3", values: ["district-5"] }], lastModified: { gte: $since } }) { totalCount } }`,
    { domain, since },
    authorization,
  );

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
