import { Arg, Ctx, ID, Query, Resolver } from "type-graphql";
import { APP_NODES } from "../apps/app.resolver.ts";
import { CASE_NODES } from "../cases/case.resolver.ts";
import { MULTIMEDIA_NODES } from "../multimedia/multimedia.resolver.ts";
import { DomainError, type ErrorCode } from "../errors.ts";
import type { GraphQLContext } from "./context.ts";
import { perIdCost } from "./list-bounds.ts";
import { NodeInterface, parseGlobalId, type NodeFetcher, type NodeTypeName, type NodeValue } from "./node.ts";

/** Each Node type's fetcher, from the feature that owns the type. */
export const NODE_FETCHERS: Partial<Record<NodeTypeName, NodeFetcher<GraphQLContext>>> = {
  ...CASE_NODES,
  ...APP_NODES,
  ...MULTIMEDIA_NODES,
};

/** Refusals that mean "nothing there for you"; an outage or a rate limit still reaches the client. */
const HIDDEN = new Set<ErrorCode>(["FORBIDDEN", "NOT_FOUND", "BAD_USER_INPUT"]);

/** The object a global id names, if the caller may see it; null for anything else, never an error that tells which. */
async function fetchNode(ctx: GraphQLContext, id: string): Promise<NodeValue | null> {
  const ref = parseGlobalId(id);
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

@Resolver()
export class NodeResolver {
  @Query(() => NodeInterface, { nullable: true, description: "The object with this global id, or null when there is none the caller may see." })
  node(
    @Arg("id", () => ID, { description: "a global id, as some object's `id` gave it" }) id: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<NodeValue | null> {
    return fetchNode(ctx, id);
  }

  @Query(() => [NodeInterface], {
    nullable: "items",
    description: "The objects with these global ids, in order; null for each the caller cannot see.",
    complexity: perIdCost("ids"),
  })
  nodes(
    @Arg("ids", () => [ID], { description: "global ids, as objects' `id` gave them" }) ids: string[],
    @Ctx() ctx: GraphQLContext,
  ): Promise<(NodeValue | null)[]> {
    return Promise.all(ids.map((id) => fetchNode(ctx, id)));
  }
}
