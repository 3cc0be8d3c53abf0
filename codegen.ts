import type { CodegenConfig } from "@graphql-codegen/cli";

/**
 * Typed documents for the GraphQL tests: operations written with `graphql(...)` from
 * test/generated/ in test files are checked against schema.graphql and typed end to end.
 * Regenerate with `npm run codegen` after changing an operation or the schema.
 */
const config: CodegenConfig = {
  schema: "schema.graphql",
  // test/clients/relay is a Relay project: its documents use Relay's directives and relay-compiler checks them
  documents: ["test/**/*.ts", "!test/generated/**", "!test/clients/relay/**"],
  ignoreNoDocuments: true,
  generates: {
    "test/generated/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        emitLegacyCommonJSImports: false,
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { DateTimeISO: "string" },
      },
    },
  },
};

export default config;
