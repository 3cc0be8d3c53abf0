import type { ApolloServerPlugin } from "@apollo/server";
import { costError, queryCost } from "../limits.ts";

/**
 * The query cost limit over HTTP, once Apollo has picked the operation: an operation estimated over
 * `maxCost` is refused (QUERY_TOO_COMPLEX, 400) before it runs. WebSocket applies the same check in
 * its subscribe step (ws.ts).
 */
export function useCostLimit(maxCost: number): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, schema, operation }) {
          // no operation to run: Apollo answers OPERATION_RESOLUTION_FAILURE (400) itself
          if (!operation) return;
          const cost = queryCost(schema, document, operation, request.variables);
          // variables that do not coerce: execution refuses them itself, BAD_USER_INPUT (400), and runs nothing
          if (typeof cost !== "number") return;
          if (cost > maxCost) throw costError(cost, maxCost);
        },
      };
    },
  };
}
