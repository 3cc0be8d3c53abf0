import { getOrCreate } from "../util/maps.ts";
import {
  GraphQLError,
  getVariableValues,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from "graphql";
import { LRUCache } from "lru-cache";
import type { Config } from "../config.ts";
import { withCode } from "./errors.ts";
import { aliasRule, costError, depthRule, directivesRule, documentNestingError, operationToRun, parseDocument, queryCost } from "./limits.ts";
import { untrustedDocumentError, type TrustedDocuments } from "./trusted-documents.ts";

/**
 * The admission of one GraphQL operation, written once for both transports: a list of named
 * stages (operationStages), each reading what is known at its point — the text, the parsed
 * document, the operation picked with its variables. A limit added to the list is met over HTTP
 * and over WebSocket alike.
 *
 * WebSocket runs the whole list through `admit` (its subscribe step): text, parse (cached), the
 * transport's rate limit, validation, the operation and its variables, then the operation stages.
 * HTTP runs the same stages at the same points of Apollo's request: the text stages before Apollo
 * (httpFace: a refusal's status and body as before), the document stages as Apollo's validation
 * rules, the operation stages as one plugin; Apollo keeps parsing, validating, resolving the
 * operation and persisted queries, with the parse options and rules given here.
 */

/** A refusal of a stage: the errors an operation is answered with, and HTTP's status for them. */
export interface Refusal {
  stage: string;
  /** the HTTP status of a refusal before Apollo (WebSocket sends the errors alone) */
  status: number;
  errors: readonly GraphQLError[];
}

/** A stage on the document's text, before it is parsed: a refusal is the whole answer. */
export interface TextStage {
  name: string;
  on: "text";
  /** the HTTP status of its refusal */
  status: number;
  check(query: string): GraphQLError | undefined;
}

/** A stage on the parsed document: a validation rule, run with graphql-js's own. */
export interface DocumentStage {
  name: string;
  on: "document";
  rule: ValidationRule;
}

/** What an operation stage reads: the operation that will run, with variables that coerce. */
export interface ResolvedOperation {
  schema: GraphQLSchema;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: Record<string, unknown> | null | undefined;
}

/** A stage on the operation picked to run, once its variables coerce, before execution. */
export interface OperationStage {
  name: string;
  on: "operation";
  check(operation: ResolvedOperation): GraphQLError | undefined;
}

export type Stage = TextStage | DocumentStage | OperationStage;

export type PipelineLimits = Pick<Config, "graphqlMaxCost" | "graphqlMaxDepth" | "graphqlMaxAliases" | "graphqlMaxDirectives" | "graphqlMaxTokens">;

/**
 * The one list, in order. Trusted documents (PERSISTED_OPERATIONS=only) and the nesting bound read
 * the text; depth, aliases and directives validate the document; cost prices the operation.
 * @public (a test extends this list to show that one stage covers both transports)
 */
export function operationStages(limits: PipelineLimits, trustedDocuments?: TrustedDocuments): Stage[] {
  const stages: Stage[] = [];
  if (trustedDocuments) {
    stages.push({
      name: "trusted document",
      on: "text",
      status: 403,
      check: (query) => (trustedDocuments.has(query) ? undefined : untrustedDocumentError()),
    });
  }
  stages.push(
    {
      name: "nesting",
      on: "text",
      status: 400,
      // graphql-js's recursive parser is not trusted with it: a syntax error, as the parser's own
      check: (query) => {
        const tooDeep = documentNestingError(query, limits);
        return tooDeep && withCode([tooDeep], "GRAPHQL_PARSE_FAILED")[0];
      },
    },
    { name: "depth", on: "document", rule: depthRule(limits.graphqlMaxDepth) },
    { name: "aliases", on: "document", rule: aliasRule(limits.graphqlMaxAliases) },
    { name: "directives", on: "document", rule: directivesRule(limits.graphqlMaxDirectives) },
    { name: "cost", on: "operation", check: costCheck(limits.graphqlMaxCost) },
  );
  return stages;
}

/** An operation estimated over `maxCost` is refused (QUERY_TOO_COMPLEX) before it runs. */
function costCheck(maxCost: number): OperationStage["check"] {
  return ({ schema, document, operation, variables }) => {
    const cost = queryCost(schema, document, operation, variables);
    // variables that do not coerce: refused by the step that coerces them, before this one
    if (typeof cost !== "number") return undefined;
    return cost > maxCost ? costError(cost, maxCost) : undefined;
  };
}

/** An operation admitted: the document (one object per text while cached) to execute. */
export interface PreparedOperation {
  document: DocumentNode;
  operation: OperationDefinitionNode;
}

export interface AdmitRequest {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  /** the transport's rate limit, charged once the document is parsed: its refusal, if any */
  charge?: (document: DocumentNode) => Promise<readonly GraphQLError[] | undefined>;
}

/** A document as parsed and validated once for every request that sends its text. */
interface CheckedDocument {
  document: DocumentNode;
  errors: readonly GraphQLError[];
}

/** How many characters of document text the parsed documents' cache holds. */
const DOCUMENT_CACHE_CHARS = 128 * 1024;

export class OperationPipeline {
  readonly textStages: readonly TextStage[];
  readonly documentStages: readonly DocumentStage[];
  readonly operationStages: readonly OperationStage[];
  private readonly rules: readonly ValidationRule[];
  private readonly documents: LRUCache<string, CheckedDocument>;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly limits: PipelineLimits,
    stages: readonly Stage[],
  ) {
    this.textStages = stages.filter((s): s is TextStage => s.on === "text");
    this.documentStages = stages.filter((s): s is DocumentStage => s.on === "document");
    this.operationStages = stages.filter((s): s is OperationStage => s.on === "operation");
    this.rules = [...specifiedRules, ...this.validationRules];
    // a syntax tree keeps its tokens and locations: up to ~240 times its text (20,000 one-letter
    // fields: 40 KB of text, 9.4 MB of tree), so 128 K characters of text stay within ~30 MB.
    // One tree per text also lets subscription events share one execution (subscription-events.ts).
    this.documents = new LRUCache({ maxSize: DOCUMENT_CACHE_CHARS, sizeCalculation: (_, query) => query.length || 1 });
  }

  /** The validation rules of the document stages, on top of graphql-js's own (Apollo's validationRules). */
  get validationRules(): ValidationRule[] {
    return this.documentStages.map((s) => s.rule);
  }

  /** graphql-js's parse options: the token limit (GRAPHQL_MAX_TOKENS) as the document is read. */
  get parseOptions(): { maxTokens: number } {
    return { maxTokens: this.limits.graphqlMaxTokens };
  }

  /** The first text stage that refuses `query`. */
  checkText(query: string): Refusal | undefined {
    for (const stage of this.textStages) {
      const error = stage.check(query);
      if (error) return { stage: stage.name, status: stage.status, errors: [error] };
    }
    return undefined;
  }

  /** The first operation stage that refuses the operation. */
  checkOperation(resolved: ResolvedOperation): Refusal | undefined {
    for (const stage of this.operationStages) {
      const error = stage.check(resolved);
      if (error) return { stage: stage.name, status: 400, errors: [error] };
    }
    return undefined;
  }

  /**
   * Every stage in order, and the steps between them: the operation to run, or the refusal to
   * answer with (each error with its code).
   */
  async admit(request: AdmitRequest): Promise<PreparedOperation | Refusal> {
    const refusedText = this.checkText(request.query);
    if (refusedText) return refusedText;
    let checked: CheckedDocument;
    try {
      checked = this.parsed(request.query);
    } catch (error) {
      return { stage: "parse", status: 400, errors: withCode([error as GraphQLError], "GRAPHQL_PARSE_FAILED") };
    }
    const { document } = checked;
    const limited = await request.charge?.(document);
    if (limited) return { stage: "rate limit", status: 429, errors: limited };
    if (checked.errors.length) return { stage: "validate", status: 400, errors: withCode(checked.errors, "GRAPHQL_VALIDATION_FAILED") };
    const operation = operationToRun(document, request.operationName);
    if (operation instanceof GraphQLError) return { stage: "operation", status: 400, errors: [operation] };
    // as execution coerces them, with its limit of 50 errors
    const coerced = getVariableValues(this.schema, operation.variableDefinitions ?? [], request.variables ?? {}, { maxErrors: 50 });
    if (coerced.errors) return { stage: "variables", status: 400, errors: withCode(coerced.errors, "BAD_USER_INPUT") };
    return this.checkOperation({ schema: this.schema, document, operation, variables: request.variables }) ?? { document, operation };
  }

  /**
   * The document of a text, parsed and validated once for every request that sends it: a wall of
   * dashboards sends one text thousands of times. Bounded by the texts' total length; a text
   * longer than the whole bound is parsed each time. A syntax error throws, and is not kept.
   */
  private parsed(query: string): CheckedDocument {
    return getOrCreate<string, CheckedDocument>(this.documents, query, () => {
      const document = parseDocument(query, this.limits);
      return { document, errors: validate(this.schema, document, this.rules) };
    });
  }
}

/** Whether `admit` refused the operation. */
export function isRefusal(admitted: PreparedOperation | Refusal): admitted is Refusal {
  return "errors" in admitted;
}

/** The pipeline of an endpoint: the one list of stages over `schema`. */
export function operationPipeline(schema: GraphQLSchema, limits: PipelineLimits, trustedDocuments?: TrustedDocuments): OperationPipeline {
  return new OperationPipeline(schema, limits, operationStages(limits, trustedDocuments));
}
