import type { ApolloServerOptionsWithGateway } from "@apollo/server";
import { GraphQLError, execute, getVariableValues, type ExecutionResult, type GraphQLSchema } from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import { LRUCache } from "lru-cache";

/**
 * Queries and mutations over HTTP run as code compiled once per document and operation
 * (graphql-jit), not through graphql-js's interpreter, which builds a resolve-info, an argument map
 * and a path for every field of every node: on a 5,000-case page that interpretation was most of
 * the GraphQL pull's cost over REST's. The answers are the same, byte for byte
 * (test/graphql/compiled-execution.test.ts).
 *
 * Apollo Server takes another executor only through its gateway interface: `load()` hands Apollo the
 * schema and the executor. Apollo still parses, validates, runs every plugin (cost, budget, metrics)
 * and formats errors; only execution is replaced. Subscriptions (WebSocket, graphql-ws) keep graphql-js.
 */

type Gateway = ApolloServerOptionsWithGateway<never>["gateway"];
type Executor = NonNullable<Awaited<ReturnType<Gateway["load"]>>["executor"]>;

/** Compiled operations kept per process: documents are few (an app's operations), and bounded by the APQ/manifest caches upstream. */
const COMPILED_OPERATIONS = 500;

export function compiledExecution(schema: GraphQLSchema): Gateway {
  const compiled = new LRUCache<string, CompiledQuery | ExecutionResult>({ max: COMPILED_OPERATIONS });
  const executor: Executor = async ({ document, operation, queryHash, request, context }) => {
    const { operationName } = request;
    // no such operation in the document: graphql-js answers it as Apollo expects (OPERATION_RESOLUTION_FAILURE)
    if (!operation) return execute({ schema, document, operationName, variableValues: request.variables, contextValue: context });
    // graphql-js coerces the variables first: its messages are the ones clients are answered with
    // (graphql-jit words them its own way); the compiled query then coerces the same raw values.
    const variables = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {}, { maxErrors: 50 });
    if (variables.errors) return { errors: variables.errors };
    const key = `${queryHash}\u0000${operationName ?? ""}`;
    let query = compiled.get(key);
    if (!query) {
      query = compileQuery(schema, document, operationName);
      compiled.set(key, query);
    }
    if (!isCompiledQuery(query)) return query;
    const result = (await query.query(undefined, context, request.variables ?? {})) as ExecutionResult;
    return result.errors ? { ...result, errors: result.errors.map(asGraphQLError) } : result;
  };
  return {
    async load() {
      return { executor };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: "" });
      return () => {};
    },
    async stop() {},
  };
}

/**
 * graphql-jit's errors inherit GraphQLError's prototype without its constructor: no `extensions`
 * object unless the thrown error had one, which Apollo's error formatting reads. The same error as
 * graphql-js would have located: message, locations, path, the thrown error and its extensions.
 */
function asGraphQLError(error: GraphQLError): GraphQLError {
  const located = new GraphQLError(error.message, { path: error.path, originalError: error.originalError, extensions: error.extensions });
  return Object.assign(located, { locations: error.locations });
}
