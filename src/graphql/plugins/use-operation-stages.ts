import type { ApolloServerPlugin } from "@apollo/server";
import { GraphQLError, getVariableValues } from "graphql";
import type { OperationPipeline } from "../operation-pipeline.ts";

/**
 * The operation stages of the pipeline (operation-pipeline.ts: cost, and any stage added there)
 * over HTTP, once Apollo has picked the operation: the first refusal is the answer (400), before
 * execution. WebSocket runs the same stages in the pipeline's `admit`.
 */
export function useOperationStages(pipeline: OperationPipeline): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, schema, operation }) {
          // no operation to run: Apollo answers OPERATION_RESOLUTION_FAILURE (400) itself
          if (!operation) return;
          // variables that do not coerce: execution refuses them itself, BAD_USER_INPUT (400), and runs nothing
          const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {}, { maxErrors: 50 });
          if (coerced.errors) return;
          const refused = pipeline.checkOperation({ schema, document, operation, variables: request.variables });
          if (refused) throw withStatus(refused.errors[0], refused.status);
        },
      };
    },
  };
}

/** Apollo answers an error thrown here with its `extensions.http` status (500 without one). */
function withStatus(error: GraphQLError, status: number): GraphQLError {
  if (error.extensions.http) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    originalError: error.originalError,
    extensions: { ...error.extensions, http: { status } },
  });
}
