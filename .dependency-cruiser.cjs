/**
 * Import rules of the house (ARCHITECTURE.md, "Rules of the house" and "Lessons from the first
 * build"), checked by `npm run lint:deps`. Paths are matched from the repository root.
 *
 * Layers, from the bottom up:
 *   ground    src/db, src/util, src/errors.ts, src/log.ts, src/config.ts (and the generated Prisma
 *             client under src/generated, which src/db wraps); src/observability (metrics, probes,
 *             request log, tracing), which every layer may report to and which reads only the ground
 *   features  src/{cases,locations,apps,multimedia,admin,auth,events,rate-limit}: services,
 *             repositories, serializers, ... and the feature's own faces, named by role:
 *             *.rest.ts, *.resolver.ts, *.types.ts (type-graphql types), *.loaders.ts,
 *             *.graphql.ts (a feature's Apollo plugin, e.g. rate-limit.graphql.ts)
 *             *.graphql.ts is also where a feature registers with the GraphQL gateway
 *   faces     src/graphql (the GraphQL kit: connections, global ids, scalars, the context's shape,
 *             the transports), src/rest (shared adapter helpers) and the face files above
 *   assembly  src/gateway (the GraphQL schema, Query.node and each request's context, from the
 *             features' *.graphql.ts), src/services.ts, src/server.ts, src/main.ts
 */

// dependency-cruiser reads TypeScript through the `typescript` package's compiler API, which it
// supports only below TypeScript 7 (`npx depcruise --info`); this project is on TypeScript 7, whose
// package has no such API. So .ts files are parsed with swc (`parser: "swc"`, @swc/core is a
// devDependency). Without a working @swc/core, dependency-cruiser would not scan .ts files at all
// and report "no dependency violations found" on an empty graph: fail loudly instead.
try {
  require("@swc/core").parseSync("import type { A } from './a.ts';", { syntax: "typescript" });
} catch (error) {
  throw new Error(`.dependency-cruiser.cjs: @swc/core is needed to read .ts files (npm ci installs it): ${error}`);
}

const FEATURES = "(cases|locations|apps|multimedia|admin|auth|events|rate-limit)";
const FEATURE = `^src/${FEATURES}/`;
/** a feature's own face files */
const FACE_FILE = `^src/${FEATURES}/.+\\.(rest|resolver|types|loaders|graphql)\\.ts$`;
/** the shared adapter folders */
const FACE_DIR = "^src/(graphql|rest)/";
// src/observability is ground: features count into its metrics, so it may not import them back
const GROUND = ["^src/(db|util|observability)/", "^src/(errors|log|config)\\.ts$"];
const GENERATED = "^src/generated/";
/** the face files of every feature, and the shared adapter folders (src/gateway: the assembly of the GraphQL face) */
const FACES = ["\\.(rest|resolver|loaders|graphql)\\.ts$", "^src/(graphql|rest|gateway)/"];
/**
 * Trusted modules: calls that no caller's permission stands behind (the multimedia worker acts for
 * a job admitted at its upload). Named `*.system.ts`, or the worker's own modules.
 */
const TRUSTED = ["\\.system\\.ts$", "^src/multimedia/(job\\.attempt|worker)\\.ts$"];
/**
 * Files outside the repositories that still import the generated Prisma client, each a known debt
 * (see "prisma-client-only-in-repositories"); a file leaves this list when its statements move to
 * its feature's repository. Do not add to it.
 */
