import type { ApolloServerPlugin } from "@apollo/server";
import { GraphQLError, separateOperations, type DocumentNode, type GraphQLSchema, type ValidationRule } from "graphql";
import depthLimit from "graphql-depth-limit";
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from "graphql-query-complexity";
import { unwrapResolverError } from "@apollo/server/errors";
import { DomainError } from "../errors.ts";

/** Query depth, alias and cost limits, shared by HTTP (Apollo) and WebSocket (graphql-ws). */

export function depthRule(maxDepth: number) {
  return depthLimit(maxDepth);
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

/** The validation rules every operation meets on top of graphql-js's own. */
export function limitRules(limits: { graphqlMaxDepth: number; graphqlMaxAliases: number }): ValidationRule[] {
  return [depthRule(limits.graphqlMaxDepth), aliasRule(limits.graphqlMaxAliases)];
}

export function queryCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | undefined,
): number {
  const operations = separateOperations(document);
  const names = Object.keys(operations);
  const query = operationName && operations[operationName] ? operations[operationName] : names.length === 1 ? operations[names[0]] : document;
  return getComplexity({
    schema,
    query,
    operationName: operationName ?? undefined,
    variables: variables ?? {},
    estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
  });
}

export function costError(cost: number, maxCost: number): GraphQLError {
  return new GraphQLError(`Query is too expensive: cost ${cost} exceeds the limit of ${maxCost}.`, {
    extensions: { code: "QUERY_TOO_COMPLEX", http: { status: 400 } },
  });
}

export function costLimitPlugin(maxCost: number): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, schema }) {
          const cost = queryCost(schema, document, request.operationName, request.variables);
          if (cost > maxCost) throw costError(cost, maxCost);
        },
      };
    },
  };
}

/**
 * graphql-upload refuses what is over its limits with an http-errors error (`expose`, a 4xx status):
 * a file over UPLOAD_LIMIT_BYTES (413, surfacing in the resolver that reads it), too many files or
 * an oversize `operations` field (413), a missing part (400). Those are the client's, not bugs: they
 * become domain errors (PAYLOAD_TOO_LARGE or BAD_USER_INPUT) with the library's message. Errors that
 * body-parser names by `type` are left to the REST error mapping.
 */
export function uploadClientError(error: unknown): DomainError | undefined {
  const original = unwrapResolverError(error) as { status?: unknown; expose?: unknown; type?: unknown; message?: unknown } | undefined;
  if (!original || typeof original !== "object" || original instanceof DomainError || original.type !== undefined) return undefined;
  const status = original.status;
  if (original.expose !== true || typeof status !== "number" || status < 400 || status >= 500 || status === 499) return undefined;
  const message = typeof original.message === "string" ? original.message : "Bad request.";
  return new DomainError(status === 413 ? "PAYLOAD_TOO_LARGE" : "BAD_USER_INPUT", message);
}

/**
 * A GraphQL response whose only errors are PAYLOAD_TOO_LARGE and that has no data goes out as HTTP
 * 413, as REST does for an upload over the limit.
 */
export const payloadTooLargePlugin: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        if (response.body.kind !== "single") return;
        const { errors, data } = response.body.singleResult;
        if (!errors?.length || (data && Object.values(data).some((v) => v !== null))) return;
        if (errors.every((e) => e.extensions?.code === "PAYLOAD_TOO_LARGE")) response.http.status = 413;
      },
    };
  },
};
