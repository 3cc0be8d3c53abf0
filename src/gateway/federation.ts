/**
 * The gateway as an Apollo Federation 2 subgraph (FEDERATION=true): which of its types other
 * subgraphs may reference, and how `_entities` finds them — through `Query.nodes`'s path, so that
 * a representation names an object exactly when its global id would, for the same caller.
 */
import type { GraphQLContext } from "../graphql/context.ts";
import type { SubgraphOptions } from "../graphql/federation.ts";
import { parseGlobalId, type NodeRef, type NodeTypeName } from "../graphql/node.ts";
import { isObject } from "../util/json.ts";
import { fetchNodes } from "./node.resolver.ts";

/**
 * The entities, each keyed by its global `id`: the objects another service's data points at (a
 * case, a location, an app, an upload). The id names the domain too, so a reference never needs
 * a second key field, and `_entities` scopes it as `nodes` scopes the same id.
 */
const ENTITY_TYPES = ["Case", "Location", "App", "MultimediaJob"] as const satisfies readonly NodeTypeName[];

const isEntityType = (name: unknown): boolean => (ENTITY_TYPES as readonly unknown[]).includes(name);

/**
 * What a representation names: the object of its global id when the id is one of the type the
 * representation says, and that type is an entity; nothing otherwise (a malformed id, another
 * type's id, a type that is no entity), which `_entities` answers with null as `nodes` would.
 */
function refOf(representation: unknown): NodeRef | null {
  if (!isObject(representation) || typeof representation.id !== "string" || !isEntityType(representation.__typename)) return null;
  const ref = parseGlobalId(representation.id);
  return ref?.type === representation.__typename ? ref : null;
}

export const GATEWAY_SUBGRAPH: SubgraphOptions<GraphQLContext> = {
  entities: ENTITY_TYPES,
  resolveEntities: (representations, ctx) => fetchNodes(ctx, representations, refOf, "representations"),
};
