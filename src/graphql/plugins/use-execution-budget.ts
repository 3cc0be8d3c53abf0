import type { ApolloServerPlugin } from "@apollo/server";
import { abortedResult } from "../budget.ts";
import type { GraphQLContext } from "../context.ts";

/**
 * The execution budget over HTTP: a query whose budget ran out (budget.ts) answers its one error
 * (RESULT_TOO_LARGE or QUERY_TIMEOUT) and no partial data; a mutation keeps its data. WebSocket does the same in its
 * onNext step (ws.ts).
 */
export const useExecutionBudget: ApolloServerPlugin<GraphQLContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ contextValue, response, operation }) {
        const aborted = abortedResult(contextValue.budget, operation?.operation);
        if (aborted && response.body.kind === "single") response.body.singleResult = aborted;
      },
    };
  },
};
