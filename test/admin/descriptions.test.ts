import { describe, expect, it } from "vitest";
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLNamedType } from "graphql";
import { buildGatewaySchema } from "../../src/graphql/schema.ts";

/** CONTRACT §7.3 "every type, field, argument, enum value and input field has a description", for locations, location types and administration. */

const TYPES = [
  "Location",
  "LocationEdge",
  "LocationConnection",
  "LocationFilter",
  "LocationInput",
  "LocationBulkItem",
  "LocationOrderBy",
  "LocationType",
  "LocationTypeInput",
  "PageInfo",
  "User",
  "Membership",
  "Domain",
  "ApiKey",
  "NewApiKey",
  "OAuthClient",
  "NewOAuthClient",
  "CreateUserInput",
  "CreateOAuthClientInput",
  "Permission",
  "OAuthGrant",
];

/** The root fields of locations, location types and administration. */
const ROOT_FIELDS = [
  "locations",
  "location",
  "locationBySiteCode",
  "locationTypes",
  "createLocation",
  "updateLocation",
  "bulkLocations",
  "createLocationType",
  "updateLocationType",
  "deleteLocationType",
  "me",
  "domains",
  "users",
  "apiKeys",
  "createDomain",
  "createUser",
  "setPermissions",
  "removeMembership",
  "setUserActive",
  "createApiKey",
  "revokeApiKey",
  "createOAuthClient",
  "revokeOAuthTokens",
];

const described = (d: string | null | undefined) => typeof d === "string" && d.trim().length > 0;

function undescribed(type: GraphQLNamedType): string[] {
  const missing = described(type.description) ? [] : [type.name];
  if (isObjectType(type) || isInterfaceType(type)) {
    for (const field of Object.values(type.getFields())) {
      if (!described(field.description)) missing.push(`${type.name}.${field.name}`);
      for (const arg of field.args) if (!described(arg.description)) missing.push(`${type.name}.${field.name}(${arg.name})`);
    }
  }
  if (isInputObjectType(type)) {
    for (const field of Object.values(type.getFields())) if (!described(field.description)) missing.push(`${type.name}.${field.name}`);
  }
  if (isEnumType(type)) {
    for (const value of type.getValues()) if (!described(value.description)) missing.push(`${type.name}.${value.name}`);
  }
  return missing;
}

describe("CONTRACT §7.3 descriptions of locations, location types and administration", () => {
  it("every type, field, argument, enum value and input field has a description", async () => {
    const schema = await buildGatewaySchema();
    const missing = TYPES.flatMap((name) => {
      const type = schema.getType(name);
      return type ? undescribed(type) : [`${name} (no such type)`];
    });
    const roots = { ...schema.getQueryType()!.getFields(), ...schema.getMutationType()!.getFields() };
    for (const name of ROOT_FIELDS) {
      const field = roots[name];
      if (!field) missing.push(`${name} (no such root field)`);
      else {
        if (!described(field.description)) missing.push(name);
        for (const arg of field.args) if (!described(arg.description)) missing.push(`${name}(${arg.name})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
