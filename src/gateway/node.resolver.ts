/**
 * `Query.node` and `Query.nodes`: global ids (graphql/node.ts) turned back into objects by the
 * fetcher of the feature that owns each type (features.ts), each behind the caller's access. A
 * federation subgraph's `_entities` fetches through the same path (federation.ts).
 */
import { Arg, Ctx, ID, Query, Resolver } from "type-graphql";
import { badInput, DomainError, type ErrorCode } from "../errors.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import { perIdCost, RELATION_LIST } from "../graphql/list-bounds.ts";
import { NodeInterface, parseGlobalId, type NodeRef, type NodeValue } from "../graphql/node.ts";
import { NODE_FETCHERS } from "./features.ts";

/** Refusals that mean "nothing there for you"; an outage or a rate limit still reaches the client. */
const HIDDEN = new Set<ErrorCode>(["FORBIDDEN", "NOT_FOUND", "BAD_USER_INPUT"]);

/** The most ids one `nodes` takes, like a relation list's largest page (G3: 240,000 ids stalled the process). */
const MAX_NODE_IDS = RELATION_LIST.maxSize;

/**
 * Ids of one `nodes` fetched together (each feature's loader batches them per domain): the
 * execution budget is checked before each batch, so that an operation whose time is up starts no
 * more fetches, instead of having started them all at once.
 */
const NODE_BATCH = 100;

/** The object a ref names, if the caller may see it; null for anything else, never an error that tells which. */
async function fetchRef(ctx: GraphQLContext, ref: NodeRef | null): Promise<NodeValue | null> {
  const fetch = ref && NODE_FETCHERS[ref.type];
  if (!ref || !fetch) return null;
  try {
    const found = await fetch(ctx, ref);
    return found && { ...found, __typename: ref.type };
  } catch (error) {
    if (error instanceof DomainError && HIDDEN.has(error.code)) return null;
    throw error;
  }
}

/**
 * The objects of `nodes` (and of federation's `_entities`), in order: `refOf` reads what each item
 * names, `argument` names the list in the error for one too long. The domains the refs name are
 * checked together, once: a ref of a domain the caller is not in (or, for a superuser, of none) is
 * null without a scope, a loader or a query of its own. Users and domains (no domain part) are
 * checked by their fetchers.
 */
export async function fetchNodes<Item>(
  ctx: GraphQLContext,
  items: readonly Item[],
  refOf: (item: Item) => NodeRef | null,
  argument: string,
): Promise<(NodeValue | null)[]> {
  // counted before any is decoded (G3: 240,000 ids stalled the process)
  if (items.length > MAX_NODE_IDS) throw badInput(`'${argument}' must hold at most ${MAX_NODE_IDS} ids.`);
  const refs = items.map(refOf);
  const named = refs.flatMap((ref) => (ref && ref.domain !== "" ? [ref.domain] : []));
  const open = named.length ? await ctx.services.admin.openDomains(ctx.principal, named) : new Set<string>();
  const visible = (ref: NodeRef | null) => ref !== null && (ref.domain === "" || open.has(ref.domain));
  const found: (NodeValue | null)[] = [];
  for (let start = 0; start < refs.length; start += NODE_BATCH) {
    ctx.budget.check();
    const batch = refs.slice(start, start + NODE_BATCH);
    found.push(...(await Promise.all(batch.map((ref) => (visible(ref) ? fetchRef(ctx, ref) : null)))));
  }
  return found;
}

@Resolver()
export class NodeResolver {
  @Query(() => NodeInterface, { nullable: true, description: "The object with this global id, or null when there is none the caller may see." })
  node(
    @Arg("id", () => ID, { description: "a global id, as some object's `id` gave it" }) id: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<NodeValue | null> {
    return fetchRef(ctx, parseGlobalId(id));
  }

  @Query(() => [NodeInterface], {
    nullable: "items",
    description: `The objects with these global ids, in order; null for each the caller cannot see. At most ${MAX_NODE_IDS} ids: more are BAD_USER_INPUT.`,
    complexity: perIdCost("ids"),
  })
  nodes(
    @Arg("ids", () => [ID], { description: `global ids, as objects' \`id\` gave them; at most ${MAX_NODE_IDS}` }) ids: string[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<(NodeValue | null)[]> {
    return fetchNodes(ctx, ids, parseGlobalId, "ids");
  }
}
