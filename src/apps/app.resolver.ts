import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { GraphQLUpload, type FileUpload } from "graphql-upload-ts";
import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import type { GraphQLContext } from "../graphql/context.ts";
import { MULTIMEDIA_PROGRESS, type MultimediaStatus } from "../multimedia/job.events.ts";
import type { MultimediaMap } from "./app.service.ts";
import { AppType, AppVersionType, ImportAppResultType, MultimediaFileType, MultimediaJobType, MultimediaReferenceType } from "./app.types.ts";

/** GraphQL twin of the Import App API: the same services; uploads follow the multipart request spec. */

type AppRow = { id: string; name: string; docType: string; version: number; createdAt: Date; updatedAt: Date; multimediaMap: unknown; domainId: string };
type AppNode = AppType & { map: MultimediaMap; domainId: string };

const toNode = (app: AppRow, domain: string): AppNode => ({ ...app, domain, map: (app.multimediaMap ?? {}) as MultimediaMap });

const RESULT_KEYS = ["success", "complete", "in_queue", "progress", "errors", "processing_id"];

export function toJob(status: MultimediaStatus & { failed?: boolean }): MultimediaJobType {
  const result = Object.fromEntries(Object.entries(status).filter(([key]) => !RESULT_KEYS.includes(key) && key !== "failed"));
  return {
    processingId: status.processing_id,
    complete: status.complete,
    inQueue: status.in_queue,
    failed: Boolean(status.failed),
    progress: status.progress,
    errors: status.errors.map(String),
    result: status.complete ? result : null,
  };
}

/** Saves an upload to a temporary file for the service, and removes it afterwards. */
async function withUpload<T>(ctx: GraphQLContext, upload: Promise<FileUpload>, run: (file: { path: string; size: number }) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(await ctx.services.blobs.tempDir(), "gql-upload-"));
  try {
    const file = path.join(dir, "upload");
    await pipeline((await upload).createReadStream(), createWriteStream(file));
    return await run({ path: file, size: (await stat(file)).size });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function mediaFile(row: { id: string; sha256: string; md5: string; size: bigint; contentType: string; mediaClass: string }): MultimediaFileType {
  return { id: row.id, sha256: row.sha256, md5: row.md5, size: Number(row.size), contentType: row.contentType, mediaClass: row.mediaClass };
}

type JobStatus = MultimediaStatus & { failed: boolean };

const settled = (status: JobStatus) => status.complete || status.failed;

/**
 * The job's state `now`, then each later change from `events` (whose first is `first`), up to
 * the final one.
 */
async function* progressStream(now: JobStatus, first: Promise<IteratorResult<JobStatus>>, events: AsyncIterator<JobStatus>): AsyncGenerator<JobStatus> {
  try {
    yield now;
    if (settled(now)) return;
    for (let next = await first; !next.done; next = await events.next()) {
      // an event older than the state already sent would move the progress backwards
      if (next.value.progress.current < now.progress.current && !settled(next.value)) continue;
      yield next.value;
      if (settled(next.value)) return;
    }
  } finally {
    await events.return?.();
  }
}

@Resolver(() => AppType)
export class AppResolver {
  @Query(() => [AppType])
  async apps(@Arg("domain", () => String) domain: string, @Ctx() ctx: GraphQLContext): Promise<AppNode[]> {
    const ref = await ctx.services.apps.domain(ctx.principal, domain);
    return (await ctx.services.apps.list(ref)).map((r) => toNode(r, domain));
  }

  @Query(() => AppType, { nullable: true })
  async app(@Arg("domain", () => String) domain: string, @Arg("id", () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<AppNode | null> {
    const row = await ctx.services.apps.find(await ctx.services.apps.domain(ctx.principal, domain), id);
    return row ? toNode(row, domain) : null;
  }

  @Query(() => MultimediaJobType)
  async multimediaJob(
    @Arg("domain", () => String) domain: string,
    @Arg("processingId", () => ID) processingId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MultimediaJobType> {
    return toJob(await ctx.services.multimediaJobs.statusById(ctx.principal, domain, processingId));
  }

  @Mutation(() => ImportAppResultType, { description: "POST import_app/: a new app, or the next version of appId" })
  async importApp(
    @Arg("domain", () => String) domain: string,
    @Arg("file", () => GraphQLUpload) file: Promise<FileUpload>,
    @Arg("appName", () => String, { nullable: true }) appName: string | null,
    @Arg("appId", () => ID, { nullable: true }) appId: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ImportAppResultType> {
    await ctx.services.apps.domain(ctx.principal, domain);
    return withUpload(ctx, file, (upload) =>
      ctx.services.apps.importApp(ctx.principal, domain, { file: upload, appName: appName ?? undefined, appId: appId ?? undefined }),
    );
  }

  @Mutation(() => ID, { description: "POST {app_id}/multimedia/: the processing id of the queued job" })
  async uploadMultimedia(
    @Arg("domain", () => String) domain: string,
    @Arg("appId", () => ID) appId: string,
    @Arg("file", () => GraphQLUpload) file: Promise<FileUpload>,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    await ctx.services.apps.app(await ctx.services.apps.domain(ctx.principal, domain), appId);
    return withUpload(ctx, file, (upload) => ctx.services.multimediaJobs.upload(ctx.principal, domain, appId, upload));
  }

  @Subscription(() => MultimediaJobType, {
    description: "the job's state now, then every progress change, ending with the final result",
    // The refusal (403, 404) comes before the stream exists: thrown from inside a running
    // generator, graphql-ws would report it without its code.
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      const events = ctx.services.pubsub.subscribe(MULTIMEDIA_PROGRESS, args.processingId);
      // A Repeater listens from its first next(): ask now, so that no change after the status read is lost.
      const first = events.next();
      try {
        const now = await ctx.services.multimediaJobs.statusById(ctx.principal, args.domain, args.processingId);
        return progressStream(now, first, events);
      } catch (error) {
        await events.return?.();
        throw error;
      }
    },
  })
  multimediaProgress(
    @Root() status: JobStatus,
    @Arg("domain", () => String) _domain: string,
    @Arg("processingId", () => ID) _processingId: string,
  ): MultimediaJobType {
    return toJob(status);
  }

  @FieldResolver(() => [AppVersionType], { description: "every imported version, newest first" })
  async versions(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<AppVersionType[]> {
    const rows = await ctx.loaders.apps.versions(app);
    return rows.map((r) => ({ version: r.version, name: r.name, createdAt: r.createdAt, source: r.source as Record<string, unknown> }));
  }

  @FieldResolver(() => [MultimediaReferenceType])
  async multimediaReferences(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<MultimediaReferenceType[]> {
    const [references, files] = await Promise.all([ctx.loaders.apps.references(app), this.files(app, ctx)]);
    const mapped = new Map(Object.entries(app.map).map(([p, v]) => [p.toLowerCase(), v]));
    return references.map((r) => {
      const entry = mapped.get(r.path.toLowerCase());
      const file = entry ? files.find((f) => f.id === entry.fileId) ?? null : null;
      return { path: r.path, mediaType: r.mediaType, present: Boolean(file), file };
    });
  }

  @FieldResolver(() => [MultimediaFileType], { description: "the uploaded files the app maps" })
  async multimedia(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<MultimediaFileType[]> {
    return this.files(app, ctx);
  }

  private async files(app: AppNode, ctx: GraphQLContext): Promise<MultimediaFileType[]> {
    const ids = [...new Set(Object.values(app.map).map((v) => v.fileId))];
    return (await ctx.loaders.apps.files(app.domainId, ids)).map(mediaFile);
  }
}
