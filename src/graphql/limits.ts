import type { ApolloServerPlugin } from "@apollo/server";
import { GraphQLError, separateOperations, type DocumentNode, type GraphQLSchema } from "graphql";
import depthLimit from "graphql-depth-limit";
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from "graphql-query-complexity";

/** Query depth and cost limits, shared by HTTP (Apollo) and WebSocket (graphql-ws). */

export function depthRule(maxDepth: number) {
  return depthLimit(maxDepth);
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
