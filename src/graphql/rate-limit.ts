import { Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode, type ValueNode } from "graphql";
import type { Principal } from "../auth/principal.ts";
import { parseGlobalId } from "./node.ts";
import { isObject } from "../util/json.ts";

/**
 * GraphQL's side of the rate limit: the domains an operation names (every `domain:` argument of the
 * operation that will run, literal or variable, fragments included) and those it reads through
 * global ids (`node(id)`, `nodes(ids)`, a federation subgraph's `_entities(representations)`) are
 * the budgets it draws on; an operation naming none draws on the user's own budget. The admission pipeline (src/admission) charges them: GraphQL over HTTP
 * after reading the body, WebSocket at each subscribe message.
 */

/** What an operation names: `domain:` arguments, and the domains of the global ids it reads. */
export interface Named {
  domains: Set<string>;
  read: Set<string>;
  /** global ids past MAX_IDS_READ were not decoded: the user's own budget stands for them */
  unread: boolean;
}

/** Global ids decoded per operation; `nodes` takes at most 1000 ids, a few aliases of it more. */
const MAX_IDS_READ = 5000;

/**
 * The global-id arguments of Query.node and Query.nodes, and the representations of a federation
 * subgraph's Query._entities (objects, each with its global `id`).
 */
const ID_ARGUMENTS: Record<string, string> = { node: "id", nodes: "ids", _entities: "representations" };

/** What the operation that will run names (undefined when none, or which one is ambiguous). */
export function namedBy(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): Named | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation) return undefined;
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  const defaults = new Map(operation.variableDefinitions?.map((v) => [v.variable.name.value, v.defaultValue]) ?? []);
  const literalValue = (node: ValueNode): unknown => {
    if (node.kind === Kind.STRING) return node.value;
    if (node.kind === Kind.LIST) return node.values.map(literalValue);
    if (node.kind === Kind.OBJECT) return Object.fromEntries(node.fields.map((field) => [field.name.value, literalValue(field.value)]));
    if (node.kind !== Kind.VARIABLE) return undefined;
    const name = node.name.value;
    if (variables && name in variables) return variables[name];
    const fallback = defaults.get(name);
    return fallback ? literalValue(fallback) : undefined;
  };

  const named: Named = { domains: new Set(), read: new Set(), unread: false };
  let idsRead = 0;
  const readIds = (value: unknown) => {
    for (const item of Array.isArray(value) ? value : [value]) {
      const id = isObject(item) ? item.id : item;
      if (typeof id !== "string") continue;
      if (idsRead++ >= MAX_IDS_READ) {
        named.unread = true;
        return;
      }
      const domain = parseGlobalId(id)?.domain;
      if (domain) named.read.add(domain);
    }
  };
  const seenFragments = new Set<string>();
  // an explicit stack: the document is the client's, and may be nested as deep as the parser allows
  const stack: SelectionSetNode[] = [operation.selectionSet];
  while (stack.length) {
    for (const selection of stack.pop()!.selections) {
      if (selection.kind === Kind.FIELD) {
        const idArgument = ID_ARGUMENTS[selection.name.value];
        for (const argument of selection.arguments ?? []) {
          if (argument.name.value === "domain") {
            const value = literalValue(argument.value);
            if (typeof value === "string") named.domains.add(value);
          } else if (argument.name.value === idArgument) {
            readIds(literalValue(argument.value));
          }
        }
        if (selection.selectionSet) stack.push(selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        stack.push(selection.selectionSet);
      } else if (!seenFragments.has(selection.name.value)) {
        seenFragments.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) stack.push(fragment.selectionSet);
      }
    }
  }
  return named;
}

/** The domains an operation names in `domain:` arguments; [undefined] (the user's own budget) when none. */
export function operationDomains(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): (string | undefined)[] {
  return namedDomains(namedBy(document, operationName, variables));
}

/** The `domain:` arguments of what `namedBy` found; [undefined] when none. */
export function namedDomains(named: Named | undefined): (string | undefined)[] {
  return named?.domains.size ? [...named.domains] : [undefined];
}

/**
 * The budgets an operation is charged in (security review 2026-11-26, G6): each domain it names or
 * reads through a global id where the caller is a member (`member`); a domain the caller is not in
 * (a made-up name in a nullable field) reads nothing, and draws on the user's own budget instead, as
 * does an operation that names none. A request therefore cannot move off the budgets of the domains
 * whose data it reads.
 */
export function chargedDomains(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  member: (domain: string) => boolean,
): (string | undefined)[] {
  return chargedIn(namedBy(document, operationName, variables), member);
}

/** The budgets of what `namedBy` found: see chargedDomains. */
export function chargedIn(named: Named | undefined, member: (domain: string) => boolean): (string | undefined)[] {
  if (!named) return [undefined];
  const charged = new Set([...named.domains, ...named.read].map((domain) => (member(domain) ? domain : undefined)));
  if (named.unread || !charged.size) charged.add(undefined);
  return [...charged];
}

/**
 * Whether the caller is a member of a domain, as `grants` (the request's memberships, or a
 * WebSocket's last re-checked grants) say; a superuser is in all, and without grants every name
 * counts as its own budget.
 */
export function memberOf(
  principal: Pick<Principal, "isSuperuser">,
  grants: { has(domain: string): boolean } | undefined,
): (domain: string) => boolean {
  return (domain) => principal.isSuperuser || !grants || grants.has(domain);
}

function jsonObject(raw: unknown): Record<string, unknown> | undefined {
  if (isObject(raw)) return raw;
  if (typeof raw !== "string") return undefined;
  try {
    return jsonObject(JSON.parse(raw));
  } catch {
    return undefined;
  }
}

/**
 * The budgets of an HTTP GraphQL request (POST body, multipart operations, or GET parameters), its
 * document read by `parse` (the endpoint's, under its limits): see chargedDomains.
 */
export function requestDomains(
  body: unknown,
  query: unknown,
  parse: (query: string) => DocumentNode,
  member: (domain: string) => boolean,
): (string | undefined)[] {
  const params = jsonObject(body) ?? jsonObject(query);
  if (!params || typeof params.query !== "string") return [undefined];
  let document: DocumentNode;
  try {
    document = parse(params.query);
  } catch {
    return [undefined]; // Apollo answers the syntax error; the request still counts
  }
  const operationName = typeof params.operationName === "string" ? params.operationName : undefined;
  return chargedDomains(document, operationName, jsonObject(params.variables), member);
}
