import { getOrCreate } from "../util/maps.ts";
import type { ApolloServerOptionsWithGateway } from "@apollo/server";
import {
  GraphQLError,
  execute,
  getOperationAST,
  getVariableValues,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import { LRUCache } from "lru-cache";

/**
 * The one executor of both transports: operations run as code compiled once per document and
 * operation (graphql-jit), not through graphql-js's interpreter, which builds a resolve-info, an
 * argument map and a path for every field of every node: on a 5,000-case page that interpretation
 * was most of the GraphQL pull's cost over REST's. Queries and mutations over HTTP (Apollo) and
 * over WebSocket, and each event of a subscription (its selection run on the event as root value,
 * subscription-events.ts), all run here. The answers are graphql-js's, byte for byte
 * (test/graphql/compiled-execution.test.ts).
 *
 * Apollo Server takes another executor only through its gateway interface: `load()` hands Apollo the
 * schema and the executor. Apollo still parses, validates, runs every plugin (stages, budget,
 * metrics) and formats errors; only execution is replaced. A subscription's event stream is still
 * graphql-js's (createSourceEventStream): only what runs per event is compiled.
 */

type Gateway = ApolloServerOptionsWithGateway<never>["gateway"];
type Executor = NonNullable<Awaited<ReturnType<Gateway["load"]>>["executor"]>;

/** Compiled operations kept per process: documents are few (an app's operations), and bounded by the APQ/manifest caches upstream. */
const COMPILED_OPERATIONS = 500;

type Compiled = CompiledQuery | ExecutionResult;

export class CompiledExecution {
  /** Apollo's documents, by its hash of their text */
  private readonly byHash = new LRUCache<string, Compiled>({ max: COMPILED_OPERATIONS });
  /** WebSocket's documents, one object per text while the pipeline caches it (operation-pipeline.ts) */
  private readonly byDocument = new WeakMap<DocumentNode, Map<string, Compiled>>();

  constructor(private readonly schema: GraphQLSchema) {}

  /**
   * graphql-js's `execute`, compiled: `args.rootValue` is a subscription event's payload when the
   * operation is a subscription. Compiled once per document object and operation name.
   */
  readonly execute = async (args: ExecutionArgs): Promise<ExecutionResult> => {
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation) return execute(args);
    return this.run(operation, args, () => this.compiledOf(args.document, args.operationName));
  };

  /** Apollo's gateway: hands Apollo the schema and this executor. */
  gateway(): Gateway {
    const executor: Executor = async ({ document, operation, queryHash, request, context }) => {
      const args = { schema: this.schema, document, operationName: request.operationName, variableValues: request.variables, contextValue: context };
      // no such operation in the document: graphql-js answers it as Apollo expects (OPERATION_RESOLUTION_FAILURE)
      if (!operation) return execute(args);
      const key = `${queryHash}\u0000${request.operationName ?? ""}`;
      return this.run(operation, args, () =>
        getOrCreate<string, Compiled>(this.byHash, key, () => compileQuery(this.schema, document, request.operationName)),
      );
    };
    const schema = this.schema;
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

  private async run(operation: OperationDefinitionNode, args: ExecutionArgs, compiled: () => Compiled): Promise<ExecutionResult> {
    // graphql-js coerces the variables first: its messages are the ones clients are answered with
    // (graphql-jit words them its own way); the compiled query then coerces the same raw values.
    const variables = getVariableValues(this.schema, operation.variableDefinitions ?? [], args.variableValues ?? {}, { maxErrors: 50 });
    if (variables.errors) return { errors: variables.errors };
    const query = compiled();
    if (!isCompiledQuery(query)) return query;
    const result = (await query.query(args.rootValue, args.contextValue, args.variableValues ?? {})) as ExecutionResult;
    // graphql-js's shape and key order (errors, then data): WebSocket sends the result as it is
    return result.errors ? { errors: result.errors.map(asGraphQLError), data: result.data } : { data: result.data };
  }

  private compiledOf(document: DocumentNode, operationName: string | null | undefined): Compiled {
    const ofDocument = getOrCreate(this.byDocument, document, () => new Map<string, Compiled>());
    return getOrCreate(ofDocument, operationName ?? "", () => compileQuery(this.schema, document, operationName ?? undefined));
  }
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
