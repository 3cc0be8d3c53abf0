/**
 * The small vocabulary the REST grammar and serializers describe themselves in, so that the OpenAPI
 * document is built from the tables the faces run (CONTRACT §7.2): JSON Schema (2020-12, as OpenAPI
 * 3.1 takes it) fragments, key tables whose order is the wire order, and query parameters. Imports
 * nothing: a feature's grammar may use it without depending on the document.
 */

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

export const string = (description: string, extra: Schema = {}): Schema => ({ type: "string", description, ...extra });
export const integer = (description: string, extra: Schema = {}): Schema => ({ type: "integer", minimum: 0, description, ...extra });
export const boolean = (description: string): Schema => ({ type: "boolean", description });
export const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as string, "null"] });
export const stringMap = (description: string): Schema => ({ type: "object", description, additionalProperties: { type: "string" } });
export const arrayOf = (items: Schema, description?: string): Schema => ({ type: "array", items, ...(description ? { description } : {}) });

/**
 * An object with exactly these keys, in this order (`x-key-order`: the test suite's response
 * validator checks the order); `optional` names those that may be absent.
 */
export function ordered(description: string, properties: Record<string, Schema>, optional: readonly string[] = []): Schema {
  return {
    type: "object",
    description,
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    additionalProperties: false,
    "x-key-order": true,
  };
}

/**
 * A serializer's table: each output key, in wire order, with its schema and how it is read from
 * the source. The serializer is `serialize(table, source)`, the document's schema `tableSchema`.
 */
export type KeyTable<S> = Record<string, { schema: Schema; of: (source: S) => unknown }>;

/** The body a key table builds, typed key by key from its readers. */
export type Serialized<T extends KeyTable<never>> = { [K in keyof T]: ReturnType<T[K]["of"]> };

export function serialize<S, T extends KeyTable<S>>(table: T, source: S): Serialized<T> {
  const out: Record<string, unknown> = {};
  for (const key in table) out[key] = table[key].of(source);
  return out as Serialized<T>;
}

/** The schema of a key table's body: every key, in the table's order. */
export function tableSchema(description: string, table: KeyTable<never>, optional: readonly string[] = []): Schema {
  return ordered(description, Object.fromEntries(Object.entries(table).map(([key, { schema }]) => [key, schema])), optional);
}

/**
 * One query parameter a REST face reads: its name, what it means and the schema of one value.
 * `repeatable`: it may be given several times, each value counting (documented as an exploded
 * array); otherwise the last one given counts.
 */
export interface QueryParameter {
  name: string;
  description: string;
  schema: Schema;
  repeatable?: boolean;
}

/**
 * A family of query parameter names a face reads by prefix (`properties.{name}=…`): documented as
 * one exploded object parameter whose property names follow `pattern`, each value of `schema`.
 */
export interface QueryParameterFamily {
  /** the name the document gives the family (never sent as such) */
  name: string;
  description: string;
  pattern: string;
  schema: Schema;
}

export const queryParameter = (p: QueryParameter) => ({
  name: p.name,
  in: "query",
  description: p.description,
  schema: p.repeatable ? { type: "array", items: p.schema } : p.schema,
  ...(p.repeatable ? { style: "form", explode: true } : {}),
});

export const queryParameterFamily = (f: QueryParameterFamily) => ({
  name: f.name,
  in: "query",
  description: f.description,
  style: "form",
  explode: true,
  schema: { type: "object", propertyNames: { pattern: f.pattern }, additionalProperties: f.schema },
});