const PRISMA_CLIENT_EXCEPTIONS = [
  // builds its case and index writes with the client's SQL template helpers (Prisma.sql, Prisma.join)
  "^src/cases/case\\.write\\.service\\.ts$",
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "An import cycle has no reading order: neither module can be understood, tested or loaded " +
        "first. Type-only imports count too (swc reports them; they are marked 'type-only'): the aim " +
        "is a clean reading order, not only a clean load order. Break the cycle by moving the shared " +
        "type or value down a layer.",
      severity: "error",
      from: { path: "^src/", pathNot: GENERATED },
      to: { circular: true },
    },
    {
      name: "feature-not-to-faces",
      comment:
        "Services know nothing of HTTP or GraphQL: a feature's services, repositories, serializers " +
        "and helpers never import src/graphql or src/rest. Only the feature's own face files " +
        "(*.rest.ts, *.resolver.ts, *.types.ts, *.loaders.ts, *.graphql.ts) may use those helpers.",
      severity: "error",
      from: { path: FEATURE, pathNot: FACE_FILE },
      to: { path: FACE_DIR },
    },
    {
      name: "service-not-to-adapters",
      comment:
        "A service or repository takes a principal, a domain and plain input and returns plain data: " +
        "it never imports an adapter (a face file of any feature, src/graphql, src/rest) nor the " +
        "assembly (src/services.ts, src/server.ts), which would turn the dependency upside down.",
      severity: "error",
      from: { path: "^src/.+\\.(service|repository)\\.ts$" },
      to: {
        path: [FACE_FILE, FACE_DIR, "^src/(services|server)\\.ts$"],
      },
    },
    {
      name: "ground-not-to-features",
      comment:
        "The ground (src/db, src/util, src/errors.ts, src/log.ts, src/config.ts) is what every layer " +
        "stands on: it never imports a feature folder, a face or the assembly, or it would stand on " +
        "what stands on it. It may import the generated Prisma client and packages.",
      severity: "error",
      from: { path: GROUND },
      to: { path: [FEATURE, FACE_DIR, "^src/(services|server|main|maintenance)\\.ts$"] },
    },
    {
      name: "src-not-to-tests",
      comment: "Production code never depends on tests, benchmarks or scripts: they are not shipped. A shared helper belongs in src/.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench|scripts)/" },
    },
    {
      name: "adapters-not-to-services-root",
      comment:
        "Adapters get only what they use: a REST router or a GraphQL module declares the services it " +
        "needs (an interface, or the service classes) instead of importing the whole Services bag of " +
        "src/services.ts, which ties every face to every feature.",
      severity: "error",
      from: { path: ["\\.rest\\.ts$", "^src/graphql/"] },
      to: { path: "^src/services\\.ts$" },
    },
    {
      name: "apps-not-to-multimedia",
      comment:
        "Imports between features run one way: multimedia builds on apps (multimedia -> apps), so " +
        "src/apps never imports src/multimedia. Multimedia's REST paths and GraphQL fields live in " +
        "src/multimedia even where they hang under an app.",
      severity: "error",
      from: { path: "^src/apps/" },
      to: { path: "^src/multimedia/" },
    },
    {
      name: "graphql-kit-not-to-features",
      comment:
        "src/graphql is the kit the features stand on (connections, global ids, scalars, per-domain " +
        "loaders, the context's shape, the transports): it never imports a feature folder, or the " +
        "features and the kit would stand on each other. A feature joins GraphQL from its own " +
        "*.graphql.ts, which src/gateway lists; its services, loaders and Node type names reach the " +
        "kit's interfaces by augmenting them (declare module), so the kit need not name them.",
      severity: "error",
      from: { path: "^src/graphql/" },
      to: { path: "^src/(cases|locations|apps|multimedia|admin)/" },
    },
    {
      name: "openapi-kit-not-to-features",
      comment:
        "src/openapi is the vocabulary the features describe their REST routes in (parameter descriptors, " +
        "key tables, error families) and the page that serves the document: it never imports a feature, " +
        "or the features and it would stand on each other. The document is assembled above the features, " +
        "in src/gateway/openapi.ts, from each feature's *.openapi.ts.",
      severity: "error",
      from: { path: "^src/openapi/" },
      to: { path: "^src/(cases|locations|apps|multimedia|admin|auth)/" },
    },
    {
      name: "events-not-to-features",
      comment:
        "src/events is the bus every feature publishes on and every face subscribes through: it never " +
        "imports a feature, or a feature and the bus would stand on each other. Each feature adds its " +
        "topics and their payload types to the bus's TopicRegistry from its leaf *.events.ts (declare module).",
      severity: "error",
      from: { path: "^src/events/" },
      to: { path: "^src/(cases|locations|apps|multimedia|admin|auth)/" },
    },
    {
      name: "gateway-only-from-server",
      comment:
        "src/gateway assembles GraphQL from the features, so it stands above them all: only the " +
        "process's assembly (src/server.ts, src/main.ts) imports it. A feature, the kit or the ground " +
        "importing it would stand on what stands on it.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/gateway/", "^src/(server|main)\\.ts$"] },
      to: { path: "^src/gateway/" },
    },
    {
      name: "faces-not-to-trusted",
      comment:
        "A face (*.rest.ts, *.resolver.ts, *.loaders.ts, *.graphql.ts, src/graphql, src/rest, src/gateway) reads and writes only " +
        "through a service's scope, `X.in(principal, domain)`, which checks the caller's permission " +
        "first. Trusted modules (*.system.ts, multimedia's job.attempt.ts and worker.ts) act without a " +
        "caller, for a job admitted earlier: a face that imported one could skip the permission check " +
        "without any signature saying so. The assembly (src/services.ts) hands them to the worker only.",
      severity: "error",
      from: { path: FACES },
      to: { path: TRUSTED },
    },
    {
      name: "prisma-client-only-in-repositories",
      comment:
        "Every road to the database goes through a repository (*.repository.ts), src/db (which opens " +
        "the client) or src/events (the bus's payload table): the generated Prisma client is imported " +
        "nowhere else, so that a table's statements can be found, fenced and changed in one file. " +
        "Type-only imports count too: a service that names a generated row type is tied to the table's " +
        "shape as much as one that queries it, so a repository re-exports the row types it returns " +
        "(JobRecord, AppRecord, ...). The Prisma type of src/db/client.ts, which services take to hand " +
        "to their repositories, is not the generated client's module. Known debts: PRISMA_CLIENT_EXCEPTIONS.",
      severity: "error",
      from: { path: "^src/", pathNot: ["\\.repository\\.ts$", "^src/(db|events)/", GENERATED, ...PRISMA_CLIENT_EXCEPTIONS] },
      to: { path: "^src/generated/prisma/" },
    },
    {
      name: "not-to-unresolvable",
      comment: "An import that cannot be resolved is one no rule above can check (or a broken one): keep the graph complete.",
      severity: "error",
      from: { path: "^src/", pathNot: GENERATED },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API for dependency-cruiser: parse .ts with swc (see above).
    // swc reads the source as written, so type-only imports (`import type`, `import { type X }`)
    // are in the graph, with dependency type 'type-only'.
    parser: "swc",
    // tsPreCompilationDeps is the `tsc` parser's switch for keeping type-only imports; swc keeps
    // them always. Setting it here would only print a "missing-tsc-transpiler" warning (it asks for
    // typescript < 7). Set it to true if the parser is ever switched back to "tsc".
    tsPreCompilationDeps: false,
    moduleSystems: ["es6", "cjs"],
    // Packages and the generated Prisma client are leaves: their insides are not ours to check,
    // but imports of them still show (and resolve) in the graph.
    doNotFollow: { path: ["node_modules", GENERATED] },
    // Imports carry explicit .ts extensions (allowImportingTsExtensions); packages resolve through
    // their "exports" maps like Node's ESM resolver does.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "node", "default", "types", "require"],
      mainFields: ["module", "main", "types", "typings"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json", ".d.ts"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
