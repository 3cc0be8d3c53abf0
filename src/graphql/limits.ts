import {
  GraphQLError,
  Kind,
  Lexer,
  Source,
  TokenKind,
  parse,
  syntaxError,
  getOperationAST,
  getVariableValues,
  getNamedType,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type ValidationContext,
  type ValidationRule,
} from "graphql";
import { maxDirectivesRule } from "@escape.tech/graphql-armor-max-directives";
import { fieldExtensionsEstimator, getComplexity, simpleEstimator, type ComplexityEstimator } from "graphql-query-complexity";

/**
 * Query size, depth, alias, directive and cost limits: the checks the operation pipeline's stages
 * are made of (operation-pipeline.ts), which both transports run.
 *
 * Where a library does the job it does it: tokens are graphql-js's own parser limit (`maxTokens`,
 * counted as the one parse runs; graphql-armor's max-tokens plugin would parse a second time, and
 * Apollo takes no parser of its own), directives are graphql-armor's rule. Depth and aliases keep
 * the rules below: their messages are the contract's, and they are proven against fragment cycles
 * and blow-ups. The cost estimate multiplies by page sizes, which no library does (queryCost).
 */

/** The first selection of `operation` nested more than `maxDepth` fields below its root fields. */
function tooDeepSelection(operation: OperationDefinitionNode, context: ValidationContext, maxDepth: number): SelectionNode | undefined {
  // an explicit stack: the document may nest as deep as the parser allows
  const stack = [{ selections: operation.selectionSet.selections, depth: 0 }];
  // a fragment entered once at a depth has nothing new to show there: this ends cycles and blow-ups
  const entered = new Set<string>();
  while (stack.length) {
    const { selections, depth } = stack.pop()!;
    for (const selection of selections) {
      if (depth > maxDepth) return selection;
      if (selection.kind === Kind.FIELD) {
        // introspection fields are not the data's depth
        if (selection.selectionSet && !selection.name.value.startsWith("__")) {
          stack.push({ selections: selection.selectionSet.selections, depth: depth + 1 });
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        stack.push({ selections: selection.selectionSet.selections, depth });
      } else {
        const fragment = context.getFragment(selection.name.value);
        const key = `${depth} ${selection.name.value}`;
        if (!fragment || entered.has(key)) continue; // an unknown fragment is KnownFragmentNames' to report
        entered.add(key);
        stack.push({ selections: fragment.selectionSet.selections, depth });
      }
    }
  }
  return undefined;
}

/**
 * At most `maxDepth` levels of fields below an operation's root fields (introspection excepted).
 * Validation rules run side by side, so this one meets documents that other rules refuse: a
 * fragment that spreads itself (NoFragmentCycles), an unknown fragment (KnownFragmentNames). It must
 * neither loop nor throw on them.
 */
export function depthRule(maxDepth: number): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const node = tooDeepSelection(operation, context, maxDepth);
      if (!node) return;
      const name = operation.name?.value ?? "";
      context.reportError(new GraphQLError(`'${name}' exceeds maximum operation depth of ${maxDepth}`, { nodes: [node] }));
    },
  });
}

/**
 * At most `maxAliases` aliased fields in a document. Cost estimates price each field, but a cheap
 * field repeated under a thousand aliases is still a thousand resolver calls for one small request.
 */
export function aliasRule(maxAliases: number): ValidationRule {
  return (context) => {
    let aliases = 0;
    return {
      Field(node) {
        if (!node.alias || ++aliases !== maxAliases + 1) return;
        context.reportError(
          new GraphQLError(`Query has too many aliases: the limit is ${maxAliases}.`, {
            nodes: [node],
            extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
          }),
        );
      },
    };
  };
}

/**
 * At most `maxDirectives` directives in an operation, its fragments included (graphql-armor). Its
 * rule would throw out of validation; this reports its error as the others do.
 */
export function directivesRule(maxDirectives: number): ValidationRule {
  return (context) =>
    maxDirectivesRule({
      n: maxDirectives,
      propagateOnRejection: false,
      // armor words it as a syntax error; it is a validation failure like the other limits
      onReject: [
        (_context, error) =>
          context.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, ""), { extensions: { code: "GRAPHQL_VALIDATION_FAILED" } })),
      ],
    })(context);
}

/**
 * Selections, arguments, lists and objects nest at most this deep in a document. graphql-js's
 * parser recurses once per level and its only bound is the call stack: about 2,000 levels at the top
 * of an idle process, fewer inside a server, varying with the JIT, so a deep literal failed at random
 * with "Maximum call stack size exceeded". This bound sits far below that, and is the same every time.
 */
