import { describe, expect, it } from "vitest";
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isSpecifiedScalarType, type GraphQLSchema } from "graphql";
import { buildGatewaySchema } from "../../src/gateway/schema.ts";

/** CONTRACT §7.3: every type, field, argument, enum value and input field has a description. */

/** Each schema coordinate (`Type`, `Type.field`, `Type.field(arg:)`, `Enum.VALUE`) without a description, by type. */
function undescribed(schema: GraphQLSchema): Record<string, string[]> {
  const missing: Record<string, string[]> = {};
  const check = (typeName: string, coordinate: string, description: string | null | undefined) => {
    if (description?.trim()) return;
    (missing[typeName] ??= []).push(coordinate);
  };
  for (const type of Object.values(schema.getTypeMap())) {
    // built-in scalars and introspection types are graphql-js's, described by the spec
    if (type.name.startsWith("__") || isSpecifiedScalarType(type)) continue;
    check(type.name, type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        check(type.name, `${type.name}.${field.name}`, field.description);
        for (const arg of field.args) check(type.name, `${type.name}.${field.name}(${arg.name}:)`, arg.description);
      }
    }
    if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) check(type.name, `${type.name}.${field.name}`, field.description);
    }
    if (isEnumType(type)) for (const value of type.getValues()) check(type.name, `${type.name}.${value.name}`, value.description);
  }
  return missing;
}

describe("descriptions (CONTRACT §7.3)", () => {
  it("every type, field, argument, enum value and input field of the schema has a description", async () => {
    // listed by type, so that the failure names every one to describe
    expect(undescribed(await buildGatewaySchema())).toEqual({});
  });

  it("the walk finds what lacks a description (an undescribed field fails the test above)", async () => {
    const schema = await buildGatewaySchema();
    const caseType = schema.getType("Case");
    if (!isObjectType(caseType)) throw new Error("Case is not an object type");
    const field = caseType.getFields().caseName!;
    const description = field.description;
    field.description = undefined;
    try {
      expect(undescribed(schema).Case).toEqual(["Case.caseName"]);
    } finally {
      field.description = description;
    }
  });
});
