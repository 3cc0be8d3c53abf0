import type { ApolloServerPlugin } from "@apollo/server";
import { GraphQLError, OperationTypeNode } from "graphql";

/**
 * Over HTTP Apollo would run a subscription as a query of its event stream and fail inside
 * (INTERNAL_SERVER_ERROR): refuse it before execution, pointing at the transport that serves it.
 */
export const useSubscriptionsOverWebSocket: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation }) {
        if (operation?.operation !== OperationTypeNode.SUBSCRIPTION) return;
        throw new GraphQLError("Subscriptions are served over WebSocket (graphql-transport-ws) on /graphql.", {
          extensions: { code: "BAD_REQUEST", http: { status: 400 } },
        });
      },
    };
  },
};
