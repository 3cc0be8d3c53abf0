import { Field, ID, InterfaceType } from "type-graphql";
import { isUuid } from "../util/ids.ts";

/**
 * Global object identification (CONTRACT §7.3, the Relay spec): every object a client may cache or
 * refetch implements `Node`, and its `id` is an opaque global id that `Query.node` turns back into
 * the object. The plain keys (`caseId`, `locationId`, `appId`, …) stay beside it.
 */

/**
 * The types that implement `Node`, by name; the first part of every global id. Each feature adds
 * its own from its `*.graphql.ts` (`declare module "../graphql/node.ts"`), so that the kit lists none.
 * @public (extended by declaration merging, which knip does not follow)
 */
// biome-ignore lint/suspicious/noEmptyInterface: empty here by design; each feature declares its members into it
export interface NodeTypes {}

export type NodeTypeName = keyof NodeTypes & string;

/**
 * The names global ids may carry: those the gateway has a fetcher for, registered as it assembles
 * the features (src/gateway/features.ts, loaded by the server before it listens). An id of any
 * other type names nothing, in `Query.node` and in the rate limit's reading of ids alike.
 */
const registeredTypes = new Set<string>();

export function registerNodeTypes(names: Iterable<NodeTypeName>): void {
  for (const name of names) registeredTypes.add(name);
}

/** What a global id names: the type, the domain the object lives in ("" for users and domains) and its key in that domain. */
export interface NodeRef {
  type: NodeTypeName;
  domain: string;
  key: string;
}

/** The value `Query.node` returns: the object as its type's resolvers read it, marked with its type. */
export type NodeValue = object & { __typename: NodeTypeName };

/** A node's concrete type: the mark `Query.node` put on it. */
export const nodeTypeOf = (value: NodeValue): NodeTypeName => value.__typename;

@InterfaceType("Node", {
  description: "An object with a global id: `Query.node(id)` fetches it again, and client caches normalise by it.",
  resolveType: nodeTypeOf,
})
export abstract class NodeInterface {
  @Field(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id!: string;
}

/** The global id of an object: opaque to clients (base64url), stable for the object's life. */
export function globalId(type: NodeTypeName, domain: string, key: string): string {
  return Buffer.from(JSON.stringify([type, domain, key])).toString("base64url");
}

const isNodeType = (value: unknown): value is NodeTypeName => typeof value === "string" && registeredTypes.has(value);

/** What a global id names, or null for anything that is not one (an unknown id, not an error). */
export function parseGlobalId(id: string): NodeRef | null {
  if (!/^[A-Za-z0-9_-]{1,2800}$/.test(id)) return null;
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(id, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((p) => typeof p === "string")) return null;
  const [type, domain, key] = parts as string[];
  if (!isNodeType(type)) return null;
  // one encoding per object: an id that decodes but was not written by globalId() names nothing
  if (globalId(type, domain!, key!) !== id) return null;
  // Every UUID key is written in lower case (as PostgreSQL prints a uuid), but a uuid column
  // matches any case: an upper-case spelling would name the same object under a second id (#24 G8).
  if (isUuid(key!) && key !== key!.toLowerCase()) return null;
  return { type, domain: domain!, key: key! };
}

/**
 * How a feature fetches its objects for `Query.node`: the object as that type's resolvers read it,
 * or null where there is none for the caller. A refusal (403/404) may also be thrown: `node`
 * answers null for both, so that a client cannot tell "not there" from "not yours".
 */
export type NodeFetcher<Context> = (ctx: Context, ref: NodeRef) => Promise<object | null>;
