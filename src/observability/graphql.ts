import type { ApolloServerPlugin } from "@apollo/server";
import { graphqlOperationDuration, graphqlOperations } from "./metrics.ts";
import { tracing } from "./tracing.ts";

/**
 * Counts and times each GraphQL operation over HTTP by its operation type (`unknown` when the
 * document did not parse or validate into one), and traces it when tracing is on. An operation's
 * name is a client's choice, so it is a label only when it is one of `trustedNames`, the names of
 * the trusted-documents manifest (a bounded set, CONTRACT §7.2).
 */
export function useOperationMetrics(trustedNames: ReadonlySet<string> = new Set()): ApolloServerPlugin {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      const span = tracing.startGraphQL();
      return {
        async willSendResponse({ operation, operationName, errors }) {
          const labels: { operation_type: string; operation_name?: string } = { operation_type: operation?.operation ?? "unknown" };
          if (operationName && trustedNames.has(operationName)) labels.operation_name = operationName;
          graphqlOperations.inc(labels);
          graphqlOperationDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
          span?.end(labels.operation_type, operationName ?? undefined, Boolean(errors?.length));
        },
      };
    },
  };
}
