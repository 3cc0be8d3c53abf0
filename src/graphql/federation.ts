/**
 * A schema served as an Apollo Federation 2 subgraph: the same types, fields and resolvers, plus
 * `@key`s on the entity types, `_service { sdl }` and `_entities(representations:)`.
 *
 * type-graphql builds the schema from classes; Apollo's `buildSubgraphSchema` builds a subgraph
 * only from SDL. So the schema is printed, the `@link` import and the `@key`s are added to that
 * SDL, Apollo builds the subgraph from it, and everything the SDL cannot carry is carried over from
 * the built schema: resolvers, subscriptions, scalars' and enums' runtime values (type-graphql's
 * `createResolversMap`, as its own federation example does) and every type's, field's and
 * argument's `extensions` (the cost estimates the operation pipeline prices operations with).
 * Whatever runs on the plain schema (budget, limits, compiled execution) then runs on this one.
 */
import { buildSubgraphSchema, type GraphQLResolverMap } from "@apollo/subgraph";
import {
  Kind,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  parse,
  printSchema,
  visit,
  type ConstDirectiveNode,
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLObjectType,
  type DocumentNode,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from "graphql";
import { createResolversMap } from "type-graphql";
import { perIdCost } from "./list-bounds.ts";

/**
 * The federation version the subgraph links: 2.3 has everything a `@key` needs and is understood
 * by every Apollo Router and gateway of Federation 2 still in use.
 */
export const FEDERATION_SPEC_URL = "https://specs.apollo.dev/federation/v2.3";

/** The field every entity is keyed by: its global id (node.ts), which names its type and domain too. */
const KEY_FIELD = "id";

export interface SubgraphOptions<Context> {
  /** the object types other subgraphs may reference, each by `@key(fields: "id")` */
  entities: readonly string[];
  /**
   * `_entities`: the object each representation names, in order, or null for one the caller may
   * not see (or that names nothing); each object marked with its type (`__typename`).
   */
  resolveEntities(representations: readonly unknown[], context: Context): Promise<readonly (object | null)[]>;
}

/** The subgraph of `schema`: see the module's comment. `schema` itself is left as it is. */
export function subgraphSchema<Context>(schema: GraphQLSchema, options: SubgraphOptions<Context>): GraphQLSchema {
  // the resolvers, subscriptions, type resolution, scalars and enums of the built schema, as
  // type-graphql's own federation example hands them over
  const resolvers = createResolversMap(schema) as GraphQLResolverMap;
  const subgraph = buildSubgraphSchema([{ typeDefs: federatedSdl(schema, options.entities), resolvers }]);
  carryInputsAndExtensionsOver(schema, subgraph);
  const query = subgraph.getQueryType()!.getFields();
  const entities = query._entities! as GraphQLField<unknown, Context, { representations: unknown[] }>;
  const resolve: GraphQLFieldResolver<unknown, Context, { representations: unknown[] }> = (_source, { representations }, context) =>
    options.resolveEntities(representations, context);
  entities.resolve = resolve;
  // each representation is an object fetched, as each id of `nodes` is
  entities.extensions = { ...entities.extensions, complexity: perIdCost("representations") };
  describeFederationFields(subgraph);
  return subgraph;
}

/**
 * The schema's SDL as a Federation 2 subgraph's: linked to the federation spec (importing `@key`),
 * each entity type keyed by its id. Printed in the schema's own order, so that introspection of the
 * subgraph lists fields as the plain schema does.
 */
function federatedSdl(schema: GraphQLSchema, entities: readonly string[]): DocumentNode {
  const missing = entities.filter((name) => {
    const type = schema.getType(name);
    return !isObjectType(type) || !type.getFields()[KEY_FIELD];
  });
  if (missing.length) throw new Error(`federation: no object type with an '${KEY_FIELD}' field named ${missing.join(", ")}`);
  const [link] = parse(`extend schema @link(url: "${FEDERATION_SPEC_URL}", import: ["@key"])`).definitions;
  const key = keyDirective();
  const keyed = visit(parse(printSchema(schema)), {
    ObjectTypeDefinition: (node) => (entities.includes(node.name.value) ? { ...node, directives: [...(node.directives ?? []), key] } : undefined),
  });
  return { ...keyed, definitions: [link!, ...keyed.definitions] };
}

function keyDirective(): ConstDirectiveNode {
  const [type] = parse(`type Keyed @key(fields: "${KEY_FIELD}") { ${KEY_FIELD}: ID }`).definitions;
  if (type?.kind !== Kind.OBJECT_TYPE_DEFINITION) throw new Error("unreachable: a type definition was parsed");
  return type.directives![0]!;
}

/**
 * What a resolver map cannot hand over, from the built schema to the subgraph built from its SDL:
 * the `extensions` of every type, field and argument, and the default values of arguments and
 * input fields (built from the SDL, an enum's default is its name, not the value its resolvers
 * take once the enum's values are carried over).
 */
function carryInputsAndExtensionsOver(from: GraphQLSchema, to: GraphQLSchema): void {
  for (const type of Object.values(to.getTypeMap())) {
    const original = from.getType(type.name);
    if (!original || type.name.startsWith("__")) continue;
    type.extensions = original.extensions;
    if (isInputObjectType(type) && isInputObjectType(original)) {
      const originalFields = original.getFields();
      for (const field of Object.values(type.getFields())) carryInputOver(originalFields[field.name], field);
      continue;
    }
    if (!(isObjectType(type) || isInterfaceType(type)) || !(isObjectType(original) || isInterfaceType(original))) continue;
    const originalFields = original.getFields();
    for (const field of Object.values(type.getFields())) {
      const source = originalFields[field.name];
      if (!source) continue;
      field.extensions = source.extensions;
      for (const arg of field.args)
        carryInputOver(
          source.args.find((a) => a.name === arg.name),
          arg,
        );
    }
  }
}

/** An argument's or input field's default value and extensions, as the built schema has them. */
function carryInputOver(from: GraphQLArgument | GraphQLInputField | undefined, to: GraphQLArgument | GraphQLInputField): void {
  if (!from) return;
  to.defaultValue = from.defaultValue;
  to.extensions = from.extensions;
}

/** Every type and field has a description (CONTRACT §7.3), federation's own root fields and types too. */
function describeFederationFields(subgraph: GraphQLSchema): void {
  const query = subgraph.getQueryType()!.getFields();
  query._service!.description = "Federation: this subgraph's SDL, for composing it into a supergraph (Apollo Router, Apollo Gateway).";
  query._entities!.description =
    "Federation: the entities these representations name (`__typename` and the global `id`), in order; null for each the caller cannot see, as `nodes`.";
  query._entities!.args[0]!.description = "`{ __typename, id }` of each entity, as a router sends them";
  const described: Record<string, string> = {
    _Service: "Federation: what a router reads of this subgraph.",
    _Any: "Federation: an entity representation, a JSON object with `__typename` and the entity's key fields.",
    _Entity: "Federation: the types other subgraphs may reference by key.",
  };
  for (const [name, description] of Object.entries(described)) {
    const type = subgraph.getType(name);
    if (type) type.description = description;
  }
  (subgraph.getType("_Service") as GraphQLObjectType).getFields().sdl!.description = "The subgraph's SDL, federation's `@link` and `@key`s included.";
}
