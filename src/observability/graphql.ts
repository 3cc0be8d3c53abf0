import type { ApolloServerPlugin } from "@apollo/server";
import { graphqlOperationDuration, graphqlOperations } from "./metrics.ts";
import { tracing } from "./tracing.ts";

/**
 * Counts and times each GraphQL operation over HTTP by its operation type (`unknown` when the
 * document did not parse or validate into one), and traces it when tracing is on. The operation's
 * name is a client's choice: it is no label (CONTRACT §7.2 allows it only for the names of a
 * trusted-documents manifest, which this server does not have).
 */
export const useOperationMetrics: ApolloServerPlugin = {
  async requestDidStart() {
    const started = process.hrtime.bigint();
    const span = tracing.startGraphQL();
    return {
      async willSendResponse({ operation, operationName, errors }) {
        const operationType = operation?.operation ?? "unknown";
        graphqlOperations.inc({ operation_type: operationType });
        graphqlOperationDuration.observe({ operation_type: operationType }, Number(process.hrtime.bigint() - started) / 1e9);
        span?.end(operationType, operationName ?? undefined, Boolean(errors?.length));
      },
    };
  },
};
