import { GraphQLUpload, type FileUpload } from "graphql-upload-ts";
import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.ts";
import { withUpload } from "../graphql/file-upload.ts";
import type { AppRecord, MultimediaMap } from "./app.service.ts";
import { AppType, AppVersionType, ImportAppResultType, type AppNode } from "./app.types.ts";

/**
 * GraphQL twin of the Import App API's import and apps: the same services; uploads follow the
 * multipart request spec. The App type's multimedia fields are multimedia's (multimedia.resolver.ts).
 */

const toNode = (app: AppRecord, domain: string): AppNode => ({ ...app, domain, map: (app.multimediaMap ?? {}) as MultimediaMap });

@Resolver(() => AppType)
export class AppResolver {
  @Query(() => [AppType])
  async apps(@Arg("domain", () => String) domain: string, @Ctx() ctx: GraphQLContext): Promise<AppNode[]> {
    const scope = await ctx.services.apps.in(ctx.principal, domain);
    return (await scope.list()).map((r) => toNode(r, domain));
  }

  @Query(() => AppType, { nullable: true })
  async app(@Arg("domain", () => String) domain: string, @Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<AppNode | null> {
    const row = await (await ctx.services.apps.in(ctx.principal, domain)).find(id);
    return row ? toNode(row, domain) : null;
  }

  @Mutation(() => ImportAppResultType, { description: "POST import_app/: a new app, or the next version of appId" })
  async importApp(
    @Arg("domain", () => String) domain: string,
    @Arg("file", () => GraphQLUpload) file: Promise<FileUpload>,
    @Arg("appName", () => String, { nullable: true }) appName: string | null,
    @Arg("appId", () => ID, { nullable: true }) appId: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ImportAppResultType> {
    const scope = await ctx.services.apps.in(ctx.principal, domain);
    return withUpload(await ctx.services.blobs.tempDir(), file, (upload) =>
      scope.importApp({ file: upload, appName: appName ?? undefined, appId: appId ?? undefined }),
    );
  }

  @FieldResolver(() => [AppVersionType], { description: "every imported version, newest first" })
  async versions(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<AppVersionType[]> {
    const rows = await ctx.loaders.apps.versions(app);
    return rows.map((r) => ({ version: r.version, name: r.name, createdAt: r.createdAt, source: r.source as Record<string, unknown> }));
  }
}
