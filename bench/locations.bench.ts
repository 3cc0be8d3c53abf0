/**
 * Part 4, locations: in a tree of 100,000 locations (quick: 10,000) under one root, a list of
 * 5,000 through REST (the largest page, JSON) and through GraphQL (`locations(first: 5000)`), and
 * the root's descendants through GraphQL (`location { descendants }`, breadth first), as many as
 * one request gets (`first` at its maximum, 1,000, since the Relay schema of #13 bounded the list).
 * Each is repeated and the median taken.
 */
import { getJson, graphql, log, table, type DbContext, type PartResult } from "./lib/harness.ts";
import { seedLocations } from "./lib/seed.ts";
import { clock, int, median, ms, rate } from "./lib/stats.ts";
import { RELATION_LIST } from "../src/graphql/list-bounds.ts";

const PAGE = 5000;
const DESCENDANTS = RELATION_LIST.maxSize;
const FIELDS = "locationId name siteCode latitude longitude locationData lastModified locationTypeCode locationTypeName parentLocationId";

export async function locations(ctx: DbContext): Promise<PartResult> {
  const { base, authorization, domain } = ctx.service.ready;
  const count = ctx.quick ? 10_000 : 100_000;
  const repeats = ctx.quick ? 3 : 5;
  log(`  locations: seeding a tree of ${count.toLocaleString("en")}`);
  const seedStart = clock();
  const rootId = await seedLocations(ctx.service, count);
  const seedMs = clock() - seedStart;

  const time = async (what: string, expected: number, fn: () => Promise<number>) => {
    const times: number[] = [];
    for (let i = 0; i < repeats + 1; i++) {
      const start = clock();
      const got = await fn();
      const elapsed = clock() - start;
      if (got !== expected) throw new Error(`${what}: got ${got}, expected ${expected}`);
      if (i > 0) times.push(elapsed); // the first is a warm-up
    }
    return median(times);
  };

  log("  locations: REST list, GraphQL list, descendants");
  const rest = await time(
    "REST list",
    PAGE,
    async () =>
      (await getJson<{ objects: unknown[] }>(`${base}/a/${domain}/api/location/v2/?limit=${PAGE}&format=json`, authorization)).objects.length,
  );
  const gql = await time(
    "GraphQL list",
    PAGE,
    async () =>
      (
        await graphql<{ locations: { nodes: unknown[] } }>(
          `${base}/graphql`,
          `query($domain: String!) { locations(domain: $domain, first: ${PAGE}) { totalCount nodes { ${FIELDS} } } }`,
          { domain },
          authorization,
        )
      ).locations.nodes.length,
  );
  const descendants = await time(
    "descendants",
    DESCENDANTS,
    async () =>
      (
        await graphql<{ location: { descendants: unknown[] } }>(
          `${base}/graphql`,
          `query($domain: String!, $id: ID!) { location(domain: $domain, locationId: $id) { descendants(first: ${DESCENDANTS}) { ${FIELDS} } } }`,
          { domain, id: rootId },
          authorization,
        )
      ).location.descendants.length,
  );

  const markdown = [
    `### Locations: a tree of ${count.toLocaleString("en")} (1 root, 10 regions, ${Math.floor(count / 100).toLocaleString("en")} districts, the rest villages)`,
    "",
    `Seeded in ${(seedMs / 1000).toFixed(1)} s. Median of ${repeats} runs after one warm-up.`,
    "",
    table(
      ["Request", "Locations", "Median (ms)", "Locations/s"],
      [
        [`REST list, \`limit=${PAGE}&format=json\``, int(PAGE), ms(rest), int(rate(PAGE, rest))],
        [`GraphQL \`locations(first: ${PAGE})\`, every field`, int(PAGE), ms(gql), int(rate(PAGE, gql))],
        [
          `GraphQL \`descendants(first: ${DESCENDANTS})\` of the root, every field`,
          int(DESCENDANTS),
          ms(descendants),
          int(rate(DESCENDANTS, descendants)),
        ],
      ],
    ),
  ].join("\n");
  return { markdown, figures: { restMs: rest, gqlMs: gql, descendantsMs: descendants } };
}