export const MAX_DOCUMENT_NESTING = 500;

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * A syntax error when `query` nests deeper than MAX_DOCUMENT_NESTING, found by the lexer alone (no
 * recursion) before the parser runs. What the lexer cannot read, or past the token limit, is left
 * to the parser to report as it always does.
 */
export function documentNestingError(query: string, limits: { graphqlMaxTokens: number }): GraphQLError | undefined {
  const source = new Source(query);
  const lexer = new Lexer(source);
  let depth = 0;
  try {
    for (
      let tokens = 0, token = lexer.advance();
      token.kind !== TokenKind.EOF && tokens < limits.graphqlMaxTokens;
      token = lexer.advance(), tokens++
    ) {
      if (CLOSING.has(token.kind)) depth--;
      else if (OPENING.has(token.kind) && ++depth > MAX_DOCUMENT_NESTING) {
        return syntaxError(source, token.start, `Document nested deeper than ${MAX_DOCUMENT_NESTING} levels.`);
      }
    }
  } catch {
    // the parser reports it
  }
  return undefined;
}

/** graphql-js's parse, under the nesting and token limits. */
export function parseDocument(query: string, limits: { graphqlMaxTokens: number }): DocumentNode {
  const tooDeep = documentNestingError(query, limits);
  if (tooDeep) throw tooDeep;
  return parse(query, { maxTokens: limits.graphqlMaxTokens });
}

/**
 * What a JSON field (a case's properties, a location's data, an app's source, a job's REST status)
 * costs where it is selected, instead of a plain scalar's 1: its value has no bound of its own, and
 * aliases or lists multiply it (security review G2). At 20, the largest page (5,000 cases) with
 * every case field still fits the default GRAPHQL_MAX_COST; ten aliases of a 2,000-case page of
 * properties do not. What the estimate admits is still counted byte by byte as it runs (budget.ts).
 */
const JSON_FIELD_COST = 20;

const JSON_TYPES = new Set(["JSON", "JSONObject"]);

const jsonFieldEstimator: ComplexityEstimator = ({ field, childComplexity }) =>
  JSON_TYPES.has(getNamedType(field.type).name) ? JSON_FIELD_COST + childComplexity : undefined;

/** graphql-query-complexity stops counting past this many selections (fragments spread each time). */
const MAX_QUERY_NODES = 10_000;
const NODE_LIMIT_MESSAGE = "Query exceeds the maximum allowed number of nodes.";

/**
 * The estimated cost of running `operation` with `variables`: Infinity past MAX_QUERY_NODES
 * selections. Or, when the variables do not coerce (missing, null where required, of the wrong
 * type), graphql-js's coercion errors: the operation will not run, and those errors are the
 * client's (graphql-query-complexity would throw them with no code, an internal error).
 */
export function queryCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
): number | readonly GraphQLError[] {
  // as execution coerces them, with its limit of 50 errors
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 50 });
  if (coerced.errors) return coerced.errors;
  // the library matches operations by name and fails on an anonymous one: give it only this one
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  const query: DocumentNode = { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] };
  try {
    return getComplexity({
      schema,
      query,
      variables: variables ?? {},
      maxQueryNodes: MAX_QUERY_NODES,
      estimators: [fieldExtensionsEstimator(), jsonFieldEstimator, simpleEstimator({ defaultComplexity: 1 })],
    });
  } catch (error) {
    // fragments spread in fragments multiply the selections of a small document
    if (error instanceof GraphQLError && error.message === NODE_LIMIT_MESSAGE) return Infinity;
    throw error;
  }
}

export function costError(cost: number, maxCost: number): GraphQLError {
  const reason = Number.isFinite(cost)
    ? `cost ${cost} exceeds the limit of ${maxCost}`
    : `it has more than ${MAX_QUERY_NODES} selections once its fragments are spread`;
  return new GraphQLError(`Query is too expensive: ${reason}.`, {
    extensions: { code: "QUERY_TOO_COMPLEX", http: { status: 400 } },
  });
}

/**
 * The operation graphql-js's execute would run, or the client's error when the request names none
 * (Apollo answers that over HTTP with OPERATION_RESOLUTION_FAILURE and the same messages).
 */
export function operationToRun(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | GraphQLError {
  const operation = getOperationAST(document, operationName);
  if (operation) return operation;
  const message =
    operationName != null ? `Unknown operation named "${operationName}".` : "Must provide operation name if query contains multiple operations.";
  return new GraphQLError(message, { extensions: { code: "OPERATION_RESOLUTION_FAILURE" } });
}
