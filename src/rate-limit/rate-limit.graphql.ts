import { Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode, type ValueNode } from "graphql";
import { isObject } from "../util/json.ts";

/**
 * GraphQL's side of the rate limit: the domains an operation names (every `domain:` argument of the
 * operation that will run, literal or variable, fragments included) are the budgets it draws on; an
 * operation naming none draws on the user's own budget. The admission pipeline (src/admission)
 * charges them: GraphQL over HTTP after reading the body, WebSocket at each subscribe message.
 */
export function operationDomains(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): (string | undefined)[] {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation) return [undefined];
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  const defaults = new Map(operation.variableDefinitions?.map((v) => [v.variable.name.value, v.defaultValue]) ?? []);
  const valueOf = (node: ValueNode): unknown => {
    if (node.kind === Kind.STRING) return node.value;
    if (node.kind !== Kind.VARIABLE) return undefined;
    const name = node.name.value;
    if (variables && name in variables) return variables[name];
    const fallback = defaults.get(name);
    return fallback?.kind === Kind.STRING ? fallback.value : undefined;
  };

  const domains = new Set<string>();
  const seenFragments = new Set<string>();
  // an explicit stack: the document is the client's, and may be nested as deep as the parser allows
  const stack: SelectionSetNode[] = [operation.selectionSet];
  while (stack.length) {
    for (const selection of stack.pop()!.selections) {
      if (selection.kind === Kind.FIELD) {
        for (const argument of selection.arguments ?? []) {
          if (argument.name.value !== "domain") continue;
          const value = valueOf(argument.value);
          if (typeof value === "string") domains.add(value);
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
  return domains.size ? [...domains] : [undefined];
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
 * The domains of an HTTP GraphQL request (POST body, multipart operations, or GET parameters), its
 * document read by `parse` (the endpoint's, under its limits).
 */
export function requestDomains(body: unknown, query: unknown, parse: (query: string) => DocumentNode): (string | undefined)[] {
  const params = jsonObject(body) ?? jsonObject(query);
  if (!params || typeof params.query !== "string") return [undefined];
  let document: DocumentNode;
  try {
    document = parse(params.query);
  } catch {
    return [undefined]; // Apollo answers the syntax error; the request still counts
  }
  const operationName = typeof params.operationName === "string" ? params.operationName : undefined;
  return operationDomains(document, operationName, jsonObject(params.variables));
}
