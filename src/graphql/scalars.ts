import { GraphQLError, GraphQLScalarType, Kind, type ObjectValueNode, type ValueNode } from "graphql";
import { GraphQLDateTimeISO, GraphQLJSONObject } from "graphql-scalars";
import { inspect } from "graphql/jsutils/inspect.js";
import { isoString } from "../util/dates.ts";

/**
 * The `JSONObject` scalar of graphql-scalars (same name, description and wire form), made safe for
 * values as deep as a client may send: graphql-scalars prints a rejected value with `${value}` and
 * reads literals recursively, and both overflow the call stack on a list or object some thousands
 * of levels deep. Here a rejected value is shown by graphql's own bounded `inspect`, and a literal
 * is read with an explicit stack.
 */

function ensureObject(value: unknown, node?: ValueNode): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GraphQLError(`JSONObject cannot represent non-object value: ${inspect(value)}`, node ? { nodes: node } : undefined);
  }
  return value as Record<string, unknown>;
}

/** A literal's value, as graphql-scalars reads it (objects without a prototype, numbers as floats). */
function literalValue(root: ValueNode, variables: Record<string, unknown> | null | undefined): unknown {
  let result: unknown;
  const pending: { node: ValueNode; put: (value: unknown) => void }[] = [{ node: root, put: (value) => (result = value) }];
  while (pending.length) {
    const { node, put } = pending.pop()!;
    switch (node.kind) {
      case Kind.STRING:
      case Kind.BOOLEAN:
        put(node.value);
        break;
      case Kind.INT:
      case Kind.FLOAT:
        put(Number.parseFloat(node.value));
        break;
      case Kind.NULL:
        put(null);
        break;
      case Kind.VARIABLE:
        put(variables ? variables[node.name.value] : undefined);
        break;
      case Kind.LIST: {
        const list: unknown[] = new Array(node.values.length);
        put(list);
        for (const [i, item] of node.values.entries()) {
          pending.push({
            node: item,
            put: (value) => {
              list[i] = value;
            },
          });
        }
        break;
      }
      case Kind.OBJECT: {
        const object: Record<string, unknown> = Object.create(null);
        put(object);
        // pushed last to first, so that they are read in order and a repeated field's last value wins
        for (const field of [...node.fields].reverse()) pending.push({ node: field.value, put: (value) => (object[field.name.value] = value) });
        break;
      }
      default:
        put(undefined);
    }
  }
  return result;
}

export const JSONObjectScalar = new GraphQLScalarType<Record<string, unknown>, Record<string, unknown>>({
  ...GraphQLJSONObject.toConfig(),
  serialize: (value) => ensureObject(value),
  parseValue: (value) => ensureObject(value),
  parseLiteral(node, variables) {
    if (node.kind !== Kind.OBJECT) throw new GraphQLError(`JSONObject cannot represent non-object value: ${inspect(node.kind)}`, { nodes: node });
    return literalValue(node as ObjectValueNode, variables) as Record<string, unknown>;
  },
});

/**
 * graphql-scalars' `DateTimeISO` (type-graphql's scalar for `Date`: same name, description, input
 * parsing and wire form), serialising a valid Date with `isoString` instead of `toISOString`: the
 * same string, for a tenth of a case page's CPU time. Anything else goes to graphql-scalars' own
 * serialize, errors included.
 */
const dateTimeISO = GraphQLDateTimeISO.toConfig();
export const DateTimeISOScalar = new GraphQLScalarType<Date, string>({
  ...dateTimeISO,
  serialize: (value) => (value instanceof Date && !Number.isNaN(value.getTime()) ? isoString(value) : (dateTimeISO.serialize(value) as string)),
});
