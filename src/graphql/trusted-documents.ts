import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { KeyValueCache } from "@apollo/utils.keyvaluecache";
import { GraphQLError, Kind, parse, type OperationDefinitionNode } from "graphql";
import { ConfigError } from "../config.ts";

/**
 * Trusted documents (PERSISTED_OPERATIONS=only, CONTRACT §7.3): only the documents of a manifest
 * run. The manifest (PERSISTED_OPERATIONS_MANIFEST) is JSON in one of two formats:
 *
 * - Apollo's persisted query manifest, as `generate-persisted-query-manifest` writes it:
 *   `{"format": "apollo-persisted-query-manifest", "version": 1, "operations": [{"id", "name", "type", "body"}]}`
 * - a map from id to document, as Relay, GraphQL Codegen and most tools write it: `{"<id>": "<document>"}`
 *
 * A document is found by its id and by the SHA-256 (hex) of its text, so a client may send the
 * `extensions.persistedQuery` hash alone (Apollo's protocol) or the document itself.
 */

export const UNTRUSTED_DOCUMENT = "Only trusted documents run on this server (PERSISTED_OPERATIONS=only): this document is not in its manifest.";

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export interface TrustedDocuments {
  /** the document of an id or SHA-256, if the manifest has it */
  find(hash: string): string | undefined;
  has(document: string): boolean;
  /** the names of the manifest's operations (bounded: safe as metric labels) */
  operationNames: ReadonlySet<string>;
}

interface ManifestEntry {
  id: string;
  body: string;
}

function entriesOf(json: unknown, file: string): ManifestEntry[] {
  const invalid = (why: string) => new ConfigError(`PERSISTED_OPERATIONS_MANIFEST ${file}: ${why}`);
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw invalid("must be a JSON object");
  const record = json as Record<string, unknown>;
  if (record.format === "apollo-persisted-query-manifest") {
    if (record.version !== 1 || !Array.isArray(record.operations)) throw invalid("an Apollo manifest needs version 1 and an operations list");
    return record.operations.map((operation: { id?: unknown; body?: unknown }, i) => {
      if (typeof operation?.id !== "string" || typeof operation.body !== "string") throw invalid(`operations[${i}] needs a string id and body`);
      return { id: operation.id, body: operation.body };
    });
  }
  return Object.entries(record).map(([id, body]) => {
    if (typeof body !== "string") throw invalid(`the document of '${id}' must be a string`);
    return { id, body };
  });
}

function operationNamesOf(body: string, id: string): string[] {
  try {
    return parse(body)
      .definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
      .flatMap((operation) => (operation.name ? [operation.name.value] : []));
  } catch (error) {
    throw new ConfigError(`PERSISTED_OPERATIONS_MANIFEST: the document '${id}' does not parse: ${(error as Error).message}`);
  }
}

function trustedDocuments(entries: readonly ManifestEntry[]): TrustedDocuments {
  const byHash = new Map<string, string>();
  const operationNames = new Set<string>();
  for (const { id, body } of entries) {
    byHash.set(id, body);
    byHash.set(sha256(body), body);
    for (const name of operationNamesOf(body, id)) operationNames.add(name);
  }
  return {
    find: (hash) => byHash.get(hash),
    has: (document) => byHash.get(sha256(document)) === document,
    operationNames,
  };
}

/** The manifest of PERSISTED_OPERATIONS_MANIFEST, read once at start: an unreadable one stops the server. */
export function loadTrustedDocuments(file: string): TrustedDocuments {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError(`PERSISTED_OPERATIONS_MANIFEST ${file} cannot be read as JSON: ${(error as Error).message}`);
  }
  return trustedDocuments(entriesOf(json, file));
}

/**
 * Apollo's persisted-query cache in trusted-documents mode: lookups answer from the manifest, and
 * nothing is registered (a client cannot add a document by sending it with its hash).
 */
export function manifestCache(documents: TrustedDocuments): KeyValueCache<string> {
  // Apollo prefixes the keys of its persisted-query cache
  const hashOf = (key: string) => key.replace(/^apq:/, "");
  return {
    get: async (key) => documents.find(hashOf(key)),
    set: async () => {},
    delete: async () => false,
  };
}

/** The refusal of a document that is not in the manifest: the pipeline's trusted-document stage (403 over HTTP, before Apollo). */
export function untrustedDocumentError(): GraphQLError {
  return new GraphQLError(UNTRUSTED_DOCUMENT, { extensions: { code: "FORBIDDEN" } });
}
