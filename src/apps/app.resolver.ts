import { GraphQLUpload, type FileUpload } from "graphql-upload-ts";
import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.ts";
import { withUpload } from "../graphql/file-upload.ts";
import { globalId, type NodeFetcher, type NodeTypeName } from "../graphql/node.ts";
import type { AppRecord, AppVersionRow, MultimediaMap } from "./app.service.ts";
import { AppType, AppVersionType, ImportAppResultType, type AppNode, type AppVersionNode } from "./app.types.ts";

/**
 * GraphQL twin of the Import App API's import and apps: the same services; uploads follow the
 * multipart request spec. The App type's multimedia fields are multimedia's (multimedia.resolver.ts).
 */

export const toAppNode = (app: AppRecord, domain: string): AppNode => ({
  ...app,
  appId: app.id,
  domain,
  map: (app.multimediaMap ?? {}) as MultimediaMap,
});

const toVersionNode = (app: AppNode, row: AppVersionRow): AppVersionNode => ({
  version: row.version,
  name: row.name,
  createdAt: row.createdAt,
  source: row.source as Record<string, unknown>,
  appId: app.appId,
  domain: app.domain,
  domainId: app.domainId,
});

/** An AppVersion's key in its global id: the app id and the version (app ids hold no "/"). */
const versionKey = (appId: string, version: number) => `${appId}/${version}`;

/** The app of the caller's domain scope (edit_apps, checked once per request), or null; a refusal is thrown (403/404). */
async function findApp(ctx: GraphQLContext, domain: string, appId: string): Promise<AppNode | null> {
  const row = await (await ctx.loaders.apps.scope(domain)).find(appId);
  return row ? toAppNode(row, domain) : null;
}

@Resolver(() => AppType)
export class AppResolver {
  @Query(() => [AppType], { description: "The domain's applications, oldest first (edit_apps)." })
  async apps(
    @Arg("domain", () => String, { description: "the domain whose applications to list" }) domain: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<AppNode[]> {
    const scope = await ctx.loaders.apps.scope(domain);
    return (await scope.list()).map((r) => toAppNode(r, domain));
  }

  @Query(() => AppType, { nullable: true, description: "One application by its app id, or null when the domain has none (edit_apps)." })
  app(
    @Arg("domain", () => String, { description: "the domain the application belongs to" }) domain: string,
    @Arg("appId", () => ID, { description: "the application's id (the REST app_id)" }) appId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<AppNode | null> {
    return findApp(ctx, domain, appId);
  }

  @Mutation(() => ImportAppResultType, { description: "POST import_app/: a new app, or the next version of appId" })
  async importApp(
    @Arg("domain", () => String, { description: "the domain to import into" }) domain: string,
    @Arg("file", () => GraphQLUpload, { description: "the application source: a JSON object (the REST app_file)" }) file: Promise<FileUpload>,
    @Arg("appName", () => String, { nullable: true, description: "the application's name: required for a new app, optional for an update" })
    appName: string | null,
    @Arg("appId", () => ID, { nullable: true, description: "the application to add a version to; absent: a new application" }) appId: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ImportAppResultType> {
    const scope = await ctx.services.apps.in(ctx.principal, domain);
    return withUpload(await ctx.services.blobs.tempDir(), file, (upload) =>
      scope.importApp({ file: upload, appName: appName ?? undefined, appId: appId ?? undefined }),
    );
  }

  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() app: AppNode): string {
    return globalId("App", app.domain, app.appId);
  }

  @FieldResolver(() => [AppVersionType], { description: "every imported version, newest first" })
  async versions(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<AppVersionNode[]> {
    const rows = await ctx.loaders.apps.versions(app);
    return rows.map((r) => toVersionNode(app, r));
  }
}

@Resolver(() => AppVersionType)
export class AppVersionResolver {
  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() version: AppVersionNode): string {
    return globalId("AppVersion", version.domain, versionKey(version.appId, version.version));
  }

  @FieldResolver(() => AppType, { description: "the application this is a version of" })
  async app(@Root() version: AppVersionNode, @Ctx() ctx: GraphQLContext): Promise<AppNode> {
    const app = await findApp(ctx, version.domain, version.appId);
    // a version outlives nothing: its app exists as long as it does
    return app!;
  }
}

/** Apps and their versions for `Query.node`: read through the caller's edit_apps scope of the id's domain. */
export const APP_NODES: Partial<Record<NodeTypeName, NodeFetcher<GraphQLContext>>> = {
  App: (ctx, { domain, key }) => findApp(ctx, domain, key),
  AppVersion: async (ctx, { domain, key }) => {
    const slash = key.lastIndexOf("/");
    const version = Number(key.slice(slash + 1));
    const app = slash > 0 && Number.isSafeInteger(version) ? await findApp(ctx, domain, key.slice(0, slash)) : null;
    const row = app && (await ctx.loaders.apps.versions(app)).find((v) => v.version === version);
    return row ? toVersionNode(app, row) : null;
  },
};
